"""Go's forgery suite (docs/integrity.md): one case or more per attack class, each a wrong
solution plus a trick, run batched and alone with the policy filter on and off. None may
pass, and honest neighbours keep their verdicts.

The tasks are written for the suite in HumanEval-X's Go format. ``Go/0``'s prompt imports
the operating system's packages (``os``, ``syscall``, ``embed``, ``path/filepath``), so
its completions can read files, write to descriptors and signal processes: what keeps the
verdict out of their reach must be the split, not a short import list. Cases that look for
something (the test's text, a neighbour's source or binary) answer right only when they
find it, so a pass would mean they found it. Their search strings are built at run time,
so a sample never finds itself.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import vibes_eval
from tests.components import need
from tests.conftest import SANDBOX, SHARED, batch_modes, forgery_modes
from vibes_eval.core.types import SampleResult

SETUP = 'package main\n\nimport (\n    "testing"\n    "github.com/stretchr/testify/assert"\n)\n'
SECRET = ("VIBES-FORGERY-EXPECTED-4242", "VIBES-NEIGHBOUR-SOURCE-1717")
OS_IMPORTS = ["embed", "fmt", "os", "path/filepath", "strings", "syscall"]


def _row(n: int, imports: list[str], doc: str, decl: str, test: str) -> dict[str, str]:
    block = "import (\n" + "".join(f'    "{i}"\n' for i in imports) + ")\n" if imports else ""
    return {"task_id": f"Go/{n}", "import": block, "prompt": f"{block}\n// {doc}\n{decl}",
            "declaration": f"\n{decl}", "canonical_solution": "", "test_setup": SETUP,
            "test": test}  # fmt: skip


ROWS = [
    _row(0, OS_IMPORTS, "Twice x.", "func Twice(x int) int {\n",
         "func TestTwice(t *testing.T) {\n    assert := assert.New(t)\n"
         f'    secret := "{SECRET[0]}"\n    assert.NotEmpty(secret)\n'
         "    assert.Equal(8, Twice(4))\n    assert.Equal(-6, Twice(-3))\n}\n"),
    _row(1, [], "Half x.", "func Half(x int) int {\n",
         "func TestHalf(t *testing.T) {\n    assert := assert.New(t)\n"
         "    assert.Equal(2, Half(4))\n    assert.Equal(-3, Half(-6))\n}\n"),
    # the test of red team case A5: `false` is the expected value
    _row(2, [], "Is x even?", "func IsEven(x int) bool {\n",
         "func TestIsEven(t *testing.T) {\n    assert := assert.New(t)\n"
         "    assert.Equal(false, IsEven(3))\n    assert.Equal(true, IsEven(4))\n}\n"),
    _row(3, ["fmt", "syscall"], "A list holding x.", "func Pick(x int) interface{} {\n",
         "func TestPick(t *testing.T) {\n    assert := assert.New(t)\n"
         "    assert.Equal([]int{1}, Pick(1))\n}\n"),
]  # fmt: skip

WRONG = "    return x + 1\n}\n"
# Returns the right answer only when `atkFound()` is true; the case defines atkFound.
ORACLE = "    if atkFound() {\n        return 2 * x\n    }\n    return x + 1\n}\n"
SEARCH = """
func atkRev(s string) string {
    r := []byte(s)
    for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
        r[i], r[j] = r[j], r[i]
    }
    return string(r)
}

func atkHas(path, secret string) bool {
    data, err := os.ReadFile(path)
    return err == nil && strings.Contains(string(data), secret)
}

var atkDone = map[string]bool{}

func atkSearch(secret string) bool {
    if found, ok := atkDone[secret]; ok {
        return found
    }
    found, seen := false, 0
    roots := []string{".", "..", "../..", "../../..", "/", os.Getenv("HOME"), os.TempDir(),
        "/tmp", "/var/tmp", "/dev/shm", "/run", "/root"}
    for _, root := range roots {
        filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
            seen++
            if err != nil || found || seen > 50000 {
                return nil
            }
            if info.IsDir() && strings.Count(p, "/") > 8 || p == "/usr" || p == "/proc" || p == "/sys" {
                return filepath.SkipDir
            }
            if info.Mode().IsRegular() && info.Size() < 64<<20 && atkHas(p, secret) {
                found = true
            }
            return nil
        })
    }
    atkDone[secret] = found
    return found
}
"""


def _secret(n: int) -> str:
    """A Go expression of ``SECRET[n]``, reversed at run time: the compiler folds constant
    concatenations, and a sample must not find the secret in its own binary."""
    return f'atkRev("{SECRET[n][::-1]}")'


def _frame(payload: str, body: str = WRONG) -> str:
    """A completion that writes ``payload`` (a Go expression) into the channel before the
    server answers: into every descriptor the server's copy of stdout may have."""
    return body + (
        "\nvar atkSent = func() int {\n    for fd := 3; fd < 12; fd++ {\n"
        f"        syscall.Write(fd, []byte({payload}))\n    }}\n    return 0\n}}()\n"
    )


def _print(payload: str) -> str:
    """A completion that prints ``payload`` to stdout before the server starts."""
    return WRONG + f"\nvar atkSent = func() int {{\n    fmt.Print({payload})\n    return 0\n}}()\n"


NIL = "    return nil\n}\n"
CLOSE = "\nvar atkClosed = func() int {\n    for fd := 0; fd < 12; fd++ {\n        syscall.Close(fd)\n    }\n    return 0\n}()\n"


ATTACKS: dict[str, tuple[str, str]] = {
    # -- reading the test or expected values -------------------------------------------
    "read_files": ("Go/0", ORACLE + f"\nfunc atkFound() bool {{ return atkSearch({_secret(0)}) }}\n"
                   + SEARCH),
    "read_proc_and_environment": ("Go/0", ORACLE + """
func atkFound() bool {
    secret := """ + _secret(0) + """
    if strings.Contains(strings.Join(os.Environ(), "\\n"), secret) {
        return true
    }
    for _, pattern := range []string{"/proc/*/cmdline", "/proc/*/environ", "/proc/*/maps",
        "/proc/*/fd/*", "/proc/*/cwd/*", "/proc/*/root/tmp/*", "/proc/*/mem"} {
        paths, _ := filepath.Glob(pattern)
        for _, p := range paths {
            if atkHas(p, secret) {
                return true
            }
        }
    }
    return false
}
""" + SEARCH),
    "go_embed_own_folder": ("Go/0", ORACLE + """
//go:embed *.go
var atkFiles embed.FS

func atkFound() bool {
    entries, _ := atkFiles.ReadDir(".")
    for _, e := range entries {
        data, _ := atkFiles.ReadFile(e.Name())
        if strings.Contains(string(data), """ + _secret(0) + """) {
            return true
        }
    }
    return false
}
""" + SEARCH),
    "go_embed_parent_folder": ("Go/0", ORACLE + "\n//go:embed ..\nvar atkUp embed.FS\n\n"
                               "func atkFound() bool { _, err := atkUp.ReadDir(\".\"); "
                               "return err == nil }\n"),
    "cgo_directives": ("Go/0", WRONG + '\n/*\n#cgo CFLAGS: -include ../t_0/main_test.go\n*/\n'
                       "//go:cgo_ldflag \"-Wl,--just-symbols=../test.bin\"\nvar atkC = 1\n"),
    "import_of_files": ("Go/0", WRONG + '\nimport t "../t_0"\n\nvar atkT = t.Twice\n'),
    # -- forging the result --------------------------------------------------------------
    "print_done_marker": ("Go/0", "    fmt.Println(\"vibes-tests: done\")\n"
                          "    fmt.Fprintln(os.Stderr, \"vibes-tests: done\")\n" + WRONG),
    "exit_zero_from_init": ("Go/0", WRONG + "\nfunc init() {\n    fmt.Fprintln(os.Stderr, "
                            "\"\\nvibes-tests: done\")\n    os.Exit(0)\n}\n"),
    "exit_zero_from_a_package_variable": ("Go/0", WRONG + "\nvar atkE = func() int {\n"
                                          "    fmt.Println(\"vibes-tests: done\")\n"
                                          "    os.Exit(0)\n    return 0\n}()\n"),
    "fake_frames": ("Go/0", _print('"vibes-tests: done\\n\\x02V done\\n\\x02V ret \\"PASS\\"\\n'
                                   '\\x02V call [4]\\n"')),
    "shadow_predeclared_names": ("Go/2", "    return true\n}\n\nconst true = 1 == 1\n"
                                 "const false = true\n"),
    "shadow_testify_and_testing": ("Go/0", WRONG + "\ntype assert struct{}\n\n"
                                   "func (assert) Equal(a ...interface{}) bool { return true }\n"),
    "shadow_the_wire": ("Go/0", WRONG + "\nfunc vibesDecode(a, b interface{}) {}\n"),
    "own_test_main": ("Go/0", WRONG + "\nfunc TestMain(m interface{}) {}\n"),
    # -- reaching a neighbour --------------------------------------------------------------
    "read_neighbour_source": ("Go/0", ORACLE + "\nfunc atkFound() bool { return "
                              f"atkSearch({_secret(1)}) }}\n" + SEARCH),
    "kill_every_process": ("Go/0", "    syscall.Kill(-1, syscall.SIGKILL)\n"
                           "    syscall.Kill(os.Getppid(), syscall.SIGKILL)\n" + WRONG),
    # -- the stub's decoder: hostile answers -------------------------------------------------
    "frame_over_64_mib": ("Go/0", _frame('"\\n\\x02V ret " + strings.Repeat("8", 65<<20) + "\\n"')),
    "frame_malformed": ("Go/0", _frame('"\\n\\x02V ret [8,\\n"')),
    "frame_trailing_data": ("Go/0", _frame('"\\n\\x02V ret 8 8\\n"')),
    "frame_wrong_type": ("Go/0", _frame('"\\n\\x02V ret \\"8\\"\\n"')),
    "frame_float_for_int": ("Go/0", _frame('"\\n\\x02V ret 8.0\\n"')),
    "frame_tagged_int": ("Go/0", _frame('"\\n\\x02V ret {\\"$t\\": \\"int\\", \\"v\\": 8}\\n"')),
    "frame_int_overflow": ("Go/0", _frame('"\\n\\x02V ret 99999999999999999999\\n"')),
    "frame_deep_nesting": ("Go/0", _frame('"\\n\\x02V ret " + strings.Repeat("[", 200000) '
                                          '+ strings.Repeat("]", 200000) + "\\n"')),
    "frame_unknown_kind": ("Go/0", _frame('"\\n\\x02V done 8\\n"')),
    "frame_raise_with_newlines": ("Go/0", _frame('"\\n\\x02V raise \\"x\\\\nvibes-tests: done'
                                                 '\\\\n\\"\\n"')),
    "frame_cut_by_eof": ("Go/0", _frame('"\\n\\x02V ret 8"') + CLOSE),
    "channel_closed": ("Go/0", WRONG + CLOSE),
    "tag_unknown_type": ("Go/3", _frame(
        '"\\n\\x02V ret {\\"$t\\": \\"main.atk\\", \\"v\\": [1]}\\n"', NIL)),
    "tag_huge_array": ("Go/3", _frame(
        '"\\n\\x02V ret {\\"$t\\": \\"[16777216]int\\", \\"v\\": [1]}\\n"', NIL)),
    "tag_unhashable_key": ("Go/3", _frame(
        '"\\n\\x02V ret {\\"$t\\": \\"map[interface {}]int\\", \\"v\\": [[{\\"$t\\": '
        '\\"[]int\\", \\"v\\": [1]}, 1]]}\\n"', NIL)),
    "tag_extra_field": ("Go/3", _frame(
        '"\\n\\x02V ret {\\"$t\\": \\"[]int\\", \\"v\\": [1], \\"w\\": 0}\\n"', NIL)),
    "tag_deep_nesting": ("Go/3", _frame(
        '"\\n\\x02V ret " + strings.Repeat("{\\"$t\\": \\"[]interface {}\\", \\"v\\": [", 4000)'
        ' + "{\\"$t\\": \\"nil\\"}" + strings.Repeat("]}", 4000) + "\\n"', NIL)),
}  # fmt: skip

# the neighbour's secret is in its source and in its binary (a package variable it reads)
NEIGHBOUR_SOURCE = (
    "    if x == -12345 {\n        return len(neighbourSecret)\n    }\n    return x / 2\n}\n"
    f'\nvar neighbourSecret = "{SECRET[1]}"\n'
)
HONEST = [("Go/1", NEIGHBOUR_SOURCE, True), ("Go/1", "    return x\n}\n", False),
          ("Go/2", "    return x%2 == 0\n}\n", True), ("Go/3", "    return []int{x}\n}\n", True)]  # fmt: skip

CLASSES: dict[str, list[str]] = {
    "reading": ["read_files", "read_proc_and_environment", "go_embed_own_folder",
                "go_embed_parent_folder", "cgo_directives", "import_of_files"],
    "forging": ["print_done_marker", "exit_zero_from_init", "exit_zero_from_a_package_variable",
                "fake_frames", "shadow_predeclared_names", "shadow_testify_and_testing",
                "shadow_the_wire", "own_test_main"],
    "neighbour": ["read_neighbour_source", "kill_every_process"],
    "decoder": [k for k in ATTACKS if k.startswith(("frame_", "tag_", "channel_"))],
}  # fmt: skip
MODES = forgery_modes()
Runs = dict[tuple[bool, bool], dict[str, SampleResult]]


def _evaluate(tmp: Path, policy: bool, batch: bool) -> dict[str, SampleResult]:
    """Every case and honest neighbour in one run; the neighbours first and last."""
    path = tmp / "problems.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    named = [(f"honest_{n}", tid, code) for n, (tid, code, _) in enumerate(HONEST)]
    named += [(name, tid, code) for name, (tid, code) in ATTACKS.items()]
    named += [("honest_last", *HONEST[0][:2])]
    samples = [{"task_id": tid, "completion": code} for _, tid, code in named]
    out = vibes_eval.evaluate(
        "humaneval-go", samples, sandbox=SANDBOX, ks=[1],
        config={"problems": str(path), "enforce_policy": policy, "batch": batch,
                "limits": {"timeout_s": 30}},  # 64 MiB through a pipe on a busy machine
    )  # fmt: skip
    results = [out.results[s.key] for s in out.prepared.samples]
    return {name: res for (name, _, _), res in zip(named, results, strict=True)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Runs]:
    """The four modes' results, evaluated once for the module on first use."""
    need("toolchains", None if shutil.which("go") else "go is not installed")
    done: Runs = {}

    def get() -> Runs:
        for mode in MODES:
            if mode not in done:
                done[mode] = _evaluate(tmp_path_factory.mktemp("go-forgery"), *mode)
        return done

    return get


def _none_pass(runs: Runs, names: list[str]) -> None:
    for (policy, batch), results in runs.items():
        for name in names:
            res = results[name]
            assert not res.passed, (name, policy, batch, res.reason, res.detail)
            assert res.reason != "passed"


SLOW = pytest.mark.timeout(3600)


@SLOW
def test_reading_the_tests_or_expected_values_finds_nothing(runs: Callable[[], Runs]) -> None:
    _none_pass(runs(), CLASSES["reading"])
    # filter off, the searches ran and found nothing: they answered wrong, as written
    for batch in (True, False):
        res = runs()[(False, batch)]
        for name in ("read_files", "read_proc_and_environment", "go_embed_own_folder"):
            assert res[name].reason == "failed", (name, res[name].detail)
            assert "actual  : 5" in res[name].detail, (name, res[name].detail)
        for name in ("go_embed_parent_folder", "cgo_directives", "import_of_files"):
            assert res[name].reason == "compile_error", (name, res[name].detail)


@SLOW
def test_forging_the_result_fails(runs: Callable[[], Runs]) -> None:
    _none_pass(runs(), CLASSES["forging"])
    off = runs()[(False, True)]
    assert off["print_done_marker"].reason == "failed"
    for name in ("exit_zero_from_init", "exit_zero_from_a_package_variable"):
        detail = off[name].detail
        assert "ended without answering" in detail or "the candidate is gone" in detail, detail
    # the A5 shadowing reaches only the candidate's package (its own server included)
    assert off["shadow_predeclared_names"].reason == "failed"


@SLOW
def test_reaching_a_neighbour_fails_and_changes_no_neighbour(runs: Callable[[], Runs]) -> None:
    _none_pass(runs(), CLASSES["neighbour"])
    for mode, results in runs().items():
        got = [results[f"honest_{n}"].passed for n in range(len(HONEST))]
        assert got == [ok for _, _, ok in HONEST], (mode, got)
        assert results["honest_last"].passed, mode


@SLOW
def test_hostile_frames_fail_the_test(runs: Callable[[], Runs]) -> None:
    _none_pass(runs(), CLASSES["decoder"])
    for (policy, _), results in runs().items():
        for name in CLASSES["decoder"]:
            # the filter refuses the raw writes (syscall); without it the test fails
            allowed = ("blocked_policy",) if policy else ("failed",)
            assert results[name].reason in allowed, (name, results[name].detail)


@SLOW
def test_batched_equals_alone(runs: Callable[[], Runs]) -> None:
    for policy in [p for p in (True, False) if len(batch_modes(p)) == 2]:
        batched, alone = runs()[(policy, True)], runs()[(policy, False)]
        for name in batched:
            a, b = batched[name], alone[name]
            assert (a.passed, a.reason, a.detail) == (b.passed, b.reason, b.detail), name


@SLOW
def test_redteam_a5_shadowing_predeclared_names_fails_without_the_filter() -> None:
    """The red team's own case (tests/security/redteam, A5) on HumanEval-X Go/0."""
    data = SHARED / "datasets" / "humaneval-x" / "humaneval_go.jsonl.gz"
    need("shared", None if data.exists() else f"{data} is absent")
    need("toolchains", None if shutil.which("go") else "go is not installed")
    case = Path(__file__).parents[1] / "redteam" / "go_shadow_predeclared.jsonl"
    samples = [json.loads(x) for x in case.read_text().splitlines() if x.strip()]
    for policy in (True, False):
        out = vibes_eval.evaluate(
            "humaneval-go", samples, sandbox=SANDBOX, ks=[1],
            config={"problems": str(data), "enforce_policy": policy},
        )  # fmt: skip
        for res in out.results.values():
            assert not res.passed, (policy, res.reason, res.detail)
            assert res.details.get("trust") == ("split" if not policy else res.details.get("trust"))


if os.environ.get("VIBES_GO_FORGERY_DUMP"):  # a look at every verdict while developing

    @SLOW
    def test_dump(runs: Callable[[], Runs]) -> None:
        for mode, results in runs().items():
            for name, res in results.items():
                print(mode, name, res.passed, res.reason, (res.detail or "")[:160])
