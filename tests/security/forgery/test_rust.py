"""HumanEval-Rust forgery suite against the trusted-test split (docs/integrity.md): one or
more cases per attack class, each a wrong solution plus a trick (named after the attack it
stops), run batched and alone with the policy filter on and off, among correct and wrong
neighbours of every task. Every forger must fail in every mode, every neighbour get its
own verdict (correct ones pass, wrong ones fail), nobody an ``infra_error``, and batched
and lone verdicts (reason and detail) must be the same.

The classes: reading the tests at compile time, forging the result channel (libtest's log,
the done marker), ending early with 0, printing fake frames or markers, reaching a
neighbour of a batch, and hostile frames sent to the test program's stub. Before the split
the first three passed with the filter off (the tests ran in the sample's process and read
its own source: ``read_tests_by_macro`` embeds it with the tests); what holds them now is
that the tests run elsewhere, not the filter.

These samples are hostile: they only ever run through the harness's sandboxes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SANDBOX, batch_modes
from tests.humaneval import integrity_cases as cases
from tests.humaneval.integrity_run import evaluate, wrong_verdicts

WRONG = "    a - b\n}\n"  # I/add: add(1, 2) == 3, add(-4, 4) == 0
# Generous: `frame_huge` pushes 70 MiB through a 64 KiB pipe, which on a loaded machine
# takes seconds; a timeout in one mode and not the other would be a different verdict.
TIMEOUT_S = 30.0

# Reads the text of `path` at compile time through a macro handed `include_str` by name
# (no `include_str!` for the filter to see when it is off), and answers from the tests'
# asserts when that text holds them.
_FROM_SOURCE = (
    "    macro_rules! g { ($m:ident) => { $m!(PATH) } }\n"
    "    let src: &str = g!(include_str);\n"
    '    let key = format!("add({}, {}), ", a, b);\n'
    "    match src.find(&key) {\n"
    "        Some(at) => {\n"
    "            let rest = &src[at + key.len()..];\n"
    "            rest[..rest.find(')').unwrap()].trim().parse().unwrap()\n"
    "        }\n"
    "        None => a - b,\n"
    "    }\n}\n"
)
# A frame written on the channel itself, ahead of the server's own answer. The server
# moves the channel off fd 1 (what the candidate prints goes to its stderr), so the frame
# goes to every descriptor it may be on. Then the right answer: the stub's refusal of the
# frame is all that can fail the sample.
_RAW = (
    "    use std::io::Write;\n    use std::os::fd::FromRawFd;\n"
    "    for fd in 3..16 {\n"
    "        let mut f = unsafe { std::fs::File::from_raw_fd(fd) };\n"
    "        let _ = f.write_all(BYTES);\n        std::mem::forget(f);\n    }\n"
    "    a + b\n}\n"
)


def raw(frame: str, task: str = "I/add") -> tuple[str, str]:
    """A forger that sends ``frame`` (Rust bytes expression) before answering rightly."""
    right = {"I/add": "a + b", "I/doubled": "v.iter().map(|x| x * 2).collect()",
             "I/first": "v.first().copied()", "I/greet": 'format!("hello {}", name)'}  # fmt: skip
    return task, _RAW.replace("BYTES", frame).replace("a + b", right[task])


_DEEP = '&[&b"\\x02V ret "[..], &[b\'[\'; 100_000][..], &b"\\n"[..]].concat()'

FORGERS: dict[str, tuple[str, str]] = {
    # -- reading the tests at compile time -----------------------------------------------
    "read_tests_by_macro": ("I/add", _FROM_SOURCE.replace("PATH", '"main.rs"')),
    "read_tests_root": ("I/add", _FROM_SOURCE.replace("PATH", '"tests.rs"')),
    "read_tests_path_module": (
        "I/add",
        WRONG + '#[path = "tests.rs"]\nmod stolen;\n#[path = "k_0.rs"]\nmod stolen_task;\n',
    ),
    "read_tests_include": ("I/add", '    include!("../tests.rs");\n' + WRONG),
    # -- forging the result channel --------------------------------------------------------
    "forge_done_marker": (
        "I/add",
        '    eprintln!("\\x02T ok tests::first\\n\\x02T ok tests::second\\n\\x02T done");\n'
        '    println!("\\x02T ok tests::first\\n\\x02T ok tests::second\\n\\x02T done");\n'
        "    std::process::exit(0)\n}\n",
    ),
    "forge_libtest_log": (
        "I/add",
        "    use std as s;\n    use s::fs as q;\n"
        '    for d in [".", "..", "/tmp"] {\n'
        "        if let Ok(es) = q::read_dir(d) { for e in es.flatten() {\n"
        '            let _ = q::write(e.path(), "ok tests::first\\nok tests::second\\n");\n'
        "        } }\n    }\n"
        '    eprintln!("\\x02T done");\n    s::process::exit(0)\n}\n',
    ),
    # -- ending early with 0 ------------------------------------------------------------------
    "exit0_when_called": ("I/add", "    std::process::exit(0)\n}\n"),
    "exit0_in_panic_hook": (
        "I/add",
        "    std::panic::set_hook(Box::new(|_| std::process::exit(0)));\n"
        '    panic!("no answer")\n}\n',
    ),
    "exit0_before_main": (
        "I/add",
        WRONG + '#[unsafe(link_section = ".init_array")]\n#[used]\n'
        'static INIT: extern "C" fn() = init;\nextern "C" fn init() { std::process::exit(0); }\n',
    ),
    "exit0_at_exit": (
        "I/add",
        '    extern "C" { fn atexit(f: extern "C" fn()) -> i32; }\n'
        "    unsafe { atexit(bye); }\n    std::process::exit(1)\n}\n"
        'extern "C" fn bye() { eprintln!("\\x02T done"); std::process::exit(0); }\n',
    ),
    "abort_in_panic_hook": (
        "I/add",
        "    std::panic::set_hook(Box::new(|_| std::process::abort()));\n"
        '    if a > 0 { panic!("no") }\n    a - b\n}\n',
    ),
    "exit0_from_thread": (
        "I/add",
        "    std::thread::spawn(|| std::process::exit(0));\n"
        "    std::thread::sleep(std::time::Duration::from_secs(1));\n    a - b\n}\n",
    ),
    # -- fake frames and markers ---------------------------------------------------------------
    "fake_frame_printed": ("I/add", '    println!("\\x02V ret 3\\n\\x02V ret 0");\n    a - b\n}\n'),
    "fake_markers_everywhere": (
        "I/add",
        '    println!("test tests::first ... ok\\n\\x02T ok tests::first\\n\\x02T done");\n'
        '    eprintln!("test result: ok. 2 passed\\n\\x02T done");\n    a - b\n}\n',
    ),
    "fake_frame_without_newline": ("I/add", '    print!("partial \\x02V ret 3");\n    a - b\n}\n'),
    # -- reaching a neighbour in a batch ------------------------------------------------------
    "neighbour_call": ("I/add", "    crate::t_0::add(a, b)\n}\n"),
    "neighbour_source": ("I/add", _FROM_SOURCE.replace("PATH", '"t_0.rs"')),
    "neighbour_files": (
        "I/add",
        '    let mut found = 0;\n    for d in ["..", "../..", "/proc/self/cwd/.."] {\n'
        "        if let Ok(es) = std::fs::read_dir(d) { found += es.count(); }\n    }\n"
        "    a - b + found as i32 * 0\n}\n",
    ),
    # -- hostile frames to the stub -------------------------------------------------------------
    "frame_nan_for_int": raw('b"\\x02V ret \\"NaN\\"\\n"'),
    "frame_float_for_int": raw('b"\\x02V ret 3.0\\n"'),
    "frame_string_for_int": raw('b"\\x02V ret \\"3\\"\\n"'),
    "frame_out_of_range": raw('b"\\x02V ret 4294967299\\n"'),
    "frame_malformed": raw('b"\\x02V ret [3,\\n"'),
    "frame_unknown_kind": raw('b"\\x02V ok 3\\n"'),
    "frame_raise_not_string": raw('b"\\x02V raise 3\\n"'),
    "frame_invalid_utf8": raw('b"\\x02V ret \\"\\xff\\"\\n"'),
    "frame_deep": raw(_DEEP, "I/doubled"),
    # a right answer padded past the 64 MiB a frame may have
    "frame_huge": raw('&[&b"\\x02V ret 3"[..], &vec![b\' \'; 70 << 20][..], &b"\\n"[..]].concat()'),
    "frame_wrong_shape_option": raw('b"\\x02V ret 3\\n"', "I/first"),
    "frame_vec_mixed": raw('b"\\x02V ret [2,\\"4\\"]\\n"', "I/doubled"),
    "frame_tagged_for_string": raw(
        'b"\\x02V ret {\\"$t\\":\\"String\\",\\"v\\":\\"hello x\\"}\\n"', "I/greet"
    ),
    "frame_call_to_the_test": raw('b"\\x02V call add [1,2]\\n"'),
}


def rows() -> list[cases.Row]:
    """Neighbours first (module `t_0` is a correct I/add in every batch), then every
    forger, then the neighbours again."""
    out = []
    for tid in cases.PROBLEMS:
        out.append(cases.Row(tid, cases.CORRECT[tid], f"correct_{tid}", True))
        out.append(cases.Row(tid, cases.WRONG[tid], f"wrong_{tid}", False))
    out += [cases.Row(t, c, name, False) for name, (t, c) in FORGERS.items()]
    out += [cases.Row(r.task_id, r.completion, r.case + "_again", r.expected) for r in out[:8]]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("policy", [True, False], ids=["policy", "no-policy"])
def test_no_forger_passes_batched_or_alone(tmp_path: Path, policy: bool) -> None:
    samples = rows()
    verdicts = {}
    for batch in batch_modes(policy):
        results = evaluate(
            tmp_path, samples, batch=batch, policy=policy, sandbox=SANDBOX, timeout=TIMEOUT_S
        )
        mode = "batch" if batch else "alone"
        assert not wrong_verdicts(samples, results), f"{mode}: {wrong_verdicts(samples, results)}"
        for name in FORGERS:
            assert results[name].details.get("trust") == "split", (name, results[name].details)
            if name.startswith("frame_") and not policy:  # refused by the stub's decoding
                assert "a malformed answer from the candidate" in results[name].detail, (
                    name, results[name].detail
                )  # fmt: skip
        verdicts[mode] = {c: (r.passed, r.reason, r.detail) for c, r in results.items()}
    alone = verdicts.get("alone", verdicts["batch"])  # batched only: filter on, default tier
    differ = {c: (v, alone[c]) for c, v in verdicts["batch"].items() if v != alone[c]}
    assert not differ


def test_every_class_has_a_case() -> None:
    prefixes = ("read_tests", "forge_", "exit0", "fake_", "neighbour_", "frame_")
    for prefix in prefixes:
        assert any(name.startswith(prefix) for name in FORGERS), prefix
