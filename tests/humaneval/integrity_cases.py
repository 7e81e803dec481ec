"""Tasks, neighbours and attackers for the verdict-integrity tests (issue 16).

Each attack class comes with the samples that show it: the attacker and the neighbours
whose verdicts it went for. ``expected`` says what each sample must get, in every mode
(batched and alone, policy filter on and off): ``True`` passes, ``False`` fails. Since the
trusted-test split, an attacker that plays its trick through the operating system fails
with the filter off too, unless its own task code is right (its trick targets only its
neighbours, out of its reach): it then passes (``attacker_expected``).

These samples are hostile: they only ever run through the harness's sandboxes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

TESTS_MOD = "#[cfg(test)]\nmod tests {{\n    use super::*;\n{body}}}\n"


def _tests(*fns: tuple[str, str]) -> str:
    body = "".join(f"    #[test]\n    fn {name}() {{\n{code}    }}\n" for name, code in fns)
    return TESTS_MOD.format(body=body)


PROBLEMS = {
    "I/add": (
        "fn add(a: i32, b: i32) -> i32 {\n",
        _tests(
            ("first", "        assert_eq!(add(1, 2), 3);\n"),
            ("second", "        assert_eq!(add(-4, 4), 0);\n"),
        ),
    ),
    "I/doubled": (
        "fn doubled(v: Vec<i32>) -> Vec<i32> {\n",
        _tests(("doubles", "        assert_eq!(doubled(vec![1, 2]), vec![2, 4]);\n")),
    ),
    "I/greet": (
        "fn greet(name: &str) -> String {\n",
        _tests(("greets", '        assert_eq!(greet("x"), "hello x");\n')),
    ),
    "I/first": (
        "fn first(v: &[i32]) -> Option<i32> {\n",
        _tests(
            ("some", "        assert_eq!(first(&[3, 4]), Some(3));\n"),
            ("none", "        assert_eq!(first(&[]), None);\n"),
        ),
    ),
}

CORRECT = {
    "I/add": "    a + b\n}\n",
    "I/doubled": "    v.iter().map(|x| x * 2).collect()\n}\n",
    # `s + &n` needs the only `Add` impl of String: another module's impl breaks it
    "I/greet": '    let s = String::from("hello ");\n    let n = name.to_string();\n    s + &n\n}\n',
    "I/first": "    v.first().copied()\n}\n",
}
WRONG = {
    "I/add": "    a - b\n}\n",
    "I/doubled": "    v\n}\n",
    "I/greet": "    name.to_string()\n}\n",
    "I/first": "    v.last().copied()\n}\n",
}
# Runtime-risky but harmless: before the fix such a sample's tests ran in a process of
# their own, from the batch binary, with a substring filter.
WRONG_ISOLATED = '    let _ = std::env::var("HOME");\n    a - b\n}\n'

# The shared log forger's payload: every test named on the command line `ok`, then exit 0.
_FORGE = (
    "let a: Vec<String> = std::env::args().collect(); "
    'if let Some(i) = a.iter().position(|x| x == "--logfile") { '
    'let s: String = a.iter().skip_while(|x| *x != "--exact").skip(1).map(|n| format!("ok {n}\\n")).collect(); '
    "std::fs::write(&a[i + 1], s).unwrap(); std::process::exit(0); }"
)

# For a sample run with the filter `t_5::`: its tests `ok` in the log, then exit 0.
_PREFIX_FORGE = (
    "        let a: Vec<String> = std::env::args().collect();\n"
    '        let log = a[a.iter().position(|x| x == "--logfile").unwrap() + 1].clone();\n'
    "        let p = a[1].clone();\n"
    '        std::fs::write(&log, format!("ok {p}tests::first\\nok {p}tests::second\\n")).unwrap();\n'
    "        std::process::exit(0);\n"
)

ATTACKS: dict[str, tuple[str, str]] = {
    # class 1: a trailing attribute removes the task's tests; a module of the attacker's
    # own has tests of the same leaf names
    "attr_removal": (
        "I/add",
        "    a - b\n}\nmod fake {\n    mod tests {\n        #[test]\n        fn first() {}\n"
        "        #[test]\n        fn second() {}\n    }\n}\n#[cfg(any())]\n",
    ),
    # class 1: names the tests resolve, defined by the completion
    "shadow_type": (
        "I/greet",
        "    String\n}\n#[derive(Debug)]\npub struct String;\n"
        "impl PartialEq<&str> for String {\n    fn eq(&self, _: &&str) -> bool { true }\n}\n",
    ),
    "shadow_variant": (
        "I/first",
        "    std::option::Option::None\n}\n#[derive(Debug)]\npub enum E { Some(i32), None }\n"
        "use E::*;\nimpl PartialEq<E> for Option<i32> {\n"
        "    fn eq(&self, _: &E) -> bool { true }\n}\n",
    ),
    "shadow_macro": (
        "I/doubled",
        "    Vec::new()\n}\nmacro_rules! vec { ($($t:tt)*) => { Vec::new() } }\n",
    ),
    # class 2: a C raw string the old stripper read as a string running to the `"` in
    # the comment, hiding the payload from the policy filter and the batching rules
    "hidden_c_string": (
        "I/add",
        f'    forge();\n    a - b\n}}\nfn forge() {{\n    let _ = cr#"\\"#; {_FORGE} // "\n}}\n',
    ),
    # class 3: a destructor in .fini_array (no `#[link_section` for the old rules to see)
    # rewrites the shared process's log as it exits
    "fini_forger": (
        "I/add",
        '    a + b\n}\n#[cfg_attr(all(), link_section = ".fini_array")]\n'
        "#[cfg_attr(all(), used)]\nstatic FINI: fn() = fini;\n"
        f"fn fini() {{\n    {_FORGE.replace('std::process::exit(0);', '')}\n}}\n",
    ),
    # class 4: an impl of a std trait for a std type changes inference in every module
    "impl_reach": (
        "I/greet",
        "    String::new()\n}\npub struct Local;\n"
        "impl std::ops::Add<Local> for String {\n    type Output = String;\n"
        "    fn add(self, _: Local) -> String { self }\n}\n",
    ),
    # class 5: modules named like other samples' modules: a substring filter `t_5::` runs
    # `t_1::t_5::aaa` in sample 5's own process, which writes its log and exits
    "nested_filter": (
        "I/add",
        "    a + b\n}\n"
        + "".join(
            f"mod t_{k} {{\n    #[test]\n    fn aaa() {{\n{_PREFIX_FORGE}    }}\n}}\n"
            for k in range(2, 40)
        ),
    ),
    # class 6: a test name longer than one argument may be (E2BIG)
    "huge_name": ("I/add", "    a + b\n}\n#[test]\nfn a" + "x" * 140_000 + "() {}\n"),
}

# Which attack each class test runs, and its neighbours (task, "correct"|"wrong"|"isolated").
CLASSES: dict[str, tuple[list[str], list[tuple[str, str]]]] = {
    "1_test_removal": (["attr_removal"], [("I/add", "correct"), ("I/add", "wrong")]),
    "1_shadowing": (
        ["shadow_type", "shadow_variant", "shadow_macro"],
        [("I/greet", "correct"), ("I/first", "correct"), ("I/doubled", "wrong")],
    ),
    "2_hidden_code": (
        ["hidden_c_string"],
        [("I/add", "correct"), ("I/add", "wrong"), ("I/greet", "wrong"), ("I/first", "wrong")],
    ),
    "3_link_effects": (
        ["fini_forger"],
        [("I/add", "correct"), ("I/add", "wrong"), ("I/greet", "wrong"), ("I/first", "wrong")],
    ),
    "4_crate_wide_impls": (
        ["impl_reach"],
        [("I/greet", "correct"), ("I/add", "correct"), ("I/greet", "wrong")],
    ),
    "5_substring_filter": (
        ["nested_filter"],
        [("I/add", "correct")] + [("I/add", "isolated")] * 4,
    ),
    "6_oversize": (
        ["huge_name"],
        [("I/add", "correct"), ("I/add", "wrong"), ("I/greet", "correct"), ("I/first", "correct")],
    ),
}

# Attackers that play their trick through the operating system: the filter refuses them.
OS_LEVEL = {"hidden_c_string", "fini_forger", "nested_filter"}
# Attackers whose task code is right: they must pass (with the filter on too).
CORRECT_ATTACKERS = {"huge_name": True}
# OS-level attackers whose task code is right: they pass where the filter lets them run.
RIGHT_OS_LEVEL = {"fini_forger", "nested_filter"}


def attacker_expected(name: str, policy: bool) -> bool:
    if name in OS_LEVEL:
        return not policy and name in RIGHT_OS_LEVEL
    return CORRECT_ATTACKERS.get(name, False)


@dataclass(frozen=True)
class Row:
    task_id: str
    completion: str
    case: str
    expected: bool | None  # None: not asserted


def rows(cls: str, policy: bool) -> list[Row]:
    """The samples of one class test, the attacker second (so that samples after it sit in
    modules `t_2`, `t_3`... of a batch)."""
    attacks, neighbours = CLASSES[cls]
    out: list[Row] = []
    for n, (task, kind) in enumerate(neighbours):
        code = {"correct": CORRECT, "wrong": WRONG}.get(kind, {}).get(task, WRONG_ISOLATED)
        out.append(Row(task, code, f"{kind}_{task}_{n}", kind == "correct"))
    for k, name in enumerate(attacks):
        task, code = ATTACKS[name]
        out.insert(1 + k, Row(task, code, name, attacker_expected(name, policy)))
    return out


def write_problems(path: Path) -> Path:
    with path.open("w") as fh:
        for tid, (prompt, test) in PROBLEMS.items():
            fh.write(json.dumps({"task_id": tid, "prompt": prompt, "test": test,
                                 "canonical_solution": CORRECT[tid], "entry_point": ""}) + "\n")  # fmt: skip
    return path


def write_samples(path: Path, samples: list[Row]) -> Path:
    with path.open("w") as fh:
        for r in samples:
            fh.write(json.dumps({"task_id": r.task_id, "completion": r.completion, "case": r.case}) + "\n")  # fmt: skip
    return path
