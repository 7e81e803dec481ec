"""The tables. ``vibes_events`` is the log and the only source of truth; the others are
projections that ``rebuild`` can drop and derive again. Every name has a ``vibes_`` prefix
so the store can share a PostgreSQL database with other applications."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

STORE_NAME = "vibes-eval"
# Layout of the tables. Opening a store of an older layout re-derives the projections from
# the events in the new layout (``sql.SqlStore._upgrade``); the events are never changed.
# 2: samples keep `wall_s` and a JSON of measurements instead of HumanEval's timings.
# 3: runs keep a second cache context (every setting); verdicts not obtained alone are
#    cached under it (``cache.Contexts``).
TABLES_VERSION = 3

# SQLite only auto-increments an INTEGER PRIMARY KEY (its rowid).
SeqType = BigInteger().with_variant(Integer(), "sqlite")

metadata = MetaData()

meta = Table(
    "vibes_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

events = Table(
    "vibes_events",
    metadata,
    Column("seq", SeqType, primary_key=True, autoincrement=True),
    Column("run_id", String(64), nullable=False),
    Column("type", String(40), nullable=False),
    Column("at", String(32), nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("body", Text, nullable=False),  # the event's JSON exactly as written
    Index("vibes_events_run", "run_id", "seq"),
)

runs = Table(
    "vibes_runs",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("benchmark", String(100), nullable=False),
    Column("status", String(16), nullable=False),
    Column("labels", JSON, nullable=False),
    Column("started_at", String(32), nullable=False),
    Column("updated_at", String(32), nullable=False),
    Column("finished_at", String(32)),
    Column("n_samples", Integer, nullable=False),
    Column("n_done", Integer, nullable=False),
    Column("n_passed", Integer, nullable=False),
    Column("metrics", JSON),
    Column("runner", String(64), nullable=False),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("proc_start", String(64), nullable=False),
    Column("cache_context", String(64), nullable=False),
    Column("settings_context", String(64), nullable=False),
    Column("started_seq", SeqType, nullable=False),
    Column("last_seq", SeqType, nullable=False),
)

samples = Table(
    "vibes_samples",
    metadata,
    # The primary key is what makes "every sample exactly once" hold in the log too: the
    # event and its row are written in one transaction, so a second verdict fails both.
    Column("run_id", String(64), primary_key=True),
    Column("task_id", String(255), primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("line", Integer, nullable=False),
    Column("problem_hash", String(64), nullable=False),
    Column("completion_hash", String(64), nullable=False),
    Column("passed", Boolean, nullable=False),
    Column("reason", String(40), nullable=False),
    Column("detail", Text, nullable=False),
    Column("wall_s", Float, nullable=False),
    Column("measurements", JSON, nullable=False),
    Column("cached", Boolean, nullable=False),
    Column("seq", SeqType, nullable=False),
    Index("vibes_samples_wall", "run_id", "wall_s"),  # the slowest samples of a run
)

cache = Table(
    "vibes_cache",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("seq", SeqType, nullable=False),  # the SampleEvaluated event it came from
    Column("run_id", String(64), nullable=False),
    Column("result", Text, nullable=False),  # SampleResult JSON
)

PROJECTIONS = (runs, samples, cache)
