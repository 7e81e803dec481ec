"""Resolve `--store PATH|URL` to a database URL: SQLite under the data dir by default, a
path for another SQLite file, or a PostgreSQL URL."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from vibes_eval.paths import data_dir
from vibes_eval.store.base import StoreMissing, StoreUnavailable

DEFAULT_NAME = "results.sqlite"
ENV = "VIBES_STORE"  # the same as --store, for whole sessions and CI


OFF = "none"  # `--store none`: record nothing (a file of that name: ./none)


def is_off(spec: str | None) -> bool:
    return spec is not None and spec.strip().lower() == OFF


@dataclass(frozen=True)
class StoreTarget:
    url: URL
    sqlite_path: Path | None  # set for SQLite files
    is_default: bool = False

    @property
    def display(self) -> str:
        if self.sqlite_path is not None:
            return str(self.sqlite_path)
        # Shown as users write it: without the driver suffix, password masked.
        return self.url.set(drivername=self.url.get_backend_name()).render_as_string(
            hide_password=True
        )


def default_path() -> Path:
    return data_dir() / DEFAULT_NAME


def resolve(spec: str | None) -> StoreTarget:
    """``spec``: None (the default store), a file path, ``sqlite:///path``, or
    ``postgresql://user:pass@host/db`` (``postgres://`` and ``postgresql+psycopg://`` too).

    Raises:
        StoreUnavailable: an unsupported or malformed URL, an in-memory SQLite URL, or
            ``none`` (recording off) where a store is needed.
    """
    if is_off(spec):
        raise StoreUnavailable("--store none turns recording off; this command needs a store")
    if spec is None or not spec.strip():
        path = default_path()
        return StoreTarget(URL.create("sqlite", database=str(path)), path, is_default=True)
    spec = spec.strip()
    if "://" not in spec:
        path = Path(os.path.expanduser(spec)).absolute()
        return StoreTarget(URL.create("sqlite", database=str(path)), path)
    scheme = spec.split("://", 1)[0].lower()
    if scheme in ("postgres", "postgresql"):
        # psycopg 3 is the driver we ship; SQLAlchemy's bare scheme means psycopg2.
        spec = "postgresql+psycopg://" + spec.split("://", 1)[1]
    try:
        url = make_url(spec)
    except ArgumentError:
        raise StoreUnavailable(f"--store: malformed URL {_hide(spec)!r}") from None
    if url.get_backend_name() == "sqlite":
        if not url.database or url.database == ":memory:":
            raise StoreUnavailable("--store: an in-memory SQLite store would lose every run")
        path = Path(os.path.expanduser(url.database)).absolute()
        return StoreTarget(URL.create("sqlite", database=str(path)), path)
    if url.get_backend_name() == "postgresql":
        if url.get_driver_name() != "psycopg":
            url = url.set(drivername="postgresql+psycopg")
        return StoreTarget(url, None)
    raise StoreUnavailable(
        f"--store: unsupported database {scheme!r}; give a file path, sqlite:///PATH or "
        "postgresql://USER:PASSWORD@HOST/DB"
    )


def for_reading(spec: str | None) -> StoreTarget:
    """``resolve(spec)`` for a command that only reads. A SQLite file named with --store (or
    VIBES_STORE) that does not exist is a typo, so it is refused rather than read as a store
    with no runs; the default store not existing yet only means nothing was recorded.

    Raises:
        StoreMissing: the named file does not exist (the message names it).
        StoreUnavailable: as ``resolve``.
    """
    target = resolve(spec)
    path = target.sqlite_path
    if path is None or target.is_default or path.exists():
        return target
    hint = ""
    if spec is not None and spec.strip().lower().startswith("sqlite:///"):
        given = spec.strip()[len("sqlite:///") :]
        if not given.startswith(("/", "~")):  # a relative path, perhaps meant as absolute
            hint = f"; sqlite:///{given} is relative, an absolute path takes four slashes"
    raise StoreMissing(f"no store file {path}{hint}")


def _hide(spec: str) -> str:
    """A URL with its password masked, for messages."""
    head, sep, rest = spec.partition("://")
    creds, at, host = rest.rpartition("@")
    if not at or ":" not in creds:
        return spec
    return f"{head}{sep}{creds.split(':', 1)[0]}:***@{host}"
