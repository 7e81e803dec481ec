"""Loading task.yaml trees with CUDAHercules's field names and nesting, and samples; every
mistake is one line naming the file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.kernels.conftest import CPU_SET, CUDA_SET, samples_of, write_jsonl, write_task
from vibes_eval.benchmarks.kernels.samples import load_samples
from vibes_eval.benchmarks.kernels.tasks import group_of, load_tasks
from vibes_eval.benchmarks.kernels.tasks.schema import load_task_yaml
from vibes_eval.core.errors import UserError


def test_a_cudahercules_task_yaml_loads_with_its_nesting(tmp_path: Path) -> None:
    folder = write_task(tmp_path, "00_basic_gemm", backend="class1_make")
    spec = load_task_yaml(folder / "task.yaml")
    assert spec.runner.solution_file == "solution.h"
    assert spec.execute.success.stdout_regex == "Passed"
    assert spec.runner.env == {"KH_BENCHMARK": "5"}
    assert spec.anti_cheat.blocked_patterns == []  # `blocked_patterns:` with nothing after it
    assert spec.performance.parser.kernel_time_ms_regex.startswith("Kernel time")
    tasks = load_tasks(tmp_path)
    task = tasks["class1/general/00_basic_gemm"]
    assert task.root == str(tmp_path.resolve()) and task.group == "general" and task.needs_gpu
    assert not task.channel  # its harness does not speak the results channel


@pytest.mark.parametrize(
    ("edit", "field", "message"),
    [
        (
            lambda t: t.replace("runner:\n  backend: cpu_make", "runner:\n  backend: cuda_magic"),
            "runner.backend",
            "unknown backend",
        ),
        (
            lambda t: (
                t.replace("  solution_file: solution.h\n", "") + "solution_file: solution.h\n"
            ),
            "solution_file",
            "belongs under runner.solution_file",
        ),
        (
            lambda t: t.replace("timeout_sec: 60", "timeout_sec: soon"),
            "runner.timeout_sec",
            "integer",
        ),
        (lambda t: t.replace("task_id: class1/general/t0\n", ""), "task_id", "missing"),
        (
            lambda t: t.replace("stdout_regex: Passed", "stdout_regex: '(unclosed'"),
            "execute.success.stdout_regex",
            "invalid regex",
        ),
        (
            lambda t: t.replace("  tolerances:\n    atol: 0.01", "  tolerances:\n    atoll: 0.01"),
            "correctness.tolerances.atoll",
            "unknown field",
        ),
    ],
)
def test_a_bad_task_yaml_is_one_line_naming_file_line_and_field(
    tmp_path, edit, field, message
) -> None:  # type: ignore[no-untyped-def]
    folder = write_task(tmp_path)
    path = folder / "task.yaml"
    path.write_text(edit(path.read_text()))
    with pytest.raises(UserError) as err:
        load_tasks(tmp_path)
    text = str(err.value)
    assert str(path) in text and f"field '{field}'" in text and message in text
    assert "\n" not in text


def test_the_line_of_a_bad_field_is_named(tmp_path: Path) -> None:
    folder = write_task(tmp_path)
    path = folder / "task.yaml"
    path.write_text(path.read_text().replace("timeout_sec: 60", "timeout_sec: -1"))
    with pytest.raises(UserError) as err:
        load_tasks(tmp_path)
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if "timeout_sec" in t)
    assert f"task.yaml:{line} field 'runner.timeout_sec'" in str(err.value)


def test_tree_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"no task\.yaml below"):
        load_tasks(tmp_path)
    write_task(tmp_path / "a", "same")
    write_task(tmp_path / "b", "same")
    with pytest.raises(UserError, match="also in"):
        load_tasks(tmp_path)
    folder = write_task(tmp_path / "c", "lonely")
    (folder / "solution.h").unlink()
    with pytest.raises(UserError, match=r"has no solution\.h"):
        load_tasks(tmp_path / "c")


def test_the_example_sets_load() -> None:
    cpu, cuda = load_tasks(CPU_SET), load_tasks(CUDA_SET)
    assert len(cpu) >= 8 and len(cuda) >= 6
    assert all(t.backend == "cpu_make" and t.channel for t in cpu.values())
    assert all(t.backend == "class1_make" and t.channel for t in cuda.values())
    assert group_of("class1/hopper/52_x") == "hopper" and group_of("odd") == "other"


def test_an_edited_harness_changes_the_fingerprint(tmp_path: Path) -> None:
    folder = write_task(tmp_path, harness__cpp="int main() {}\n")
    before = load_tasks(tmp_path)["class1/general/t0"].fingerprint()
    (folder / "harness.cpp").write_text("int main() { return 1; }\n")
    assert load_tasks(tmp_path)["class1/general/t0"].fingerprint() != before


def test_samples_from_jsonl_and_from_a_directory(tmp_path: Path) -> None:
    write_task(tmp_path, "a")
    write_task(tmp_path, "b")
    tasks = load_tasks(tmp_path)
    rows = [{"task_id": "class1/general/a", "solution": "x"},
            {"task_id": "class1/general/a", "completion": "y"}]  # fmt: skip
    samples = load_samples(write_jsonl(tmp_path / "s.jsonl", rows), tasks)
    assert [(s.task_id, s.index, s.completion) for s in samples] == [
        ("class1/general/a", 0, "x"), ("class1/general/a", 1, "y")]  # fmt: skip
    sol = tmp_path / "sols"
    (sol / "class1/general/a").mkdir(parents=True)
    (sol / "class1/general/a/solution.h").write_text("one")
    (sol / "class1/general/b/2").mkdir(parents=True)
    (sol / "class1/general/b/2/solution.h").write_text("two")
    found = load_samples(sol, tasks)
    assert [(s.task_id, s.completion) for s in found] == [
        ("class1/general/a", "one"), ("class1/general/b", "two")]  # fmt: skip
    assert found[0].record["sha256"]


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ({"solution": "x"}, "task_id", "missing"),
        ({"task_id": "class1/general/nope", "solution": "x"}, "task_id", "unknown task id"),
        ({"task_id": "class1/general/a"}, "solution", "missing"),
        ({"task_id": "class1/general/a", "solution": 3}, "solution", "must be a string"),
    ],
)
def test_bad_samples_name_the_line_and_field(tmp_path, row, field, message) -> None:  # type: ignore[no-untyped-def]
    write_task(tmp_path, "a")
    path = write_jsonl(
        tmp_path / "s.jsonl", [{"task_id": "class1/general/a", "solution": "ok"}, row]
    )
    with pytest.raises(UserError) as err:
        load_samples(path, load_tasks(tmp_path))
    assert f"s.jsonl:2 field '{field}'" in str(err.value) and message in str(err.value)


def test_the_cli_refuses_a_bad_tree_in_one_line(tmp_path: Path) -> None:
    folder = write_task(tmp_path)
    (folder / "task.yaml").write_text(
        (folder / "task.yaml").read_text().replace("runner:", "runer:")
    )
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "class1/general/t0", "solution": "x"}])
    proc = run_cli("eval", "run", "kernels", "--tasks", str(tmp_path), "--samples", str(samples),
                   "--store", "none")  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "field 'runer'" in proc.stderr
    assert "did you mean 'runner'" in proc.stderr
    proc = run_cli("eval", "run", "kernels", "--samples", str(samples), "--store", "none")
    assert proc.returncode == 2 and "--tasks DIR" in proc.stderr


def test_cheat_headers_name_known_tasks_and_rules() -> None:
    from vibes_eval.benchmarks.kernels.benchmark import REASONS

    known = {"symbols", "interposition", "syscall_instruction", "device_io", "static_constructor",
             "task_file", "library", "min_code", "required_pattern", "cached_result",
             "zero_output", "no_output", "try_catch", "framework", "syscall", "inline_asm",
             "harness_symbol", "global_symbol", "init_section"}  # fmt: skip
    for set_dir in (CPU_SET, CUDA_SET):
        for row in samples_of(set_dir, "cheats"):
            assert row["task_id"].startswith("class1/") and row["expect"] in known, row["name"]
    assert "anti_cheat" in REASONS


def test_the_gpu_script_parses_and_lists_its_wheels() -> None:
    import subprocess

    from tests.conftest import ROOT

    script = ROOT / "scripts" / "kernels-gpu.sh"
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    header = script.read_text()
    for name in ("pydantic==", "pydantic_core==", "SQLAlchemy==", "platformdirs=="):
        assert name in header
