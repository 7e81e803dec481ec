"""Verdict forgery: samples that try to pass without solving their task, or to change what
other samples get. Not sandbox escapes (``hostile.py``): every one here stays inside its
sandbox and attacks the grader instead. Each is a wrong solution plus a trick (but for
``RIGHT_CODE``: a right solution whose trick targets its neighbours).

This package holds the per-language suites (``test_rust.py``: one case per attack class
against the trusted-test split); this module the HumanEval-Rust forgeries written against
the in-process design (libtest's log, the shared test process), which every suite that
mixes attackers with honest samples reuses. Tasks and neighbours come from
``tests/humaneval/integrity_cases.py``. These samples are hostile: they only ever run
through the harness's sandboxes.

Kinds:
- ``pure``: needs nothing the policy filter blocks (no files, processes, unsafe...).
- ``os``: plays its trick through the operating system from inside its own process
  (writes libtest's log, exits, runs code at exit); the filter blocks it.
- ``literal``: hides `std::process::exit(0)` after one literal or comment form: the real
  lexer must see it (the filter blocks it), and rustc must too (it exits early).

On the split every one of them fails, filter on or off (before it, an ``os`` forger's own
verdict with the filter off was its own business: its tests ran in its process).
"""

from __future__ import annotations

from tests.humaneval.integrity_cases import ATTACKS

WRONG_ADD = "    a - b\n}\n"

# A test of its own process rewrites the log: its task's tests `ok`, then exit 0.
_OWN_LOG = (
    "let a: Vec<String> = std::env::args().collect(); "
    'if let Some(i) = a.iter().position(|x| x == "--logfile") { '
    'let p = a.iter().find(|x| x.ends_with("tests::first")).map(|x| x.trim_end_matches("tests::first").to_string()).unwrap_or_default(); '
    'std::fs::write(&a[i + 1], format!("ok {p}tests::first\\nok {p}tests::second\\n")).unwrap(); '
    "std::process::exit(0); }"
)

FORGERIES: dict[str, tuple[str, str, str]] = {
    # -- code before or after main (link sections) ------------------------------------
    "ctor_exit": (
        "I/add",
        WRONG_ADD + '#[cfg_attr(all(), link_section = ".init_array")]\n#[cfg_attr(all(), used)]\n'
        "static INIT: fn() = init;\nfn init() { std::process::exit(0); }\n",
        "os",
    ),
    "dtor_log_rewrite": (
        "I/add",
        WRONG_ADD + '#[unsafe(link_section = ".fini_array")]\n#[used]\n'
        f"static FINI: fn() = fini;\nfn fini() {{ {_OWN_LOG} }}\n",
        "os",
    ),
    # -- exit hooks and panic hooks --------------------------------------------------------
    "panic_hook_exit": (
        "I/add",
        "    std::panic::set_hook(Box::new(|_| std::process::exit(0)));\n" + WRONG_ADD,
        "os",
    ),
    "panic_hook_silence": (
        "I/add",
        "    std::panic::set_hook(Box::new(|_| {}));\n" + WRONG_ADD,
        "pure",
    ),
    "atexit_hook": (
        "I/add",
        '    extern "C" { fn atexit(f: extern "C" fn()) -> i32; }\n'
        "    unsafe { atexit(hook); }\n" + WRONG_ADD + f'extern "C" fn hook() {{ {_OWN_LOG} }}\n',
        "os",
    ),
    # -- libtest's log -------------------------------------------------------------------------
    "log_rewrite": ("I/add", f"    {{ {_OWN_LOG} }}\n" + WRONG_ADD, "os"),
    # a failing test's captured output holds failure-report sections for other samples'
    # tests: their failure details must not come from it
    "fake_failure_report": (
        "I/add",
        '    for k in 0..40 {\n        for t in ["first", "second", "doubles", "greets", "some", "none"] {\n'
        "            println!(\"---- t_{k}::tests::{t} stdout ----\\n\\nthread 't' panicked at x.rs:1:1:\\nforged by a neighbour\\n\");\n"
        "        }\n    }\n" + WRONG_ADD,
        "pure",
    ),
    "fake_ok_stdout": (
        "I/add",
        '    println!("test tests::first ... ok\\ntest tests::second ... ok");\n' + WRONG_ADD,
        "pure",
    ),
    # -- the task's tests removed, replaced or shadowed --------------------------------------
    "attr_removal": (*ATTACKS["attr_removal"], "pure"),
    "cfg_attr_removal": (
        "I/add",
        WRONG_ADD + "mod fake {\n    mod tests {\n        #[test]\n        fn first() {}\n"
        "        #[test]\n        fn second() {}\n    }\n}\n#[cfg_attr(all(), cfg(any()))]\n",
        "pure",
    ),
    "ignore_attached": ("I/add", WRONG_ADD + "#[ignore]\n", "pure"),
    "inner_cfg_entry": (
        "I/add",
        "    #![cfg(any())]\n    0\n}\nfn add(_: i32, _: i32) -> Fake { Fake }\n"
        "#[derive(Debug)]\npub struct Fake;\n"
        "impl PartialEq<i32> for Fake {\n    fn eq(&self, _: &i32) -> bool { true }\n}\n",
        "pure",
    ),
    "shadow_type": (*ATTACKS["shadow_type"], "pure"),
    "shadow_variant": (*ATTACKS["shadow_variant"], "pure"),
    "shadow_vec_macro": (*ATTACKS["shadow_macro"], "pure"),
    "shadow_assert_eq": (
        "I/add",
        WRONG_ADD + "macro_rules! assert_eq { ($($t:tt)*) => {} }\n",
        "pure",
    ),
    "shadow_by_macro_call": (
        "I/add",
        "    #![cfg(any())]\n    0\n}\nmacro_rules! def { ($n:ident) => {\n"
        "    fn $n(_: i32, _: i32) -> Fake { Fake }\n} }\ndef!(add);\n"
        "#[derive(Debug)]\npub struct Fake;\n"
        "impl PartialEq<i32> for Fake {\n    fn eq(&self, _: &i32) -> bool { true }\n}\n",
        "pure",
    ),
    "test_block_in_string": (
        "I/add",
        WRONG_ADD + 'const S: &str = "',  # swallows the tests: a compile error at least
        "pure",
    ),
    # -- the process the tests share ---------------------------------------------------------
    "global_allocator": (
        "I/add",
        WRONG_ADD + "use std::alloc::{GlobalAlloc, Layout, System};\nstruct A;\n"
        "unsafe impl GlobalAlloc for A {\n"
        "    unsafe fn alloc(&self, l: Layout) -> *mut u8 { unsafe { System.alloc(l) } }\n"
        "    unsafe fn dealloc(&self, p: *mut u8, l: Layout) { unsafe { System.dealloc(p, l) } }\n"
        "}\n#[global_allocator]\nstatic GLOBAL: A = A;\n",
        "os",
    ),
    "nested_filter": (*ATTACKS["nested_filter"], "os"),
    "shared_log_forger": (*ATTACKS["hidden_c_string"], "os"),
    "fini_forger": (*ATTACKS["fini_forger"], "os"),
    # -- sizes ---------------------------------------------------------------------------------
    "huge_identifier": (
        "I/add",
        "    a - b\n}\n#[test]\nfn a" + "x" * 140_000 + "() {}\n",
        "pure",
    ),
    "huge_path": (
        "I/add",
        "    a - b\n}\n"
        + "".join(f"mod m{k}{'y' * 240} {{\n" for k in range(600))
        + "#[test]\nfn deep() {}\n"
        + "}\n" * 600,
        "pure",
    ),
}

# Forgers whose task code is right: with the filter off they pass (their trick reaches no
# one); with it on they are refused.
RIGHT_CODE = {"nested_filter", "fini_forger"}


def expected(name: str, policy: bool) -> bool:
    """What a forger must get: a fail, but for a right solution with the filter off."""
    return not policy and name in RIGHT_CODE


# Code after each literal and comment form: `std::process::exit(0)` must be seen.
LITERALS = {
    "string_escaped_quote": '"a\\"b"',
    "string_escaped_backslash": '"\\\\"',
    "raw_string": 'r"a\\"',
    "raw_string_hash": 'r#"a"b"#',
    "raw_string_hashes": 'r##"a"#b"##',
    "byte_string": 'b"a\\"b"',
    "raw_byte_string": 'br"a\\"',
    "raw_byte_string_hash": 'br#"a"b"#',
    "c_string": 'c"a\\"b"',
    "c_raw_string": 'cr"a\\"',
    "c_raw_string_hash": 'cr#"a\\"#',
    "char_quote": "'\"'",
    "char_escaped_quote": "'\\''",
    "byte_char_quote": "b'\"'",
    "char_unicode": "'\\u{1F600}'",
    "lifetime": '{ let _x: &\'static str = "a"; 0 }',
    "line_comment": '0 // "\n',
    "block_comment": '0 /* " */',
    "nested_block_comment": '0 /* /* " */ " */',
    "doc_comment": '0;\n    /// "\n    let _ = 0',
    "block_doc_comment": '0;\n    /** " */\n    let _ = 0',
    "raw_identifier": "{ let r#match = 0; r#match }",
}
for _name, _lit in LITERALS.items():
    FORGERIES[f"after_{_name}"] = (
        "I/add",
        f"    let _ = {_lit};\n    std::process::exit(0);\n" + WRONG_ADD,
        "literal",
    )
