"""Which images a node holds, as its worker tells the driver (a real Docker daemon), and
the images a SWE-bench instance prefers."""

from __future__ import annotations

import io
import secrets
import subprocess
import tarfile
from collections.abc import Iterator

import pytest

from tests.components import need
from vibes_eval.benchmarks.swebench.benchmark import SweBench
from vibes_eval.benchmarks.swebench.config import SweBenchConfig
from vibes_eval.benchmarks.swebench.tasks import SweInstance
from vibes_eval.scaleout.worker import held_images


def instance(**kw: object) -> SweInstance:
    return SweInstance(task_id="django__django-16255", repo="django/django", base_commit="abc",
                       test_patch="", FAIL_TO_PASS=[], PASS_TO_PASS=[], **kw)  # fmt: skip


def test_swe_bench_instances_prefer_nodes_holding_their_image() -> None:
    built_here = SweBench(SweBenchConfig(problems="lite"))
    assert built_here.node_needs(instance()).images == (
        "label=vibes-eval.swe.instance=django__django-16255",
    )
    official = SweBench(SweBenchConfig(problems="lite", image_namespace="swebench"))
    (name,) = official.node_needs(instance()).images
    assert name.startswith("swebench/") and "django" in name
    assert official.node_needs(instance(image="reg/x:1")).images == ("reg/x:1",)
    assert not official.node_needs(instance()).needs_gpu  # a preference, not a requirement


@pytest.fixture
def labelled_image() -> Iterator[tuple[str, str]]:
    """A one-file image made with `docker import` (no base image, no network)."""
    try:
        subprocess.run(["docker", "info"], capture_output=True, check=True, timeout=20)
        why = None
    except (OSError, subprocess.SubprocessError):
        why = "no Docker daemon answers `docker info`"
    need("docker", why)  # counts against docker: fails where it is required
    tag = f"vibes-scaleout-test:{secrets.token_hex(4)}"
    label = f"vibes-eval.test={secrets.token_hex(4)}"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("hello")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    subprocess.run(["docker", "import", "--change", f"LABEL {label}", "-", tag],
                   input=buf.getvalue(), capture_output=True, check=True, timeout=60)  # fmt: skip
    try:
        yield tag, f"label={label}"
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=60)


@pytest.mark.docker
def test_a_node_says_which_wanted_images_it_holds(labelled_image: tuple[str, str]) -> None:
    tag, label = labelled_image
    wanted = (tag, label, "vibes-scaleout-test:absent", "label=vibes-eval.test=absent")
    assert held_images(wanted) == {tag, label}
    assert held_images(()) == set()
