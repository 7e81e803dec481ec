"""Connecting to the Docker daemon, with every failure turned into one line."""

from __future__ import annotations

import os
from typing import Any

from vibes_eval.core.errors import RunnerUnavailable

_TIMEOUT_S = 120  # per API call; image imports and builds stream for longer, see image.py


def connect() -> Any:
    """A ``docker.DockerClient`` for the daemon named by the environment (DOCKER_HOST or
    the default socket), API version negotiated (the SDK's default may be newer than the
    daemon's).

    Raises:
        RunnerUnavailable: the SDK is missing or no daemon answers.
    """
    try:
        import docker
        import docker.errors
    except ImportError:
        raise RunnerUnavailable("the docker Python package is not installed") from None
    where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    try:
        client = docker.from_env(version="auto", timeout=_TIMEOUT_S)
        client.ping()
    except docker.errors.DockerException as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RunnerUnavailable(
            f"no Docker daemon reachable at {where} ({first[:160]}); start dockerd"
        ) from None
    return client
