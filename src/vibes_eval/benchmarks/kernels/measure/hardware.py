"""Which tasks this machine can run: GPU compute capability and features for CUDA tasks,
CPU flags for CPU tasks. A task the hardware cannot run is ``arch_unsupported`` (left out
of the denominators and reported); a CUDA task on a machine without a GPU is
``no_device``."""

from __future__ import annotations

import functools
import platform
from dataclasses import dataclass

from vibes_eval.benchmarks.kernels.tasks import KernelTask
from vibes_eval.core import devices

# required_features -> the oldest compute capability that has it.
FEATURE_SM = {
    "fp16": 53, "bf16": 80, "tf32": 80, "cp_async": 80, "async_copy": 80, "mma": 80,
    "tensor_cores": 70, "fp8": 89, "tma": 90, "wgmma": 90, "clusters": 90,
    "thread_block_clusters": 90, "distributed_shared_memory": 90, "setmaxnreg": 90,
    "tcgen05": 100, "tmem": 100, "fp4": 100, "nvfp4": 100, "mxfp8": 100,
}  # fmt: skip
# Features whose code only runs on the architecture it was built for (sm_90a, sm_100a):
# such tasks need a GPU of exactly a tested architecture.
ARCH_SPECIFIC = frozenset({"wgmma", "setmaxnreg", "tcgen05", "tmem"})
MIN_NVCC_SM = 75  # the oldest architecture nvcc 13 accepts


@dataclass(frozen=True)
class Gate:
    """Whether a task can run here, and how to build it."""

    status: str  # "ok", "no_device" (build, then stop) or "arch_unsupported"
    detail: str = ""
    sm: int = 0  # the architecture to build for (0 for CPU tasks)
    device: str = ""  # what timing runs on, for the reference-time cache and reports

    @property
    def arch_vars(self) -> dict[str, str]:
        """Make variables that retarget a class1/general build (as CUDAHercules does)."""
        if not self.sm:
            return {}
        return {
            "ARCH": f"-gencode arch=compute_{self.sm},code=sm_{self.sm}",
            "ARCH_PTX": f"-gencode arch=compute_{self.sm},code=compute_{self.sm}",
        }


@functools.cache
def cpu_flags() -> frozenset[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


@functools.cache
def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gate(task: KernelTask) -> Gate:
    """Can this machine run ``task``?"""
    hw = task.spec.hardware
    if not task.needs_gpu:
        missing = [f for f in hw.required_features if f.lower() not in cpu_flags()]
        if missing:
            return Gate("arch_unsupported", f"the CPU lacks {', '.join(missing)}")
        return Gate("ok", device=f"cpu: {cpu_name()}")
    found = devices.gpus()
    build_sm = max(hw.min_sm, MIN_NVCC_SM)
    if not found:
        return Gate("no_device", "no CUDA GPU on this machine", sm=build_sm)
    gpu = found[0]  # a pool of one kind; mixed pools are gated by their first GPU
    label = f"{gpu.name} (sm_{gpu.sm})"
    if gpu.sm < hw.min_sm:
        return Gate("arch_unsupported", f"{label} is older than sm_{hw.min_sm}", device=label)
    for feature in hw.required_features:
        need = FEATURE_SM.get(feature.lower())
        if need is None:
            if hw.tested_sms and gpu.sm not in hw.tested_sms:
                return Gate("arch_unsupported", f"unknown feature {feature!r}, and {label} "
                            f"is not among tested_sms {hw.tested_sms}", device=label)  # fmt: skip
        elif gpu.sm < need:
            return Gate("arch_unsupported", f"{label} lacks {feature} (sm_{need}+)", device=label)
    specific = task.group in ("hopper", "blackwell") or any(
        f.lower() in ARCH_SPECIFIC for f in hw.required_features
    )
    if specific and hw.tested_sms and gpu.sm not in hw.tested_sms:
        return Gate("arch_unsupported", f"arch-specific code built for sm_{hw.tested_sms} "
                    f"does not run on {label}", device=label)  # fmt: skip
    return Gate("ok", sm=gpu.sm, device=label)
