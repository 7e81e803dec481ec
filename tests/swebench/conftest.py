"""Shared set-up for the SWE-bench tests: the toy instances (made once per session by
examples/swebench/make_instances.py), the five real Lite rows from ../shared, a Python with
swebench 5.x for the differential checks, and one evaluation of every toy prediction."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.components import need
from tests.conftest import ROOT, SHARED
from tests.references import python_of

_ROWS = Path("datasets") / "swe-bench" / "swe-bench-lite-test-5rows.json"
# ../shared beside the checkout, or beside the folder of worktrees
LITE_ROWS = next((p / _ROWS for p in (SHARED, ROOT.parent.parent / "shared") if (p / _ROWS).exists()),
                 SHARED / _ROWS)  # fmt: skip


@pytest.fixture
def _lite_rows() -> Path:
    """The five real Lite rows: a test that has them counts for `shared`, one without them
    skips (fails where `shared` is required)."""
    need("shared", None if LITE_ROWS.exists() else f"{LITE_ROWS} is absent")
    return LITE_ROWS


needs_lite = pytest.mark.usefixtures("_lite_rows")


def _load_maker() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_instances", ROOT / "examples" / "swebench" / "make_instances.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


maker = _load_maker()


@pytest.fixture(scope="session")
def toy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return maker.make(tmp_path_factory.mktemp("toy"))


def toy_config(toy: dict[str, Path], work: Path, **extra: Any) -> dict[str, Any]:
    return {
        "problems": str(toy["instances"]),
        "specs": str(toy["specs"]),
        "repos": str(toy["repos"]),
        "log_dir": str(work / "logs"),
        "report_dir": str(work),
        **extra,
    }


def docker_or_skip() -> None:
    from vibes_eval.runners.docker.runner import DockerRunner

    need("docker", DockerRunner.check_available())


@pytest.fixture(scope="session")
def evaluated(toy: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every toy prediction evaluated, all kinds in one run (each kind is its own model:
    its own log folders and summary): kind -> ({instance id: verdict}, work dir)."""
    docker_or_skip()
    import vibes_eval

    work = tmp_path_factory.mktemp("evaluated")
    both = work / "all.jsonl"
    both.write_text("".join(toy[kind].read_text() for kind in maker.PREDICTIONS))
    outcome = vibes_eval.evaluate("swe-bench", both, config=toy_config(toy, work),
                                  sandbox="docker", workers=2, store=None)  # fmt: skip
    out: dict[str, Any] = {kind: ({}, work) for kind in maker.PREDICTIONS}
    for sample in outcome.prepared.samples:
        kind = sample.record["model_name_or_path"].removeprefix("toy/")
        out[kind][0][sample.task_id] = outcome.results[sample.key]
    return out


def official5_python() -> Path:
    """A Python with swebench 5.0.2: $VIBES_SWEBENCH5_PYTHON, else the reference venv
    (tests/references.py, installed by scripts/setup-references.sh); skips without one
    (fails where the `references` component is required)."""
    given = os.environ.get("VIBES_SWEBENCH5_PYTHON")
    if given:
        need("references", None)
        return Path(given)
    return python_of("swebench")


def official_reports(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    python = official5_python()
    proc = subprocess.run(
        [str(python), str(Path(__file__).with_name("official_report.py"))],
        input=json.dumps(cases), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def run_vibes(*args: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vibes_eval.cli.app", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
