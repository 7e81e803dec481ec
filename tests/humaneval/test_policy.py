import pytest

from tests.conftest import EXAMPLES
from vibes_eval.benchmarks.humaneval.rust import policy
from vibes_eval.benchmarks.humaneval.rust.rustsrc import strip_comments_and_strings
from vibes_eval.benchmarks.humaneval.rust.scan import Scan, TaskFacts
from vibes_eval.benchmarks.humaneval.tasks import load_problems


@pytest.mark.parametrize(
    "code,category",
    [
        ('let s = std::fs::read_to_string("/etc/shadow");', "filesystem"),
        ("use std::{collections::HashMap, fs};", "filesystem"),
        ('let f = File::open("x");', "filesystem"),
        ('let s = include_str!("/etc/passwd");', "filesystem"),
        ("std::process::exit(0);", "process"),
        ('let c = Command::new("sh");', "process"),
        ("use std::process;", "process"),
        ('let s = std::net::TcpStream::connect("127.0.0.1:1");', "network"),
        ('let u = UdpSocket::bind("0.0.0.0:0");', "network"),
        ("let p = unsafe { *std::ptr::null::<i32>() };", "unsafe"),
        ('extern "C" { fn abort(); }', "unsafe"),
        ("#[no_mangle] pub fn main2() {}", "unsafe"),
        ("#![feature(never_type)]", "unsafe"),
        ('std::env::set_var("A", "1");', "environment"),
        ("macro_rules! assert_eq { ($($t:tt)*) => {} }", "test tampering"),
    ],
)
def test_blocked(code: str, category: str) -> None:
    v = policy.check("    " + code + "\n}\n")
    assert v is not None and v.category == category


@pytest.mark.parametrize(
    "code",
    [
        "// we could use std::fs::read here, but do not\n    a + b\n}",
        '    let s = "std::process::exit(0)"; s.len()\n}',
        '    let s = r#"unsafe { File::open() }"#; s.len()\n}',
        "    /* nested /* std::net */ still comment */ a\n}",
        "    let c = 'x'; let d: &'static str = \"TcpStream\"; c\n}",
        "    let v: Vec<i32> = vec![]; v.iter().sum()\n}",
        "    fn helper<'a>(x: &'a str) -> &'a str { x }\n    helper(s)\n}",
    ],
)
def test_allowed_after_stripping(code: str) -> None:
    assert policy.check(code) is None


def test_strip_keeps_offsets_and_lines() -> None:
    src = 'let a = "x\\"y"; // c\n/* b */ let b = \'q\';'
    out = strip_comments_and_strings(src)
    assert len(out) == len(src) and out.count("\n") == src.count("\n")
    assert "x" not in out.replace("let", "") and "c" not in out.split("\n")[0][12:]


def test_violation_reports_line() -> None:
    v = policy.check("    let x = 1;\n    let y = 2;\n    std::process::abort();\n}")
    assert v is not None and v.line == 3


# A completion's macro calls the macro it is handed by name: `g!(include_str)` expands to
# `include_str!("main.rs")`, the program's own source with its tests (issue 24).
THROUGH_A_MACRO = 'macro_rules! g {{ ($m:ident) => {{ $m!("main.rs") }} }}\n    g!({name});'


@pytest.mark.parametrize(
    "name,category",
    [
        ("include_str", "filesystem"),
        ("include_bytes", "filesystem"),
        ("include", "filesystem"),
        ("r#include_str", "filesystem"),
        ("asm", "unsafe"),
        ("global_asm", "unsafe"),
        ("env", "environment"),
        ("option_env", "environment"),
    ],
)
def test_include_str_through_a_macro_is_refused(name: str, category: str) -> None:
    v = policy.check("    " + THROUGH_A_MACRO.format(name=name) + "\n}\n")
    assert v is not None and v.category == category


def test_include_str_through_a_macro_is_refused_as_read_in_its_program() -> None:
    """The same attack through the reading a run uses (the completion in its program)."""
    task = load_problems(EXAMPLES / "sanity" / "problems.jsonl")["Sanity/0"]
    code = "    " + THROUGH_A_MACRO.format(name="include_str") + "\n    0\n}\n"
    scan = Scan.of(task, TaskFacts.of(task), code)
    v = policy.check(scan.code, scan.bare, scan.clean)
    assert v is not None and v.category == "filesystem" and v.line == 2


@pytest.mark.parametrize(
    "code",
    [
        # without a macro of its own, these names are only identifiers
        "    let include = 1; let asm = 2; let env = 3; include + asm + env\n}",
        # with one, the module `std::env` is still not the macro `env!`
        "    macro_rules! twice { ($e:expr) => { $e * 2 } }\n"
        "    use std::env;\n    let n = std::env::args().count() + env::args().count();\n"
        "    twice!(n)\n}",
    ],
)
def test_macro_names_as_plain_identifiers_are_allowed(code: str) -> None:
    assert policy.check(code) is None


def test_env_macro_is_refused() -> None:
    v = policy.check('    let home = env!("HOME"); home.len()\n}')
    assert v is not None and v.category == "environment"


@pytest.mark.parametrize(
    "code",
    [
        "    use std as s;\n    use s::fs as q;\n    0\n}\n",  # red team A6
        "    use ::core as c;\n    0\n}\n",
        "    use std::{self as s, io};\n    0\n}\n",
        "    extern crate alloc as a;\n    0\n}\n",
    ],
)
def test_an_alias_of_std_that_hides_its_paths_is_refused(code: str) -> None:
    v = policy.check(code)
    assert v is not None and v.rule == "alias of std/core/alloc", v


def test_casts_are_not_aliases() -> None:
    assert policy.check("    let y = (n as i64, std::i32::MAX as f64);\n    0\n}\n") is None
