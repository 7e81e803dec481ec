"""Build the C launcher once per source version and cache the binary."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from importlib import resources
from pathlib import Path

from vibes_eval.core.errors import RunnerBroken, RunnerUnavailable
from vibes_eval.paths import cache_dir

_lock = threading.Lock()
_built: dict[str, Path] = {}


def launcher_path(source_name: str = "launcher.c", extra_flags: tuple[str, ...] = ()) -> Path:
    """Path of the compiled launcher, compiling it with ``cc`` on first use.

    Raises:
        RunnerUnavailable: no C compiler here.
        RunnerBroken: the compiler is there and the build failed (a bug or a broken
            toolchain, e.g. no libc headers): its first error.
    """
    source = resources.files("vibes_eval.runners").joinpath(source_name).read_bytes()
    digest = hashlib.sha256(source + " ".join(extra_flags).encode()).hexdigest()[:16]
    with _lock:
        if digest in _built:
            return _built[digest]
        out_dir = cache_dir() / "launcher" / digest
        binary = out_dir / "vibes-launch"
        if not binary.exists():
            cc = shutil.which("cc") or shutil.which("gcc")
            if cc is None:
                raise RunnerUnavailable("a C compiler (cc) is needed to build the sandbox launcher")
            out_dir.mkdir(parents=True, exist_ok=True)
            src = out_dir / source_name
            src.write_bytes(source)
            tmp = out_dir / f"vibes-launch.{os.getpid()}.tmp"
            proc = subprocess.run(
                [cc, "-O2", "-Wall", "-o", str(tmp), str(src), *extra_flags],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                errors = [ln for ln in proc.stderr.splitlines() if "error" in ln]
                first = (errors or proc.stderr.strip().splitlines() or ["no output"])[0]
                raise RunnerBroken(
                    f"building the sandbox launcher with {cc} failed (exit "
                    f"{proc.returncode}): {first.strip()[:200]}"
                )
            tmp.replace(binary)  # atomic: parallel first uses never see a half-written file
        _built[digest] = binary
        return binary
