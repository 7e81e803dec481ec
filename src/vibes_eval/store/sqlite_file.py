"""A read-only look at a SQLite file before the store opens it: anything that is not a
vibes-eval store (another format, another application's tables, damage) is refused before
a single byte of it can change (setting WAL mode alone would rewrite its header)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vibes_eval.store import schema
from vibes_eval.store.base import ForeignStore, StoreMissing, StoreUnavailable

SQLITE_HEADER = b"SQLite format 3\x00"


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
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreUnavailable(f"cannot read store: {exc.strerror}", path=path) from None
    if not head:
        return  # an empty file holds nothing to lose; SQLite treats it as a new database
    if head != SQLITE_HEADER:
        raise ForeignStore(
            "not a vibes-eval store (not a SQLite database); left untouched", path=path
        )
    try:
        ro = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)
        try:
            names = {r[0] for r in ro.execute("select name from sqlite_master where type='table'")}
        finally:
            ro.close()
    except sqlite3.DatabaseError as exc:
        raise ForeignStore(
            f"corrupt or unreadable SQLite database ({exc}); left untouched", path=path
        ) from None
    foreign = sorted(n for n in names if not n.startswith(("vibes_", "sqlite_")))
    if names and (schema.meta.name not in names or foreign):
        shown = ", ".join(foreign[:5]) or ", ".join(sorted(names)[:5])
        raise ForeignStore(
            f"not a vibes-eval store (it has tables {shown}); left untouched", path=path
        )
