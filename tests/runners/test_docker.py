"""What only the Docker runner does: the locked-down container, killing the container on a
timeout, and removing the containers of a run that died."""

from __future__ import annotations

import os
import socket
import subprocess

import docker.errors
import pytest

from tests.runners.conftest import get_runner
from vibes_eval.core.errors import RunnerBroken
from vibes_eval.core.runner import SessionSpec
from vibes_eval.core.types import Limits, Termination
from vibes_eval.runners.docker import image
from vibes_eval.runners.docker.runner import LABEL_OWNER, DockerRunner
from vibes_eval.runners.select import resolve_runner

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
        assert res.ok and res.stdout.strip() == str(docker_runner.user[0]), res
        assert docker_runner.user[0] != 0  # never root inside
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


def test_image_tag_is_a_content_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tags follow what goes into the images: the build context (Dockerfile, helpers)
    and the base recipe; unchanged inputs give the same tag again."""
    tag, base = image.image_tag(), image.base_tag()
    assert tag.startswith(f"{image.IMAGE_REPO}:") and base.startswith(f"{image.BASE_REPO}:")
    context = image._context()
    for name in context:
        changed = {**context, name: context[name] + b"\n"}
        monkeypatch.setattr(image, "_context", lambda changed=changed: changed)
        assert image.image_tag() != tag, name
        assert image.base_tag() == base  # the base does not contain the context
    monkeypatch.setattr(image, "_context", lambda: context)
    assert image.image_tag() == tag
    monkeypatch.setenv("VIBES_DEBIAN_SUITE", "some-other-suite")
    assert image.base_tag() != base and image.image_tag() != tag  # the base is in the image


def test_a_failing_image_build_is_broken_not_unavailable(
    docker_runner: DockerRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Dockerfile that does not build is the project's failure: RunnerBroken (the test
    fails, `auto` stops), never RunnerUnavailable (the test would skip)."""
    broken = {**image._context(), "Dockerfile": b"ARG BASE\nFROM ${BASE}\nRUN exit 7\n"}
    monkeypatch.setattr(image, "_context", lambda: broken)
    with pytest.raises(
        RunnerBroken, match=r"--sandbox docker: building vibes-eval-sandbox:\w+ failed"
    ):
        resolve_runner("docker")
