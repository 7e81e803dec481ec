"""SWE-bench with a model in the loop, on the offline toy instances in the Docker runner:
a one-shot answer is a ```diff; a tool-augmented agent edits the repository inside the
instance's image (no network), its `git diff` becomes the prediction, and the benchmark's
own grading resolves it, with the official log folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("jinja2")

from tests.generation.conftest import fence
from tests.swebench.conftest import docker_or_skip, maker, toy_config
from vibes_eval.generation import generate
from vibes_eval.generation.history import RunHistory
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ONE = "vibes-toy__calc-1"
OLD = "    return text.lower()\n"
NEW = '    return " ".join(text.split()).lower()\n'


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    docker_or_skip()
    return maker.make(tmp_path_factory.mktemp("toy"))


def run(toy: dict[str, Path], tmp: Path, srv: Any, **settings: Any) -> Any:
    base = {"model": "openai/scripted", "base_url": srv.url, "retry_base_s": 0.01}
    return generate(
        "swe-bench",
        {**base, **settings},
        config=toy_config(toy, tmp, instance_ids=[ONE]),
        sandbox="docker",
        store=str(tmp / "s.sqlite"),
        run_id="r",
    )


def test_an_agent_fixes_an_issue_in_the_instance_image(
    toy: dict[str, Path], tmp_path: Path, serve: Any
) -> None:
    srv = serve(
        {
            "normalize() keeps blanks": [
                {"tool_calls": [{"name": "search", "arguments": {"pattern": "def normalize"}}]},
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc/text.py"}}]},
                {
                    "tool_calls": [
                        {
                            "name": "edit_file",
                            "arguments": {"path": "calc/text.py", "old": OLD, "new": NEW},
                        }
                    ]
                },
                {
                    "tool_calls": [
                        {
                            "name": "run",
                            "arguments": {
                                "command": "python -m pytest -q tests/test_text.py 2>&1 | tail -1; "
                                "python -c \"import socket; socket.create_connection(('1.1.1.1', 53), 3)\" "
                                ">/dev/null 2>&1; echo net=$?"
                            },
                        }
                    ]
                },
                {"tool_calls": [{"name": "submit", "arguments": {}}]},
            ]
        }
    )
    out = run(toy, tmp_path, srv, setting="tool-augmented:8")
    result = out.ordered[0]
    assert result.passed and result.reason == "passed", result.detail
    with open_store(resolve(str(tmp_path / "s.sqlite")), create=False) as st:
        hist = RunHistory.load(st, "r").samples[(ONE, 0)]
    names = [t.name for t in hist.tools]
    assert names == ["search", "read_file", "edit_file", "run", "submit"]
    assert "calc/text.py" in hist.tools[0].output and OLD.strip() in hist.tools[1].output
    ran = hist.tools[3].output
    # the tests ran (one starts a loopback server of its own); nothing beyond loopback
    assert "6 passed" in ran and "net=" in ran and "net=0" not in ran
    assert hist.final is not None
    record = hist.final.record
    assert record["instance_id"] == ONE and record["model_name_or_path"] == "openai/scripted"
    assert record["model_patch"].startswith("diff --git a/calc/text.py b/calc/text.py")
    assert NEW.strip() in record["model_patch"] and "__pycache__" not in record["model_patch"]
    # The official log folder of the prediction, under the model's name.
    reports = list((tmp_path / "logs").glob(f"r/openai__scripted/{ONE}/report.json"))
    assert reports and json.loads(reports[0].read_text())[ONE]["resolved"] is True


def test_one_shot_patches_and_self_refine_sees_the_failure(
    toy: dict[str, Path], tmp_path: Path, serve: Any
) -> None:
    gold = json.loads(toy["gold"].read_text().splitlines()[0])["model_patch"]
    wrong = gold.replace('" ".join(text.split()).lower()', "text.strip().lower()")
    srv = serve({"normalize() keeps blanks": [fence(wrong, "diff"), fence(gold, "diff")]})
    out = run(toy, tmp_path, srv, setting="self-refine:2")
    assert out.ordered[0].passed
    second = next(b for _, _, _, r, b in srv.requests if r == 2)
    assert "did not pass" in second["messages"][-1]["content"]
    with open_store(resolve(str(tmp_path / "s.sqlite")), create=False) as st:
        hist = RunHistory.load(st, "r").samples[(ONE, 0)]
    assert hist.attempts[1].result.reason in ("failed", "partial")
