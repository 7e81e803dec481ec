"""Shared fixtures for the kernels tests: the example task sets, a task folder written on
the fly, fake GPUs through VIBES_GPUS, and helpers that evaluate through the Python API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from vibes_eval.core import devices

CPU_SET = EXAMPLES / "kernels" / "cpu"
CUDA_SET = EXAMPLES / "kernels" / "cuda"

needs_gxx = pytest.mark.needs_tool("g++")  # tests/conftest.py: components toolchains, nvcc
needs_nvcc = pytest.mark.needs_tool("nvcc")

TASK_YAML = """\
schema_version: 1
task_id: class1/general/{name}
name: {name}
task_class: 1
domain: test
tags: [x]
hardware:
  min_sm: 80
  tested_sms: [80]
  required_features: []
runner:
  backend: {backend}
  workdir: tasks/class1/general/{name}
  timeout_sec: 60
  env:
    KH_BENCHMARK: '5'
  solution_file: solution.h
build:
  cmd: make test
  clean_cmd: make clean
execute:
  cmd: ./test
  success:
    exit_code: 0
    stdout_regex: Passed
correctness:
  mode: stdout_or_exit
  tolerances:
    atol: 0.01
    rtol: 0.01
performance:
  enabled: true
  parser:
    kernel_time_ms_regex: 'Kernel time:\\s*([0-9.]+)\\s*ms'
    ref_time_ms_regex: 'Ref time:\\s*([0-9.]+)\\s*ms'
  metric: speedup_ref_over_sol
source:
  repo: example/repo
  files: []
  commit: ''
  license: MIT
anti_cheat:
  blocked_patterns:
  required_patterns: []
"""


def write_task(root: Path, name: str = "t0", backend: str = "cpu_make", **files: str) -> Path:
    """A task folder under root/tasks/class1/general/<name> with a task.yaml and files."""
    folder = root / "tasks" / "class1" / "general" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.yaml").write_text(TASK_YAML.format(name=name, backend=backend))
    files.setdefault("solution.h", "int f() {\n  return 1;\n}\n\n\n")
    for rel, text in files.items():
        (folder / rel.replace("__", ".")).write_text(text)
    return folder


@pytest.fixture
def gpus(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Set the GPUs this process sees: gpus("") for none, gpus("0:NVIDIA H100:9.0")."""

    def set_gpus(spec: str) -> None:
        monkeypatch.setenv("VIBES_GPUS", spec)
        devices.gpus.cache_clear()

    yield set_gpus
    monkeypatch.undo()
    devices.gpus.cache_clear()


def samples_of(set_dir: Path, kind: str, names: set[str] | None = None) -> list[dict[str, Any]]:
    """Sample records of a kind (naive, expert, wrong, broken, cheats) for a task set, as
    examples/kernels/make_samples.py writes them, built in memory."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_samples", EXAMPLES / "kernels" / "make_samples.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows: list[dict[str, Any]] = []
    found = module.tasks(set_dir)
    for task_id, folder in found.items():
        naive = (folder / "solution.h").read_text()
        if kind == "naive":
            rows.append({"task_id": task_id, "solution": naive})
        elif kind == "expert":
            rows.append({"task_id": task_id, "solution": (folder / "reference.h").read_text()})
        elif kind == "wrong":
            rows.append(
                {
                    "task_id": task_id,
                    "solution": (set_dir / "wrong" / f"{folder.name}.h").read_text(),
                }
            )
        elif kind == "broken":
            rows.append(
                {"task_id": task_id, "solution": naive.replace("{", "{ undeclared_helper(0);", 1)}
            )
    if kind == "cheats":
        for cheat in sorted((set_dir / "cheats").glob("*.h")):
            text = cheat.read_text()
            rows.append(
                {
                    "task_id": module.header(text, "task"),
                    "name": cheat.stem,
                    "expect": module.header(text, "expect"),
                    "solution": text,
                }
            )
    if names is not None:
        rows = [
            r for r in rows if r["task_id"].rsplit("/", 1)[-1] in names or r.get("name") in names
        ]
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
