"""``EventStore`` on SQLAlchemy 2 Core: SQLite (WAL, the default) or PostgreSQL (psycopg 3).

Opening never changes a file or database that is not a vibes-eval store: a SQLite file is
checked read-only (``sqlite_file``) before anything writes to it.
"""

from __future__ import annotations

import gc
import sqlite3
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    Integer,
    Text,
    and_,
    cast,
    create_engine,
    event,
    func,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError
from sqlalchemy.pool import QueuePool

from vibes_eval.core.types import SampleResult
from vibes_eval.store import schema
from vibes_eval.store.base import (
    EventStore,
    ForeignStore,
    ReadOnlyStore,
    RunInfo,
    SampleOrder,
    SamplePage,
    SampleRow,
    ScoredRow,
    StoreConflict,
    StoredEvent,
    StoreError,
    StoreMissing,
    StoreUnavailable,
    UnknownRun,
    check_page,
)
from vibes_eval.store.events import (
    SCHEMA_VERSION,
    Event,
    EventDecodeError,
    RunStarted,
    SampleEvaluated,
    decode,
    encode,
)
from vibes_eval.store.projections import apply
from vibes_eval.store.sqlite_file import check_sqlite_file
from vibes_eval.store.urls import StoreTarget

PAGE = 2000  # events read per query
LOCK_ID = 0x76696265  # PostgreSQL advisory lock serializing appends ("vibe")
MMAP_BYTES = 1 << 30  # read-only SQLite connections map up to this much of the file


@contextmanager
def _no_gc() -> Iterator[None]:
    """No cyclic garbage collection while a bulk read builds 100,000s of objects that hold
    no cycles: the collector would otherwise walk them all, over and over."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def open_store(target: StoreTarget, *, create: bool = True, read_only: bool = False) -> SqlStore:
    """Open (and with ``create``, initialize) the store at ``target``. ``read_only``: every
    connection is read-only (SQLite ``mode=ro``, PostgreSQL read-only transactions), a store
    of an older layout is refused rather than upgraded, and ``append``/``rebuild`` raise
    ``ReadOnlyStore``: nothing can write, whatever the caller does.

    Raises:
        StoreMissing: ``create`` is False (or ``read_only``) and there is no store there yet.
        ForeignStore: not a vibes-eval store, corrupt, or from a newer version.
        StoreUnavailable: cannot connect, or the file cannot be created; read-only, a store
            of an older layout.
    """
    return SqlStore(target, create=create and not read_only, read_only=read_only)


class SqlStore(EventStore):
    def __init__(
        self, target: StoreTarget, *, create: bool = True, read_only: bool = False
    ) -> None:
        self.target = target
        self.url = target.display
        self.read_only = read_only
        self._contexts: dict[str, str] = {}
        self.upgraded_from: int | None = None  # the old table layout, when opening upgraded it
        self._append_lock = threading.Lock()
        create = create and not read_only
        if target.sqlite_path is not None:
            check_sqlite_file(target.sqlite_path, create=create, is_default=target.is_default)
        self.engine = self._make_engine()
        self._write = self.engine.execution_options(vibes_write=True)
        try:
            self._init_schema(create)
        except BaseException:
            self.engine.dispose()
            raise

    # -- opening ------------------------------------------------------------------------

    def _make_engine(self) -> Engine:
        if self.target.sqlite_path is not None:
            if self.read_only:
                # SQLite refuses every write on these connections. The URI is built here:
                # SQLAlchemy's URL parser would cut a path at '#' or '?'.
                uri = f"{self.target.sqlite_path.as_uri()}?mode=ro"
                engine = create_engine(
                    "sqlite://",
                    creator=lambda: sqlite3.connect(
                        uri, uri=True, timeout=60, check_same_thread=False
                    ),
                    poolclass=QueuePool,
                )
            else:
                engine = create_engine(self.target.url, connect_args={"timeout": 60})

            @event.listens_for(engine, "connect")
            def _on_connect(dbapi_conn: Any, _record: Any) -> None:
                # Transactions are begun explicitly below, not by the driver's heuristics.
                dbapi_conn.isolation_level = None
                cur = dbapi_conn.cursor()
                cur.execute("PRAGMA journal_mode=WAL")  # readers never block the writer
                cur.execute("PRAGMA synchronous=FULL")  # a commit survives power loss too
                cur.execute("PRAGMA busy_timeout=60000")
                if self.read_only:
                    # Reads of a big run touch pages all over the file: map it, not read it.
                    cur.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
                cur.close()

            @event.listens_for(engine, "begin")
            def _on_begin(conn: Connection) -> None:
                # Writers take the lock up front: no deadlock upgrading a read transaction.
                write = conn.get_execution_options().get("vibes_write")
                conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

            return engine
        engine = create_engine(
            self.target.url, connect_args={"connect_timeout": 10}, pool_pre_ping=True
        )
        if self.read_only:

            @event.listens_for(engine, "connect")
            def _read_only(dbapi_conn: Any, _record: Any) -> None:
                # The server refuses any write in this session's transactions.
                dbapi_conn.read_only = True

        return engine

    def _init_schema(self, create: bool) -> None:
        try:
            with (self.engine if self.read_only else self._write).begin() as conn:
                if conn.dialect.name == "postgresql":
                    # Two processes creating the tables at once would collide.
                    conn.execute(text("select pg_advisory_xact_lock(:id)"), {"id": LOCK_ID})
                names = set(inspect(conn).get_table_names())
                if schema.meta.name in names:
                    version = self._check_meta(conn)
                    missing = [t for t in schema.metadata.sorted_tables if t.name not in names]
                    if missing:
                        raise ForeignStore(
                            f"damaged vibes-eval store: table {missing[0].name} is missing; "
                            "left untouched"
                        )
                    if version < schema.TABLES_VERSION:
                        if self.read_only:
                            raise StoreUnavailable(
                                f"{self.url}: a store of an older layout ({version}); open it "
                                "once with `vibes eval results` to upgrade it"
                            )
                        self._upgrade(conn, version)
                    return
                ours = sorted(n for n in names if n.startswith("vibes_"))
                if ours:
                    raise ForeignStore(
                        f"{self.url}: has tables {', '.join(ours)} but no {schema.meta.name}; "
                        "not a vibes-eval store, left untouched"
                    )
                if not create:
                    raise StoreMissing(f"no store at {self.url} yet")
                schema.metadata.create_all(conn)
                conn.execute(
                    schema.meta.insert(),
                    [
                        {"key": "store", "value": schema.STORE_NAME},
                        {"key": "tables_version", "value": str(schema.TABLES_VERSION)},
                        {"key": "events_version", "value": str(SCHEMA_VERSION)},
                    ],
                )
        except StoreError:
            raise
        except SQLAlchemyError as exc:
            raise self._error(exc, "cannot open store") from None

    def _check_meta(self, conn: Connection) -> int:
        """The store's table layout version. Raises: ForeignStore (not ours, or newer)."""
        values = dict(conn.execute(select(schema.meta.c.key, schema.meta.c.value)).all())
        if values.get("store") != schema.STORE_NAME:
            raise ForeignStore(f"{self.url}: not a vibes-eval store; left untouched")
        try:
            version = int(values.get("tables_version", ""))
        except ValueError:
            raise ForeignStore(f"{self.url}: damaged vibes-eval store metadata") from None
        if version > schema.TABLES_VERSION:
            raise ForeignStore(
                f"{self.url}: written by a newer vibes-eval (store layout {version}, this "
                f"version reads {schema.TABLES_VERSION}); upgrade vibes-eval"
            )
        return version

    def _upgrade(self, conn: Connection, version: int) -> None:
        """Move a store of an older table layout to this one, inside the opening
        transaction: the projections are dropped, created in the new layout and derived
        again from the events, which stay exactly as they were written."""
        for table in reversed(schema.PROJECTIONS):
            table.drop(conn)
        for table in schema.PROJECTIONS:
            table.create(conn)
        contexts: dict[str, str] = {}
        for page in self._pages(conn, None):
            apply(conn, page, contexts)
        conn.execute(
            update(schema.meta)
            .where(schema.meta.c.key == "tables_version")
            .values(value=str(schema.TABLES_VERSION))
        )
        conn.execute(
            update(schema.meta)
            .where(schema.meta.c.key == "events_version")
            .values(value=str(SCHEMA_VERSION))
        )
        self.upgraded_from = version

    def _error(self, exc: SQLAlchemyError, what: str) -> StoreError:
        """A driver error as one line. SQLite reports damage (SQLITE_CORRUPT, SQLITE_NOTADB)
        as a plain DatabaseError; its subclasses are other troubles."""
        orig = getattr(exc, "orig", None) or exc
        reason = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
        if type(orig) is sqlite3.DatabaseError:
            return ForeignStore(f"{self.url}: corrupt store ({reason}); left untouched")
        if isinstance(exc, DBAPIError) and exc.connection_invalidated:
            return StoreUnavailable(f"{self.url}: connection lost ({reason})")
        return StoreUnavailable(f"{what} {self.url}: {reason}")

    # -- writing ------------------------------------------------------------------------

    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStore(f"{self.url} is open read-only")

    def append(self, events: Sequence[Event]) -> list[int]:
        self._check_writable()
        if not events:
            return []
        rows = [
            {
                "run_id": ev.run_id,
                "type": ev.type,
                "at": ev.at,
                "schema_version": ev.schema_version,
                "body": encode(ev),
            }
            for ev in events
        ]
        insert = schema.events.insert().returning(schema.events.c.seq, sort_by_parameter_order=True)
        # One append at a time per process; the database serializes processes.
        with self._append_lock:
            try:
                with self._write.begin() as conn:
                    if conn.dialect.name == "postgresql":
                        # Commit order = seq order, so readers never see a gap filled later.
                        conn.execute(text("select pg_advisory_xact_lock(:id)"), {"id": LOCK_ID})
                    seqs = [int(s) for s in conn.execute(insert, rows).scalars().all()]
                    apply(
                        conn,
                        [StoredEvent(s, e) for s, e in zip(seqs, events, strict=True)],
                        self._contexts,
                    )
            except IntegrityError as exc:
                self._contexts.clear()  # may hold a context of a rolled-back run
                raise self._conflict(exc, events) from None
            except StoreConflict:
                self._contexts.clear()
                raise
            except SQLAlchemyError as exc:
                self._contexts.clear()
                raise self._error(exc, "cannot write to store") from None
        return seqs

    def _conflict(self, exc: IntegrityError, events: Sequence[Event]) -> StoreConflict:
        message = str(exc.orig)
        run_id = events[0].run_id
        if schema.samples.name in message or "idx" in message:
            return StoreConflict(
                f"a sample of run '{run_id}' already has a verdict "
                "(is another process evaluating this run?)"
            )
        if schema.runs.name in message or "run_id" in message:
            return StoreConflict(f"run id '{run_id}' is already taken")
        return StoreConflict(f"conflicting write for run '{run_id}': {message.splitlines()[0]}")

    def rebuild(self) -> dict[str, int]:
        self._check_writable()
        with self._append_lock:
            try:
                with self._write.begin() as conn:
                    if conn.dialect.name == "postgresql":
                        conn.execute(text("select pg_advisory_xact_lock(:id)"), {"id": LOCK_ID})
                    for table in reversed(schema.PROJECTIONS):
                        conn.execute(table.delete())
                    contexts: dict[str, str] = {}
                    for page in self._pages(conn, None):
                        apply(conn, page, contexts)
                    counts = {
                        t.name: int(conn.execute(select(func.count()).select_from(t)).scalar_one())
                        for t in schema.PROJECTIONS
                    }
                    counts[schema.events.name] = int(
                        conn.execute(select(func.count()).select_from(schema.events)).scalar_one()
                    )
            except IntegrityError as exc:
                raise StoreConflict(
                    f"the events contradict each other ({str(exc.orig).splitlines()[0]}); "
                    "nothing changed"
                ) from None
            except SQLAlchemyError as exc:
                raise self._error(exc, "cannot rebuild") from None
            finally:
                self._contexts.clear()
        return counts

    # -- reading ------------------------------------------------------------------------

    def _pages(
        self, conn: Connection, run_id: str | None, type_: str | None = None
    ) -> Iterator[list[StoredEvent]]:
        t = schema.events
        last = 0
        while True:
            query = select(t.c.seq, t.c.body).where(t.c.seq > last).order_by(t.c.seq).limit(PAGE)
            if run_id is not None:
                query = query.where(t.c.run_id == run_id)
            if type_ is not None:
                query = query.where(t.c.type == type_)
            rows = conn.execute(query).all()
            if not rows:
                return
            page = []
            for seq, body in rows:
                try:
                    page.append(StoredEvent(int(seq), decode(body)))
                except EventDecodeError as exc:
                    raise ForeignStore(f"{self.url}: event {seq}: {exc}") from None
            yield page
            last = rows[-1][0]

    def _read(self, run_id: str | None, type_: str | None = None) -> Iterator[StoredEvent]:
        try:
            with self.engine.connect() as conn:
                for page in self._pages(conn, run_id, type_):
                    yield from page
        except SQLAlchemyError as exc:
            raise self._error(exc, "cannot read store") from None

    def events(self, run_id: str | None = None) -> Iterator[StoredEvent]:
        return self._read(run_id)

    def sample_events(self, run_id: str) -> Iterator[StoredEvent]:
        return self._read(run_id, "sample_evaluated")

    def _query(self, query: Any) -> list[Any]:
        try:
            with self.engine.connect() as conn:
                return list(conn.execute(query).all())
        except SQLAlchemyError as exc:
            raise self._error(exc, "cannot read store") from None

    @staticmethod
    def _run_info(row: Any) -> RunInfo:
        return RunInfo(
            run_id=row.run_id,
            benchmark=row.benchmark,
            status=row.status,
            labels=dict(row.labels or {}),
            started_at=row.started_at,
            updated_at=row.updated_at,
            finished_at=row.finished_at,
            n_samples=row.n_samples,
            n_done=row.n_done,
            n_passed=row.n_passed,
            metrics=row.metrics,
            runner=row.runner,
            host=row.host,
            pid=row.pid,
            proc_start=row.proc_start,
            extra={"started_seq": row.started_seq, "last_seq": row.last_seq},
        )

    def runs(self) -> list[RunInfo]:
        t = schema.runs
        rows = self._query(select(t).order_by(t.c.started_at.desc(), t.c.run_id))
        return [self._run_info(r) for r in rows]

    def run(self, run_id: str) -> RunInfo:
        t = schema.runs
        rows = self._query(select(t).where(t.c.run_id == run_id))
        if not rows:
            raise UnknownRun(f"unknown run id '{run_id}' in store {self.url}")
        info = self._run_info(rows[0])
        body = self._query(
            select(schema.events.c.body).where(schema.events.c.seq == rows[0].started_seq)
        )
        try:
            started = decode(body[0][0])
        except (EventDecodeError, IndexError) as exc:
            raise ForeignStore(f"{self.url}: run '{run_id}': {exc}") from None
        assert isinstance(started, RunStarted)
        info.started = started
        return info

    def samples(self, run_id: str) -> list[SampleRow]:
        t = schema.samples
        rows = self._query(
            select(t).where(t.c.run_id == run_id).order_by(t.c.line, t.c.task_id, t.c.idx)
        )
        return [self._sample_row(r) for r in rows]

    @staticmethod
    def _sample_row(r: Any) -> SampleRow:
        return SampleRow(
            task_id=r.task_id,
            index=r.idx,
            line=r.line,
            passed=bool(r.passed),
            reason=r.reason,
            detail=r.detail,
            wall_s=r.wall_s,
            measurements=dict(r.measurements or {}),
            cached=bool(r.cached),
            seq=r.seq,
        )

    def task_counts(self, run_ids: Collection[str]) -> dict[str, dict[str, tuple[int, int]]]:
        t = schema.samples
        out: dict[str, dict[str, tuple[int, int]]] = {r: {} for r in run_ids}
        if not run_ids:
            return out
        passed = func.sum(t.c.passed.cast(Integer))
        query = (
            select(t.c.run_id, t.c.task_id, func.count(), passed)
            .where(t.c.run_id.in_(list(run_ids)))
            .group_by(t.c.run_id, t.c.task_id)
        )
        for run_id, task_id, n, c in self._query(query):
            out[run_id][task_id] = (int(n), int(c or 0))
        return out

    def scored(self, run_id: str) -> list[ScoredRow]:
        t = schema.samples
        # The measurements as text: decoded only by metrics that read them.
        query = select(
            t.c.task_id, t.c.idx, t.c.passed, t.c.reason, t.c.wall_s, cast(t.c.measurements, Text)
        )
        span = self._sqlite_span(run_id)
        if span is None:
            query = query.where(t.c.run_id == run_id)
        else:
            # A run's rows were inserted together: reading that stretch of the table in
            # order is twice as fast as one index lookup per row ('+' keeps SQLite off the
            # index).
            query = query.where(
                text("vibes_samples.rowid BETWEEN :lo AND :hi AND +vibes_samples.run_id = :run")
            ).params(lo=span[0], hi=span[1], run=run_id)
        names: dict[str, str] = {}  # one string per task id and reason, not one per row
        with _no_gc():
            return [
                ScoredRow(
                    names.setdefault(task, task), idx, bool(passed),
                    names.setdefault(reason, reason), wall, m,
                )
                for task, idx, passed, reason, wall, m in self._fetch_tuples(query)
            ]  # fmt: skip

    def _fetch_tuples(self, query: Any) -> list[tuple[Any, ...]]:
        """All rows of ``query`` as the driver's plain tuples: for bulk reads, where
        SQLAlchemy's row objects cost as much as the database."""
        try:
            with self.engine.connect() as conn:
                compiled = query.compile(dialect=conn.dialect)
                params: Any = compiled.params
                if compiled.positiontup is not None:
                    params = tuple(params[name] for name in compiled.positiontup)
                cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
                try:
                    cursor.execute(str(compiled), params)
                    return list(cursor.fetchall())
                finally:
                    cursor.close()
        except (SQLAlchemyError, sqlite3.Error) as exc:
            raise self._error(exc, "cannot read store") from None
        except Exception as exc:  # the driver's own errors (psycopg)
            if type(exc).__module__.startswith("psycopg"):
                raise StoreUnavailable(f"cannot read store {self.url}: {exc}") from None
            raise

    def _sqlite_span(self, run_id: str) -> tuple[int, int] | None:
        """The rowids a SQLite run's verdicts lie between, when they are mostly its own
        (not when another run's were written in between, or a resume came much later)."""
        if self.target.sqlite_path is None:
            return None
        t = schema.samples
        rowid = text("vibes_samples.rowid")
        n, lo, hi = self._query(
            select(func.count(), func.min(rowid), func.max(rowid)).where(t.c.run_id == run_id)
        )[0]
        if not n or hi - lo + 1 > 2 * n:
            return None
        return int(lo), int(hi)

    def sample_page(
        self,
        run_id: str,
        *,
        task_id: str | None = None,
        reason: str | None = None,
        passed: bool | None = None,
        order: SampleOrder = "task",
        offset: int = 0,
        limit: int = 50,
        count: bool = True,
    ) -> SamplePage:
        check_page(order, offset, limit)
        t = schema.samples
        where = [t.c.run_id == run_id]
        if task_id is not None:
            where.append(t.c.task_id == task_id)
        if reason is not None:
            where.append(t.c.reason == reason)
        if passed is not None:
            where.append(t.c.passed == passed)
        # "task" walks the primary key, "slowest"/"fastest" the (run_id, wall_s) index.
        keys = [t.c.task_id, t.c.idx]
        if order == "slowest":
            keys = [t.c.wall_s.desc(), *keys]
        elif order == "fastest":
            keys = [t.c.wall_s, *keys]
        # The page's keys first (from the index alone when only run and order are asked),
        # then those rows: a deep page does not read every row before it.
        page = (
            select(t.c.task_id.label("k_task"), t.c.idx.label("k_idx"))
            .where(*where)
            .order_by(*keys)
            .offset(offset)
            .limit(limit)
            .subquery()
        )
        rows = self._query(
            select(t)
            .join(page, and_(t.c.task_id == page.c.k_task, t.c.idx == page.c.k_idx))
            .where(t.c.run_id == run_id)
            .order_by(*keys)
        )
        total = -1
        if count:
            total = self._query(select(func.count()).select_from(t).where(*where))[0][0]
        return SamplePage([self._sample_row(r) for r in rows], int(total))

    def outcome_counts(self, run_id: str) -> dict[tuple[str, bool], int]:
        t = schema.samples
        query = (
            select(t.c.reason, t.c.passed, func.count())
            .where(t.c.run_id == run_id)
            .group_by(t.c.reason, t.c.passed)
        )
        return {(reason, bool(passed)): int(n) for reason, passed, n in self._query(query)}

    def sample_event(self, run_id: str, task_id: str, index: int) -> SampleEvaluated | None:
        s, e = schema.samples, schema.events
        query = (
            select(e.c.seq, e.c.body)
            .join(s, s.c.seq == e.c.seq)
            .where(s.c.run_id == run_id, s.c.task_id == task_id, s.c.idx == index)
        )
        rows = self._query(query)
        if not rows:
            return None
        seq, body = rows[0]
        try:
            ev = decode(body)
        except EventDecodeError as exc:
            raise ForeignStore(f"{self.url}: event {seq}: {exc}") from None
        assert isinstance(ev, SampleEvaluated)
        return ev

    def cache_lookup(self, keys: Collection[str]) -> dict[str, SampleResult]:
        t = schema.cache
        keys = list(keys)
        found: dict[str, SampleResult] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            for key, result in self._query(select(t.c.key, t.c.result).where(t.c.key.in_(chunk))):
                found[key] = SampleResult.model_validate_json(result)
        return found

    def close(self) -> None:
        self.engine.dispose()
