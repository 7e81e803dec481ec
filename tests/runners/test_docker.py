"""What only the Docker runner does: the locked-down container, killing the container on a
timeout, and removing the containers of a run that died."""

from __future__ import annotations

import os
import socket
import subprocess

import docker.errors
import pytest

from tests.runners.conftest import get_runner
from vibes_eval.core.runner import SessionSpec
from vibes_eval.core.types import Limits, Termination
from vibes_eval.runners.docker import image
from vibes_eval.runners.docker.runner import LABEL_OWNER, DockerRunner

pytestmark = pytest.mark.docker


@pytest.fixture
def docker_runner() -> DockerRunner:
    runner = get_runner("docker")
    assert isinstance(runner, DockerRunner)
    return runner


def test_container_is_locked_down(docker_runner: DockerRunner) -> None:
    s = docker_runner.prepare(SessionSpec(label="locked"))
    try:
        box = docker_runner._boxes[s.id]
        box.container.reload()
        host = box.container.attrs["HostConfig"]
        assert host["NetworkMode"] == "none"
        assert host["ReadonlyRootfs"] is True
        assert host["CapDrop"] == ["ALL"]
        assert "no-new-privileges" in host["SecurityOpt"]
        assert host["Memory"] == Limits().memory_mb << 20
        assert host["MemorySwap"] == host["Memory"]
        assert host["PidsLimit"] == Limits().pids
        assert host["NanoCpus"] > 0
        assert box.container.labels[LABEL_OWNER].endswith(f":{os.getpid()}")
        res = docker_runner.execute(s, ["id", "-u"], Limits())
        assert res.stdout.strip() != "0"  # never root inside
    finally:
        docker_runner.cleanup(s)
    with pytest.raises(docker.errors.NotFound):
        box.container.reload()


def test_timeout_kills_the_container_and_files_survive(docker_runner: DockerRunner) -> None:
    s = docker_runner.prepare(SessionSpec(label="restart", files={"keep.txt": "kept"}))
    try:
        res = docker_runner.execute(s, ["sleep", "60"], Limits(timeout_s=1))
        assert res.termination is Termination.TIMED_OUT
        box = docker_runner._boxes[s.id]
        box.container.reload()
        assert box.container.status != "running"
        res = docker_runner.execute(s, ["cat", "keep.txt"], Limits())
        assert res.ok and res.stdout == "kept"
    finally:
        docker_runner.cleanup(s)


def test_limits_follow_each_command(docker_runner: DockerRunner) -> None:
    s = docker_runner.prepare(SessionSpec(label="limits"))
    try:
        docker_runner.execute(s, ["true"], Limits(memory_mb=256, pids=32))
        box = docker_runner._boxes[s.id]
        box.container.reload()
        assert box.container.attrs["HostConfig"]["Memory"] == 256 << 20
        assert box.container.attrs["HostConfig"]["PidsLimit"] == 32
    finally:
        docker_runner.cleanup(s)


def test_leftovers_of_a_dead_run_are_removed(docker_runner: DockerRunner) -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    owner = f"{socket.gethostname()}:{proc.pid}"  # a runner process that is gone
    leftover = docker_runner.client.containers.run(
        docker_runner.image, detach=True, labels={LABEL_OWNER: owner}, network_mode="none"
    )
    mine = docker_runner.prepare(SessionSpec(label="mine"))
    try:
        DockerRunner().close()  # the next run's start-up
        names = [c.id for c in docker_runner.client.containers.list(all=True)]
        assert leftover.id not in names
        assert docker_runner._boxes[mine.id].container.id in names  # ours is alive
    finally:
        docker_runner.cleanup(mine)


def test_image_tag_is_a_content_hash() -> None:
    tag = image.image_tag()
    assert tag.startswith(f"{image.IMAGE_REPO}:") and tag == image.image_tag()
    assert image.base_tag() != image.image_tag()


def test_session_image_is_writable_and_gets_vibes_box(docker_runner: DockerRunner) -> None:
    """A session in an image without vibes-box (here the bare Debian base): the runner adds
    static builds of it; the image's files are the session's to change, and go with it."""
    base = image.base_tag()
    s = docker_runner.prepare(SessionSpec(label="image", image=base))
    try:
        res = docker_runner.execute(
            s,
            [
                "sh",
                "-c",
                "id -u; mkdir -p /var/tmp/x && echo ok > /var/tmp/x/f && cat /var/tmp/x/f",
            ],
            Limits(),
        )
        assert res.ok, res.stderr
        uid, text = res.stdout.split()
        assert uid != "0" and text == "ok"  # the job user, never root
        box = docker_runner._boxes[s.id]
        box.container.reload()
        assert box.container.attrs["HostConfig"]["NetworkMode"] == "none"
        assert box.container.attrs["HostConfig"]["ReadonlyRootfs"] is False
        assert box.container.image.labels.get(image.BOX_LABEL) == "1"
    finally:
        docker_runner.cleanup(s)
    s = docker_runner.prepare(SessionSpec(label="image", image=base))
    try:  # a new session starts from the image again
        res = docker_runner.execute(s, ["sh", "-c", "test -e /var/tmp/x/f || echo gone"], Limits())
        assert res.stdout.strip() == "gone"
    finally:
        docker_runner.cleanup(s)


def test_missing_session_image_is_a_runner_error(docker_runner: DockerRunner) -> None:
    from vibes_eval.core.errors import RunnerError

    with pytest.raises(RunnerError, match="not on this machine"):
        docker_runner.prepare(SessionSpec(label="none", image="vibes-no-such-image:0"))
