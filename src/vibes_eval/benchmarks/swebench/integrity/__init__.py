"""What keeps a forged result from being resolved: the static checks of a patch
(``tampering``) and the harness's pytest plugin (``probe/``, loaded from a read-only mount;
the cross-checks that read its record live in ``judge``)."""

from pathlib import Path

PROBE_DIR = Path(__file__).resolve().parent / "probe"
