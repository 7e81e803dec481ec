"""What a solution compiled on its own may use and define.

The solution file is compiled alone (``run.Pipeline.check_apart``); ``nm`` lists the symbols
its object needs and defines. A solution needs memory, math, the C++ runtime, OpenMP and
(for CUDA) kernel launches, copies and device queries. Everything else is refused: no I/O
(it could print `Passed` or timing lines itself), no exit (early exit from a static
constructor), no threads or streams outside the timed region, no clocks, no dynamic
loading, no persisting-L2 or stream attributes that defeat the cache flush, no references
to the harness's or the reference's own functions. A definition of a symbol the C, C++,
OpenMP or CUDA runtime exports (interposing ``malloc`` or ``cudaEventElapsedTime``) is
refused too.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Iterable

from vibes_eval.benchmarks.common.rules import Violation
from vibes_eval.benchmarks.kernels.checks import cheat

# What both CPU and CUDA solutions may call.
BASE_EXACT = frozenset({
    "memcpy", "memmove", "memset", "memcmp", "malloc", "calloc", "realloc", "free",
    "aligned_alloc", "posix_memalign", "abs", "labs", "llabs", "__stack_chk_fail",
    "__assert_fail", "atexit", "__cxa_atexit", "__dso_handle", "_GLOBAL_OFFSET_TABLE_",
    "__gxx_personality_v0", "_Unwind_Resume", "__cxa_guard_acquire", "__cxa_guard_release",
    "__cxa_guard_abort", "__cxa_pure_virtual", "__cxa_begin_catch", "__cxa_end_catch",
    "__cxa_allocate_exception", "__cxa_free_exception", "__cxa_throw", "__cxa_rethrow",
    "__cxa_throw_bad_array_new_length", "_ZSt9terminatev", "__cpu_indicator_init",
    "__cpu_model", "__cpu_features2", "__tls_get_addr", "omp_set_num_threads",
    "omp_in_parallel",
})  # fmt: skip
BASE_PATTERNS = (
    r"_ZSt\d+__throw_\w+",  # std::__throw_length_error and friends
    r"_Zn[wa]m(St11align_val_t)?(RKSt9nothrow_t)?",  # operator new
    r"_Zd[la]Pv(m)?(St11align_val_t)?(RKSt9nothrow_t)?",  # operator delete
    r"_ZT[IVS]S[ti]\w*",  # typeinfo and vtables of std:: classes (exceptions)
    r"_ZGV[bcde][NM]\d+[vlu]+_\w+",  # libmvec (vectorized math)
    r"GOMP_(?!target)\w+",  # OpenMP regions, loops, barriers, critical sections
    r"omp_get_\w+",
    r"__(mul|div)[sdxt]c3|__(u?div|u?mod)[dt]i3|__popcount[sdt]i2|__(extend|trunc)\w+f2",
    r"__float\w+|__fix\w+",  # libgcc conversions
)
CUDA_EXACT = frozenset({
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel", "cudaMalloc",
    "cudaFree", "cudaMallocAsync", "cudaFreeAsync", "cudaMemcpy", "cudaMemcpyAsync",
    "cudaMemset", "cudaMemsetAsync", "cudaMemcpy2D", "cudaMemcpy2DAsync", "cudaMemcpyToSymbol",
    "cudaMemcpyToSymbolAsync", "cudaMemcpyFromSymbol", "cudaMemcpyFromSymbolAsync",
    "cudaGetSymbolAddress", "cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString",
    "cudaGetErrorName", "cudaDeviceSynchronize", "cudaStreamSynchronize",
    "cudaFuncSetAttribute", "cudaFuncGetAttributes", "cudaFuncSetCacheConfig",
    "cudaFuncSetSharedMemConfig", "cudaGetDevice", "cudaGetDeviceCount",
    "cudaGetDeviceProperties", "cudaDeviceGetAttribute", "cudaDeviceGetLimit",
    "cudaMemGetInfo", "cudaDriverGetVersion", "cudaRuntimeGetVersion", "cudaCreateChannelDesc",
    "cudaPointerGetAttributes",
})  # fmt: skip
CUDA_PATTERNS = (
    r"__cuda(RegisterFatBinary|RegisterFatBinaryEnd|UnregisterFatBinary|RegisterFunction|"
    r"RegisterVar|RegisterManagedVar|RegisterTexture|RegisterSurface|PushCallConfiguration|"
    r"PopCallConfiguration|InitModule|LaunchKernel|GetKernel)(_ptsz|_ptds)?",
    r"__cudaRegisterLinkedBinary\w*",
    r"cudaOccupancy\w+",
)
CUDA_SUFFIX = re.compile(r"(_v\d+)?(_ptsz|_ptds)?$")

# Device code: a `printf` in a kernel writes to the process's stdout.
DEVICE_BLOCKED = {"vprintf": "printf in device code"}


@functools.cache
def _base_re() -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in BASE_PATTERNS))


@functools.cache
def _cuda_re() -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in CUDA_PATTERNS))


def _nm(path: str, *flags: str) -> list[str]:
    nm = shutil.which("nm")
    if nm is None or not path:
        return []
    try:
        out = subprocess.run(
            [nm, *flags, path], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [name.split("@")[0] for _, name in parse_nm(out)]


def _lib(name: str) -> str:
    """A library's path as the C compiler finds it (empty when it does not)."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return ""
    try:
        path = subprocess.run(
            [cc, f"-print-file-name={name}"], capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return path if "/" in path else ""


@functools.cache
def libm_exports() -> frozenset[str]:
    """Every function libm exports: a solution may call any of them."""
    return frozenset(_nm(_lib("libm.so.6"), "-D", "--defined-only"))


def cudart_static() -> str:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return ""
    try:  # the wrapper script may point elsewhere: ask nvcc where its libraries are
        out = subprocess.run([nvcc, "--dryrun", "-x", "cu", "-c", "/dev/null", "-o", "/dev/null"],
                             capture_output=True, text=True, timeout=30).stderr  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return ""
    dirs = [d for line in out.splitlines() if "LIBRARIES=" in line
            for d in re.findall(r'-L"?([^"\s]+)', line)]  # fmt: skip
    top = re.search(r"TOP=(\S+)", out)
    if top:
        dirs += [top.group(1) + "/lib", top.group(1) + "/lib64"]
    for directory in dirs:
        path = os.path.join(directory, "libcudart_static.a")
        if os.path.exists(path):
            return os.path.realpath(path)
    return ""


@functools.cache
def runtime_exports(cuda: bool) -> frozenset[str]:
    """Symbols the runtimes a solution links against define: defining one of them
    interposes it for the whole program (the harness included)."""
    names: set[str] = set()
    for lib in ("libc.so.6", "libm.so.6", "libstdc++.so", "libgomp.so", "libgcc_s.so.1"):
        names.update(_nm(_lib(lib), "-D", "--defined-only"))
    if cuda:
        names.update(_nm(cudart_static(), "--defined-only", "-g"))
    names.discard("")
    return frozenset(n for n in names if not n.isupper())  # drop version nodes (GLIBC_2.2.5)


def parse_nm(text: str) -> list[tuple[str, str]]:
    """(type letter, name) pairs from `nm` output (with or without addresses)."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and len(parts[-2]) == 1:
            out.append((parts[-2], parts[-1]))
    return out


def allowed_undefined(name: str, *, cuda: bool, extra: Iterable[str] = ()) -> bool:
    base = name.split("@")[0]
    if base in BASE_EXACT or base in libm_exports() or base in set(extra):
        return True
    if _base_re().fullmatch(base):
        return True
    if cuda:
        plain = CUDA_SUFFIX.sub("", base)
        return plain in CUDA_EXACT or bool(_cuda_re().fullmatch(base))
    return False


def undefined_violations(
    names: Iterable[str], *, cuda: bool, extra: Iterable[str] = ()
) -> list[Violation]:
    extra = list(extra)
    bad = sorted({n for n in names if not allowed_undefined(n, cuda=cuda, extra=extra)})
    if not bad:
        return []
    shown = ", ".join(bad[:6]) + (f" (+{len(bad) - 6} more)" if len(bad) > 6 else "")
    return [cheat("symbols", f"uses what a kernel may not: {shown}")]


def defined_violations(names: Iterable[str], *, cuda: bool) -> list[Violation]:
    exports = runtime_exports(cuda)
    bad = sorted({n for n in names if n == "main" or n.split("@")[0] in exports})
    if not bad:
        return []
    return [cheat("interposition", f"defines runtime symbols: {', '.join(bad[:6])}")]


def device_violations(ptx: str) -> list[Violation]:
    found = []
    externs = set(re.findall(r"\.extern\s+\.func\s*(?:\([^)]*\))?\s*(\w+)", ptx))
    for name, why in DEVICE_BLOCKED.items():
        if name in externs:
            found.append(cheat("device_io", why))
    return found
