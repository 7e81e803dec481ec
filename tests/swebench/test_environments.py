"""Environments as the spec says: the spec's Python (Debian's suite that has it, else the
nearest, said in the report), the repository's requirements from the mirror at the
environment's commit, every version in the image's labels. Instances built from scratch."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.swebench.conftest import docker_or_skip, maker, toy_config
from vibes_eval.benchmarks.swebench.env import images, interpreters, specs
from vibes_eval.benchmarks.swebench.tasks import load as load_instances

ONE = "vibes-toy__calc-1"


@pytest.mark.parametrize(
    ("requested", "used", "suite", "exact"),
    [
        ("3.9", "3.9", "bullseye", True),
        ("3.11", "3.11", "bookworm", True),
        ("3.13", "3.13", "trixie", True),
        ("3.6", "3.9", "bullseye", False),  # astropy 1.3
        ("3.10", "3.9", "bullseye", False),  # xarray 0.12: a tie, the older
        ("3.12", "3.11", "bookworm", False),
        ("3.14", "3.13", "trixie", False),
        ("", "3.11", "bookworm", True),
    ],
)
def test_python_version_picks_the_suite_or_the_nearest(
    requested: str, used: str, suite: str, exact: bool
) -> None:
    choice = interpreters.choose(requested)
    assert (choice.used, choice.suite, choice.exact) == (used, suite, exact)
    assert bool(choice.note()) is not exact
    if not exact:
        assert f"Python {requested}" in choice.note() and f"Python {used}" in choice.note()


def test_environment_recipe_and_labels_name_the_python(toy: dict[str, Path]) -> None:
    inst = load_instances(str(toy["instances"]))[ONE]
    spec = {**specs.read_specs(str(toy["specs"]))[inst.repo][inst.version], "python": "3.6"}
    assert images.env_recipe(spec)["suite"] == "bullseye"
    labels = images.env_labels(inst, spec)
    assert labels["vibes-eval.swe.python.requested"] == "3.6"
    assert labels["vibes-eval.swe.python.debian"] == "bullseye"
    script = images.env_script(spec)
    assert "vibes-env.pth" in script  # see test_spec_python_is_the_environment_python
    assert f"{images.LOG_LABEL}{images.PYTHON_LABEL}=" in script  # the exact version, built
    assert images._log_labels(f"+ echo x\n{images.LOG_LABEL}vibes-eval.swe.python=3.9.2\n") == {
        "vibes-eval.swe.python": "3.9.2"
    }
    assert any("Python 3.6" in n for n in images.env_notes(spec))


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=cwd, check=True, capture_output=True, text=True).stdout  # fmt: skip


def test_requirements_come_from_the_mirror_at_the_environment_commit(tmp_path: Path) -> None:
    """``packages: requirements.txt`` is the repository's requirements file (per repository
    path) at environment_setup_commit, ``-r`` includes read, ``-e .`` and comments out."""
    repo = tmp_path / "flask"
    (repo / "requirements").mkdir(parents=True)
    (repo / "requirements" / "dev.txt").write_text("-r tests.txt\n-e .\n# c\nblack==1\n")
    (repo / "requirements" / "tests.txt").write_text("pytest==7.3\n# pinned\n")
    _git(tmp_path, "init", "-q", str(repo))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "x")
    head = _git(repo, "rev-parse", "HEAD").strip()
    text = interpreters.requirements(repo, "pallets/flask", head)
    assert text is not None
    assert [x for x in text.splitlines() if x] == ["pytest==7.3", "black==1"]
    assert interpreters.requirements(repo, "pylint-dev/pylint", head) is None
    spec = {"python": "3.11", "packages": "requirements.txt", "test_cmd": "pytest"}
    assert "pytest==7.3" in images.env_script(spec, text)
    assert images.env_notes(spec, text) == []
    assert "not in the mirror" in images.env_notes(spec, None)[0]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(3600)  # a first run debootstraps bullseye and builds its environment
def test_spec_python_is_the_environment_python(toy: dict[str, Path], tmp_path: Path) -> None:
    """A spec asking for 3.10 gets Debian bullseye's 3.9 (the nearest), labelled with the
    exact version, and every report of the run says so; gold is resolved there too."""
    docker_or_skip()
    import vibes_eval

    spec_file = tmp_path / "specs.json"
    wanted = json.loads(toy["specs"].read_text())
    wanted[maker.REPO][maker.VERSION]["python"] = "3.10"
    spec_file.write_text(json.dumps(wanted))
    config = {**toy_config(toy, tmp_path), "specs": str(spec_file)}
    outcome = vibes_eval.evaluate("swe-bench", toy["gold"], config=config, sandbox="docker",
                                  workers=2, store=None)  # fmt: skip
    for result in outcome.results.values():
        assert result.passed, result.detail
        env: dict[str, Any] = result.details["report"][result.task_id]["vibes"]["environment"]
        assert env["python"] == "3.9" and env["python_requested"] == "3.10"
        assert any("Python 3.10" in n for n in env["notes"])
    log = next((tmp_path / "logs").glob(f"*/toy__gold/{ONE}/run_instance.log")).read_text()
    assert "environment: the spec asks for Python 3.10" in log
    builder = images.ImageBuilder(str(toy["repos"]), None, print)
    inst = load_instances(str(toy["instances"]))[ONE]
    labels = builder.client.images.get(
        builder.env_tag(wanted[maker.REPO][maker.VERSION], inst)
    ).labels
    assert labels["vibes-eval.swe.python"].startswith("3.9.")
    assert labels["vibes-eval.swe.python.debian"] == "bullseye"
    # tox-current-env (sphinx's test command) runs the environment's python through a
    # symlink of its own (.tox/py39/bin/python): the packages must be found that way too.
    found = builder.client.containers.run(
        builder.env_tag(wanted[maker.REPO][maker.VERSION], inst),
        ["bash", "-c", "mkdir -p /tmp/tox/bin && ln -s /opt/vibes-env/bin/python "
         "/tmp/tox/bin/python && /tmp/tox/bin/python -c 'import pytest; print(pytest.__file__)'"],
        remove=True, network_disabled=True, entrypoint="",
    )  # fmt: skip
    assert found.decode().strip().startswith("/opt/vibes-env/"), found


def test_prune_counts_own_layers_and_removes_children_first() -> None:
    """An instance image adds its own layer to its environment's: the cache's size is the
    sum of own layers; pruning to a size takes the least recently used, children before
    their parent, never a parent whose child stays, never a tag a worker holds."""
    from vibes_eval.runners.docker.cache import disk_bytes, plan_prune

    def row(tag: str, parent: str, size: int, used: float) -> dict[str, Any]:
        return {"tag": tag, "id": tag, "parent": parent, "bytes": size, "last_used": used}

    gb = 10**9
    rows = [row("env-a", "", 6 * gb, 1), row("inst-a1", "env-a", 7 * gb, 2),
            row("inst-a2", "env-a", 7 * gb, 3), row("env-b", "", 6 * gb, 4),
            row("inst-b1", "env-b", 8 * gb, 5)]  # fmt: skip
    sizes = {r["id"]: r["bytes"] for r in rows}
    for r in rows:
        r["own_bytes"] = r["bytes"] - sizes.get(r["parent"], 0)
    assert disk_bytes(rows) == 16 * gb  # not 34: shared layers once
    doomed = [r["tag"] for r in plan_prune(rows, max_bytes=9 * gb)]
    assert doomed == ["inst-a1", "inst-a2", "env-a"]  # children first, the parent last
    doomed = [r["tag"] for r in plan_prune(rows, max_bytes=9 * gb, keep={"inst-a2"})]
    assert "env-a" not in doomed and "inst-a2" not in doomed  # its child stays
    assert plan_prune(rows, max_bytes=100 * gb) == []
