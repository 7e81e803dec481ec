"""One cross-process lock: two evaluations starting at once build a shared thing (a crate
set, an image, a trusted test program) once, the second waiting for the first."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def locked(path: str | Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created, with its folder) for the block.
    The lock dies with the process, so a crash never leaves it held."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
