"""Runner-level forgeries on instances laid out like SymPy and Django (built from scratch by
examples/swebench/make_layouts.py: their own runner scripts, their real log formats, read
by swebench's own parsers): gold resolved, a no-op patch unresolved and not tampering, every
forgery ``test_tampering``; the same grades as swebench 5.0.2 on the same logs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from tests.references import need_module
from tests.swebench.conftest import ROOT, docker_or_skip, official_reports

# the first run builds four images (two Debian suites): far past the default 600 s here
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(3600)]


def _maker() -> Any:
    path = ROOT / "examples" / "swebench" / "make_layouts.py"
    spec = importlib.util.spec_from_file_location("make_layouts", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


layouts = _maker()
FORGERIES = [k for k in layouts.PREDICTIONS if k.startswith("forge_")]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every layout prediction evaluated in one run: kind -> {instance id: verdict}."""
    need_module("swebench", "swebench 4.1 (the official parsers)")
    docker_or_skip()
    import vibes_eval
    from vibes_eval.benchmarks.swebench.env.specs import parser

    work = tmp_path_factory.mktemp("layouts")
    made = layouts.make(work / "made", parser)
    both = work / "all.jsonl"
    both.write_text("".join(made[kind].read_text() for kind in layouts.PREDICTIONS))
    config = {"problems": str(made["instances"]), "specs": str(made["specs"]),
              "repos": str(made["repos"]), "log_dir": str(work / "logs"),
              "report_dir": str(work)}  # fmt: skip
    outcome = vibes_eval.evaluate("swe-bench", both, config=config, sandbox="docker",
                                  workers=2, store=None)  # fmt: skip
    out: dict[str, Any] = {kind: {} for kind in layouts.PREDICTIONS}
    for sample in outcome.prepared.samples:
        kind = sample.record["model_name_or_path"].removeprefix("layout/")
        out[kind][sample.task_id] = outcome.results[sample.key]
    out["_work"] = work
    out["_instances"] = made["instances"]
    return out


def test_gold_resolved_and_noop_unresolved_in_both_layouts(graded: dict[str, Any]) -> None:
    assert set(graded["gold"]) == {"sympy__sympy-1", "django__django-2"}
    for iid, r in graded["gold"].items():
        assert r.passed and r.reason == "passed", (iid, r.detail)
    for iid, r in graded["noop"].items():
        assert r.reason == "failed" and not r.details["tampering_paths"], (iid, r.detail)


@pytest.mark.parametrize("kind", FORGERIES)
def test_runner_level_forgery_is_tampering(graded: dict[str, Any], kind: str) -> None:
    """Named after the attack: SymPy's runtests.py or bin/test reporting failures as
    passes, Django's runtests.py or django/test rewritten, a start-up hook
    (sitecustomize, usercustomize, .pth), a module shadowing one the runner imports."""
    assert graded[kind], kind
    for iid, r in graded[kind].items():
        assert not r.passed and r.reason == "test_tampering", (kind, iid, r.detail)


def test_same_grades_as_swebench5(graded: dict[str, Any]) -> None:
    rows = {json.loads(x)["instance_id"]: json.loads(x)
            for x in Path(graded["_instances"]).read_text().splitlines()}  # fmt: skip
    cases, ours = [], []
    for kind in ("gold", "noop"):
        for iid, r in graded[kind].items():
            log = next(
                Path(graded["_work"], "logs").glob(f"*/layout__{kind}/{iid}/test_output.txt")
            )
            row = rows[iid]
            inst = {k: row[k] for k in ("instance_id", "repo", "version")}
            inst.update(FAIL_TO_PASS=json.loads(row["FAIL_TO_PASS"]),
                        PASS_TO_PASS=json.loads(row["PASS_TO_PASS"]),
                        log_parser=layouts.SPECS[row["repo"]][row["version"]]["log_parser"])  # fmt: skip
            cases.append({"instance": inst, "model_patch": "x", "log": str(log)})
            ours.append(r)
    for r, report in zip(ours, official_reports(cases), strict=True):
        body = report[r.task_id]
        assert body["resolved"] == r.passed
        assert body["tests_status"] == r.details["report"][r.task_id]["tests_status"]


def test_runner_forgeries_fool_the_official_grading(graded: dict[str, Any]) -> None:
    """Graded by the official rules alone, the runners that print passes are resolved;
    the one from inside Django's code under test touches no runner file and is caught by
    the start-up witness alone (each test method's own outcome)."""
    fooled = {k for k in FORGERIES for r in graded[k].values() if r.details["official_resolved"]}
    assert fooled >= {"forge_sympy_runtests", "forge_sympy_bin_test",
                      "forge_django_result_in_code"}  # fmt: skip
    (r,) = graded["forge_django_result_in_code"].values()
    assert not r.details["tampering_paths"] and not r.details["tampering_code"]
    assert any("its method raised" in p for p in r.details["runtime_problems"]), r.details
