"""The Rust toolchain in use: resolved once, past rustup's proxy, with its exact version."""

from __future__ import annotations

import functools
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


@functools.cache
def find_toolchain(rustc: str = "rustc") -> RustToolchain:
    """Locate rustc (``VIBES_RUSTC`` or PATH) and describe it.

    Raises:
        UserError: rustc is missing or does not run.
    """
    exe = shutil.which(rustc)
    if exe is None:
        raise UserError(
            "rustc not found on PATH; install Rust (https://rustup.rs or Debian's rustc) "
            "or set VIBES_RUSTC to its path"
        )
    try:
        info = subprocess.run([exe, "-vV"], capture_output=True, text=True, check=True).stdout
        sysroot = subprocess.run(
            [exe, "--print", "sysroot"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise UserError(f"{exe} does not run: {exc}") from None
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
