"""The Rust toolchain in use: resolved once, past rustup's proxy, with its exact version."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from vibes_eval.core.errors import UserError


@dataclass(frozen=True)
class RustToolchain:
    rustc: Path  # the real binary in the sysroot: rustup's proxy costs ~20 ms per call
    cargo: Path | None
    sysroot: Path
    version: str  # `rustc -vV` first line, e.g. "rustc 1.95.0 (59807616e 2026-04-14)"
    host: str  # target triple

    @property
    def fingerprint(self) -> str:
        return f"{self.version} {self.host}"

    @property
    def bin_dir(self) -> Path:
        return self.rustc.parent


ENV = "VIBES_RUSTC"  # the rustc to use: a path, or a name looked up on PATH


def find_toolchain(rustc: str | None = None) -> RustToolchain:
    """Locate rustc (``rustc`` when given, else ``VIBES_RUSTC``, else `rustc` on PATH) and
    describe it. Its version is part of every run's identity and cache key.

    Raises:
        UserError: rustc is missing or does not run (naming VIBES_RUSTC when it chose).
    """
    chosen = rustc or os.environ.get(ENV) or "rustc"
    return _describe(chosen, from_env=rustc is None and bool(os.environ.get(ENV)))


@functools.cache
def _describe(rustc: str, *, from_env: bool) -> RustToolchain:
    exe = shutil.which(rustc)
    if exe is None:
        if from_env:
            raise UserError(f"{ENV}={rustc}: no such executable; point it at a rustc binary")
        raise UserError(
            "rustc not found on PATH; install Rust (https://rustup.rs or Debian's rustc) "
            f"or set {ENV} to its path"
        )
    try:
        info = subprocess.run([exe, "-vV"], capture_output=True, text=True, check=True).stdout
        sysroot = subprocess.run(
            [exe, "--print", "sysroot"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        where = f"{ENV}={rustc}: " if from_env else ""
        raise UserError(f"{where}{exe} does not run: {exc}") from None
    if not info.startswith("rustc ") or not sysroot:
        raise UserError(f"{exe} does not answer like rustc (`-vV`: {info[:60]!r})")
    fields = dict(line.split(": ", 1) for line in info.splitlines()[1:] if ": " in line)
    real = Path(sysroot) / "bin" / "rustc"
    cargo = Path(sysroot) / "bin" / "cargo"
    return RustToolchain(
        rustc=real if real.exists() else Path(exe),
        cargo=cargo if cargo.exists() else (Path(c) if (c := shutil.which("cargo")) else None),
        sysroot=Path(sysroot),
        version=info.splitlines()[0].strip(),
        host=fields.get("host", "unknown"),
    )
