"""Acceptance on the toy instances, in the Docker runner: gold resolved, partial and
regressing not, malformed = patch apply failure, empty = empty_patch, every forgery caught
(and shown to fool the official grading), the official log folder and summary, the same
grades as swebench 5.x's own ``get_eval_report`` on the same test output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.swebench.conftest import docker_or_skip, maker, official_reports, toy_config

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ONE, TWO = "vibes-toy__calc-1", "vibes-toy__calc-2"
FORGERIES = [k for k in maker.PREDICTIONS if k.startswith("forge_")]


def verdicts(evaluated: dict[str, Any], kind: str) -> dict[str, Any]:
    return evaluated[kind][0]


def folder(evaluated: dict[str, Any], kind: str, iid: str) -> Path:
    _, work = evaluated[kind]
    found = list((work / "logs").glob(f"*/toy__{kind}/{iid}"))
    assert len(found) == 1, found
    return found[0]


def test_gold_is_resolved(evaluated: dict[str, Any]) -> None:
    for iid, r in verdicts(evaluated, "gold").items():
        assert r.passed and r.reason == "passed", (iid, r.detail)
        assert r.details["official_resolved"] and not r.details["runtime_problems"]
        report = json.loads((folder(evaluated, "gold", iid) / "report.json").read_text())
        assert report[iid]["resolved"] is True
        assert report[iid]["patch_successfully_applied"] is True
        assert set(report[iid]["tests_status"]) == {"FAIL_TO_PASS", "PASS_TO_PASS",
                                                    "FAIL_TO_FAIL", "PASS_TO_FAIL"}  # fmt: skip
        names = {p.name for p in folder(evaluated, "gold", iid).iterdir()}
        assert names == {"run_instance.log", "patch.diff", "eval.sh", "test_output.txt",
                         "report.json"}  # fmt: skip


def test_partial_regressing_malformed_empty(evaluated: dict[str, Any]) -> None:
    partial = verdicts(evaluated, "partial")[ONE]
    assert not partial.passed and partial.reason == "partial"
    assert partial.details["resolution"] == "RESOLVED_PARTIAL"
    regressing = verdicts(evaluated, "regressing")[ONE]
    assert not regressing.passed and regressing.reason == "failed"
    assert regressing.details["resolution"] == "RESOLVED_NO"
    assert regressing.measurements["p2p_passed"] < regressing.measurements["p2p_total"]
    malformed = verdicts(evaluated, "malformed")[ONE]
    assert malformed.reason == "patch_apply_failed" and malformed.details["status"] == "error"
    log = (folder(evaluated, "malformed", ONE) / "run_instance.log").read_text()
    assert ">>>>> Patch Apply Failed" in log and "patch --batch --forward --fuzz=5" in log
    assert not (folder(evaluated, "malformed", ONE) / "report.json").exists()  # as official
    empty = verdicts(evaluated, "empty")
    assert {r.reason for r in empty.values()} == {"empty_patch"}
    _, work = evaluated["empty"]
    assert not list(work.glob("logs/*/toy__empty"))  # never run


@pytest.mark.parametrize("kind", FORGERIES)
def test_forgeries_are_tampering(evaluated: dict[str, Any], kind: str) -> None:
    r = verdicts(evaluated, kind)[ONE]
    assert not r.passed and r.reason == "test_tampering", r.detail
    report = json.loads((folder(evaluated, kind, ONE) / "report.json").read_text())
    assert report[ONE]["resolved"] is False and report[ONE]["vibes"]["reason"] == "test_tampering"


def test_forgeries_fool_the_official_grading(evaluated: dict[str, Any]) -> None:
    """Graded by the official rules alone, the forgeries that reach the test run pass."""
    fooled = [k for k in FORGERIES if verdicts(evaluated, k)[ONE].details["official_resolved"]]
    assert set(fooled) >= {"forge_conftest", "forge_plugin", "forge_in_code",
                           "forge_in_code_hidden", "forge_exit"}  # fmt: skip


def test_forgeries_from_code_are_seen_at_run_time(evaluated: dict[str, Any]) -> None:
    for kind in ("forge_conftest", "forge_in_code", "forge_in_code_hidden", "forge_exit"):
        assert verdicts(evaluated, kind)[ONE].details["runtime_problems"], kind


def test_in_code_forgery_without_the_static_scan(toy: dict[str, Path], tmp_path: Path) -> None:
    """With the scan of added code off, the probe alone still sees through it."""
    docker_or_skip()
    import vibes_eval

    cfg = toy_config(toy, tmp_path, scan_patch_code=False)
    out = vibes_eval.evaluate("swe-bench", toy["forge_in_code_hidden"], config=cfg,
                              sandbox="docker", store=None)  # fmt: skip
    (r,) = out.ordered
    assert r.reason == "test_tampering" and not r.details["tampering_code"]
    assert any("raised" in p for p in r.details["runtime_problems"])


def test_run_summary(evaluated: dict[str, Any]) -> None:
    _, work = evaluated["gold"]
    (path,) = list(work.glob("toy__gold.*.json"))
    summary = json.loads(path.read_text())
    assert summary["resolved_ids"] == [ONE, TWO] and summary["resolved_instances"] == 2
    assert summary["total_instances"] == 2 and summary["error_ids"] == []
    assert summary["submitted_ids"] == [ONE, TWO] and summary["schema_version"] == 2
    _, work = evaluated["empty"]
    (path,) = list(work.glob("toy__empty.*.json"))
    assert json.loads(path.read_text())["empty_patch_ids"] == [ONE, TWO]
    _, work = evaluated["malformed"]
    (path,) = list(work.glob("toy__malformed.*.json"))
    summary = json.loads(path.read_text())
    assert summary["error_ids"] == [ONE] and summary["incomplete_ids"] == [TWO]


def test_same_grades_as_swebench5(evaluated: dict[str, Any], toy: dict[str, Path]) -> None:
    """Every prediction that ran its tests: swebench 5.x's ``get_eval_report`` on our
    test_output.txt says what our ``official`` reading says; on the honest ones that is
    also our verdict."""
    from vibes_eval.benchmarks.swebench.tasks import load

    tasks = load(str(toy["instances"]))
    cases, ours = [], []
    for kind in maker.PREDICTIONS:
        for r in verdicts(evaluated, kind).values():
            log = folder(evaluated, kind, r.task_id) / "test_output.txt" if r.details.get(
                "status") in ("resolved", "unresolved") else None  # fmt: skip
            if log is None:
                continue
            inst = tasks[r.task_id]
            cases.append({"instance": {"instance_id": inst.task_id, "repo": inst.repo,
                                       "version": inst.version, "FAIL_TO_PASS": inst.FAIL_TO_PASS,
                                       "PASS_TO_PASS": inst.PASS_TO_PASS},
                          "model_patch": "x", "log": str(log)})  # fmt: skip
            ours.append((kind, r))
    theirs = official_reports(cases)
    for (kind, r), report in zip(ours, theirs, strict=True):
        body = report[r.task_id]
        assert body["resolved"] == r.details["official_resolved"], (kind, r.task_id)
        mine = r.details["report"][r.task_id]
        if body["patch_successfully_applied"]:
            assert body["tests_status"] == mine["tests_status"], (kind, r.task_id)
        if not kind.startswith("forge_"):
            assert body["resolved"] == r.passed, (kind, r.task_id)


def test_post_test_reset_runs_in_testbed(evaluated: dict[str, Any]) -> None:
    """What follows the end marker ran in the repository: the reset found it."""
    log = (folder(evaluated, "gold", ONE) / "test_output.txt").read_text()
    after = log.split(">>>>> End Test Output", 1)[1]
    assert "+ git checkout" in after and "Updated 1 path" in after
    assert "not a git repository" not in after


def test_noop_patch_is_unresolved_not_tampering(evaluated: dict[str, Any]) -> None:
    """A patch that only adds an unrelated file applies and fixes nothing: unresolved, and
    not ``test_tampering`` (the annotated PASS_TO_PASS test is the one its file defines)."""
    r = verdicts(evaluated, "noop")[ONE]
    assert not r.passed and r.reason == "failed", r.detail
    assert not r.details["runtime_problems"] and not r.details["tampering_paths"]
    assert "tests/test_text.py::test_shout_typed" in r.details["report"][ONE]["tests_status"][
        "PASS_TO_PASS"]["success"]  # fmt: skip


def test_built_images_keep_older_tags_and_pinned_tools(
    evaluated: dict[str, Any], toy: dict[str, Path]
) -> None:
    """The instance images keep the tags at or before their base commit (setuptools_scm),
    and the environment has the pinned packaging tools its labels name."""
    from vibes_eval.benchmarks.swebench.env import images, specs
    from vibes_eval.benchmarks.swebench.tasks import load

    builder = images.ImageBuilder(str(toy["repos"]), None, print)
    insts = load(str(toy["instances"]))
    spec = specs.read_specs(str(toy["specs"]))[maker.REPO][maker.VERSION]

    def run(image: str, *argv: str) -> str:
        out = builder.client.containers.run(image, entrypoint=list(argv), user="0", remove=True)
        return out.decode()

    for iid, want in ((ONE, ["v0.1"]), (TWO, ["v0.1", "v0.2"])):
        tag = builder.instance_tag(insts[iid], spec)
        assert run(tag, "git", "-c", "safe.directory=*", "-C", "/testbed", "tag").split() == want
    env = builder.env_tag(spec)
    labels = builder.client.images.get(env).labels
    assert labels["vibes-eval.swe.tool.setuptools"] == "69.5.1"
    code = "import pkg_resources, setuptools, pip; print(setuptools.__version__, pip.__version__)"
    assert run(env, f"{images.VENV}/bin/python", "-c", code).split() == ["69.5.1", "24.0"]
