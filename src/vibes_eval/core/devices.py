"""Accelerators on this machine, and handing them to sessions one at a time.

Kernel timing needs a GPU to itself: a session that asks for one (``DeviceNeed``) holds it
from ``prepare`` to ``cleanup``, and other sessions needing one wait. Detection asks
``nvidia-smi``; ``VIBES_GPUS`` overrides it for tests and odd set-ups: empty for none, or
entries like ``0:NVIDIA H100:9.0`` separated by ``;``.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass

from vibes_eval.core.errors import DeviceUnavailable
from vibes_eval.core.runner import DeviceNeed


@dataclass(frozen=True)
class Gpu:
    index: str  # what CUDA_VISIBLE_DEVICES takes
    name: str
    compute_capability: float  # 9.0 for sm_90

    @property
    def sm(self) -> int:
        """The architecture number nvcc takes: 9.0 -> 90."""
        return round(self.compute_capability * 10)


def _parse(lines: list[str]) -> tuple[Gpu, ...]:
    gpus = []
    for line in lines:
        parts = [p.strip() for p in line.replace(":", ",").split(",")]
        if len(parts) >= 3 and parts[0]:
            try:
                gpus.append(Gpu(parts[0], parts[1], float(parts[2])))
            except ValueError:
                continue
    return tuple(gpus)


@functools.cache
def gpus() -> tuple[Gpu, ...]:
    """The CUDA GPUs here; empty without a driver (``nvidia-smi`` missing or failing)."""
    override = os.environ.get("VIBES_GPUS")
    if override is not None:
        return _parse([item for item in override.split(";") if item.strip()])
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return ()
    try:
        out = subprocess.run(
            [smi, "--query-gpu=index,name,compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return ()
    return _parse(out.splitlines())


# What a CUDA program opens besides its libraries: the device nodes (read-write) and the
# driver's state under /proc and /sys (read-only), granted only to sessions holding a GPU.
CUDA_WRITABLE_GLOB = "/dev/nvidia*"
CUDA_READONLY = ("/proc/driver/nvidia", "/sys/bus/pci", "/sys/devices", "/proc/self")


def cuda_paths() -> tuple[list[str], list[str]]:
    """(read-write, read-only) paths a sandboxed CUDA program needs, those that exist."""
    writable = sorted(glob.glob(CUDA_WRITABLE_GLOB))
    return writable, [p for p in CUDA_READONLY if os.path.exists(p)]


class DevicePool:
    """Hands out devices to sessions: exclusively (one session per device) or shared."""

    def __init__(self, devices: tuple[Gpu, ...] | None = None) -> None:
        self.devices = gpus() if devices is None else devices
        self._held: dict[str, int] = {d.index: 0 for d in self.devices}
        self._exclusive: set[str] = set()
        self._cond = threading.Condition()

    def acquire(self, need: DeviceNeed) -> str:
        """A device index for ``need``, waiting while every one is held exclusively (or,
        for an exclusive need, held at all).

        Raises:
            DeviceUnavailable: no device of that kind here.
        """
        if need.kind != "cuda" or not self.devices:
            raise DeviceUnavailable(f"no {need.kind} device on this machine")
        with self._cond:
            while True:
                free = [
                    i for i, n in self._held.items()
                    if i not in self._exclusive and (n == 0 or not need.exclusive)
                ]  # fmt: skip
                if free:
                    index = min(free, key=lambda i: self._held[i])
                    self._held[index] += 1
                    if need.exclusive:
                        self._exclusive.add(index)
                    return index
                self._cond.wait()

    def release(self, index: str) -> None:
        with self._cond:
            self._held[index] -= 1
            self._exclusive.discard(index)
            self._cond.notify_all()
