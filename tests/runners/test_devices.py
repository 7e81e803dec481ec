"""Accelerators handed to sessions: exclusive use while a session holds one, only the held
GPU visible to its commands, and a clear error where there is none (kernels report it as
``no_device``). GPUs are described through VIBES_GPUS, as a machine with them would list."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from vibes_eval.core import devices
from vibes_eval.core.devices import DevicePool, Gpu
from vibes_eval.core.errors import DeviceUnavailable
from vibes_eval.core.runner import DeviceNeed, SessionSpec
from vibes_eval.core.types import Limits
from vibes_eval.runners.local import ProcessRunner

H100 = Gpu("0", "NVIDIA H100", 9.0)


@pytest.fixture
def fake_gpus(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    devices.gpus.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    devices.gpus.cache_clear()


def test_detection_reads_the_override_and_finds_none_without_a_driver(
    fake_gpus: pytest.MonkeyPatch,
) -> None:
    fake_gpus.setenv("VIBES_GPUS", "0:NVIDIA H100 80GB HBM3:9.0;1:NVIDIA A100:8.0")
    found = devices.gpus()
    assert found == (Gpu("0", "NVIDIA H100 80GB HBM3", 9.0), Gpu("1", "NVIDIA A100", 8.0))
    assert found[1].sm == 80
    devices.gpus.cache_clear()
    fake_gpus.setenv("VIBES_GPUS", "")
    assert devices.gpus() == ()


def test_exclusive_use_waits_for_the_holder() -> None:
    pool = DevicePool((H100,))
    first = pool.acquire(DeviceNeed())
    got: list[str] = []
    waiter = threading.Thread(target=lambda: got.append(pool.acquire(DeviceNeed())))
    waiter.start()
    time.sleep(0.2)
    assert got == []  # still held
    pool.release(first)
    waiter.join(5)
    assert got == ["0"]
    with pytest.raises(DeviceUnavailable, match="no cuda device"):
        DevicePool(()).acquire(DeviceNeed())


def test_a_session_sees_only_the_gpu_it_holds(fake_gpus: pytest.MonkeyPatch) -> None:
    fake_gpus.setenv("VIBES_GPUS", "3:NVIDIA H100:9.0")
    runner = ProcessRunner()
    assert runner.capabilities.devices == ("3",)
    with_gpu = runner.prepare(SessionSpec(label="gpu", device=DeviceNeed()))
    without = runner.prepare(SessionSpec(label="cpu"))
    try:
        show = ["sh", "-c", 'echo "[$CUDA_VISIBLE_DEVICES]"']
        assert runner.execute(with_gpu, show, Limits()).stdout == "[3]\n"
        assert runner.execute(without, show, Limits()).stdout == "[]\n"
    finally:
        runner.cleanup(with_gpu)
        runner.cleanup(without)
    held = runner.devices.acquire(DeviceNeed())  # released by cleanup: free again
    assert held == "3"
    runner.devices.release(held)
