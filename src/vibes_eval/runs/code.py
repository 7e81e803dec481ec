"""What judged a verdict: a fingerprint of this installation's code (every file of the
package but bytecode). It is part of the result cache's context, so a change to a judge,
a harness or a runner (an upgrade, a fix) never serves the verdicts of the code before."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import vibes_eval

_SKIP = (".pyc", ".pyo", ".so", ".o")


@functools.cache
def fingerprint() -> str:
    root = Path(vibes_eval.__file__).parent
    files = sorted(
        p for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in _SKIP
    )  # fmt: skip
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]
