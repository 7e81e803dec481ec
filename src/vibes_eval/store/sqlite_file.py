"""A read-only look at a SQLite file before the store opens it: anything that is not a
vibes-eval store (another format, another application's tables, damage) is refused before
a single byte of it can change (setting WAL mode alone would rewrite its header)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from vibes_eval.store import schema
from vibes_eval.store.base import ForeignStore, StoreMissing, StoreUnavailable


def check_sqlite_file(path: Path, *, create: bool, is_default: bool) -> None:
    """Raises:
    StoreMissing: no file and ``create`` is False.
    StoreUnavailable: a directory, an unreadable file, or a missing folder (created only
        for the default store).
    ForeignStore: not SQLite, other tables, or unreadable as a database.
    """
    if path.is_dir():
        raise StoreUnavailable("--store is a directory; give a file path", path=path)
    if not path.exists():
        if not create:
            raise StoreMissing(f"no store at {path} yet")
        if is_default:
            path.parent.mkdir(parents=True, exist_ok=True)
        elif not path.parent.is_dir():
            raise StoreUnavailable("its directory does not exist", path=path)
        return
    # The file is read through SQLite only: closing a descriptor of our own on it (a plain
    # open() to read the header) would drop every POSIX lock this process holds on it, so
    # another process's last writer could delete the WAL under our open connections (seen
    # as "disk I/O error" in a long-lived reader such as `vibes serve`).
    try:
        if path.stat().st_size == 0:
            return  # an empty file holds nothing to lose; SQLite treats it as a new database
    except OSError as exc:
        raise StoreUnavailable(f"cannot read store: {exc.strerror}", path=path) from None
    if not os.access(path, os.R_OK):
        raise StoreUnavailable("cannot read store: Permission denied", path=path)
    try:
        ro = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)
        try:
            names = {r[0] for r in ro.execute("select name from sqlite_master where type='table'")}
        finally:
            ro.close()
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc):
            raise ForeignStore(
                "not a vibes-eval store (not a SQLite database); left untouched", path=path
            ) from None
        raise ForeignStore(
            f"corrupt or unreadable SQLite database ({exc}); left untouched", path=path
        ) from None
    foreign = sorted(n for n in names if not n.startswith(("vibes_", "sqlite_")))
    if names and (schema.meta.name not in names or foreign):
        shown = ", ".join(foreign[:5]) or ", ".join(sorted(names)[:5])
        raise ForeignStore(
            f"not a vibes-eval store (it has tables {shown}); left untouched", path=path
        )
