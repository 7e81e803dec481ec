"""What every page and JSON endpoint reads, as plain JSON-able values: the store opened
read-only, a run's summary computed once per state of the run (``memo``), pages of
samples and single events queried through the store's indexes.

Raises ``NotFound`` for an unknown run or sample and ``BadRequest`` for parameters that
make no sense; the app turns them into 404 and 400."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from vibes_eval.core.registry import Scoring, scoring_for
from vibes_eval.store.base import (
    SAMPLE_ORDERS,
    EventStore,
    RunInfo,
    SampleRow,
    StoreMissing,
    UnknownRun,
)
from vibes_eval.store.compare import compare
from vibes_eval.store.sql import open_store
from vibes_eval.store.summary import label_text, status_of
from vibes_eval.store.urls import resolve
from vibes_eval.web.memo import Memo
from vibes_eval.web.summary import RunSummary, summarize

SYNC_LIMIT = 20_000  # runs up to this many verdicts are summarized while the list waits
SLOWEST = 10
PAGE_MAX = 500
RETRY_OPEN_S = 1.0


class NotFound(LookupError):
    """An unknown run or sample: a 404."""


class BadRequest(ValueError):
    """Parameters that make no sense: a 400."""


def iso_seconds(a: str | None, b: str | None) -> float | None:
    """Seconds from timestamp ``a`` to ``b`` (the store's fixed-width ISO strings)."""
    if not a or not b:
        return None
    try:
        ta, tb = (datetime.strptime(x, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC) for x in (a, b))
    except ValueError:
        return None
    return max(0.0, (tb - ta).total_seconds())


class WebData:
    """Read-only access for the web pages. Thread-safe: requests run on a thread pool."""

    def __init__(self, store_spec: str | None = None, *, store: EventStore | None = None) -> None:
        self.spec = store_spec
        self.where = resolve(store_spec).display if store is None else store.url
        self._store = store
        self._owns_store = store is None
        self._open_lock = threading.Lock()
        self._last_try = 0.0
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vibes-web")
        self.summaries: Memo[RunSummary] = Memo(self._executor)
        self.comparisons: Memo[dict[str, Any]] = Memo(self._executor, size=32)
        self._scorings: dict[str, Scoring] = {}

    # -- the store ----------------------------------------------------------------------

    def store(self) -> EventStore | None:
        """The store, opened read-only on first use; None while none exists there.

        Raises: StoreError when it cannot be opened (not a store, unreachable).
        """
        with self._open_lock:
            if self._store is None and time.monotonic() - self._last_try >= RETRY_OPEN_S:
                self._last_try = time.monotonic()
                try:
                    self._store = open_store(resolve(self.spec), create=False, read_only=True)
                except StoreMissing:
                    return None
            return self._store

    def _st(self) -> EventStore:
        st = self.store()
        if st is None:
            raise NotFound(f"no store at {self.where} yet")
        return st

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        if self._store is not None and self._owns_store:
            self._store.close()

    def info(self, run_id: str) -> RunInfo:
        """Raises: NotFound."""
        try:
            return self._st().run(run_id)
        except UnknownRun:
            raise NotFound(f"no run '{run_id}' in {self.where}") from None

    def scoring(self, info: RunInfo) -> Scoring:
        """The run's declared metrics; fixed once the run started, so kept."""
        if info.run_id not in self._scorings:
            if info.started is None:
                info = self.info(info.run_id)
            assert info.started is not None
            self._scorings[info.run_id] = scoring_for(
                info.benchmark, info.started.config, info.started.ks
            )
        return self._scorings[info.run_id]

    # -- summaries ----------------------------------------------------------------------

    def summary(self, info: RunInfo, *, wait: bool = True) -> tuple[RunSummary | None, bool]:
        """(summary, fresh) of one run; see ``Memo.get``."""
        version = info.extra.get("last_seq", info.updated_at)
        scoring = self.scoring(info)
        st = self._st()

        def compute() -> RunSummary:
            return summarize(info.run_id, version, st.scored(info.run_id), scoring)

        small = info.n_done <= SYNC_LIMIT
        # A run still being evaluated may show the last summary while the next one is
        # computed; a finished run's is computed once, for its final state.
        live = status_of(info) == "running"
        return self.summaries.get(info.run_id, version, compute, wait=wait or small, stale_ok=live)

    def warm(self) -> None:
        """Summarize every run in the background, newest first, so that first visits of
        big runs find their summary ready."""
        st = self.store()
        if st is None:
            return
        for info in st.runs():
            version = info.extra.get("last_seq", info.updated_at)
            scoring = self.scoring(info)
            self.summaries.schedule(
                info.run_id,
                version,
                lambda i=info, v=version, s=scoring: summarize(i.run_id, v, st.scored(i.run_id), s),
            )

    # -- runs ---------------------------------------------------------------------------

    def runs(
        self,
        *,
        benchmark: str | None = None,
        label: str | None = None,
        status: str | None = None,
        sort: str = "started",
        desc: bool = True,
    ) -> dict[str, Any]:
        st = self.store()
        rows = [self._run_row(info) for info in (st.runs() if st is not None else [])]
        benchmarks = sorted({r["benchmark"] for r in rows})
        if benchmark:
            rows = [r for r in rows if r["benchmark"] == benchmark]
        if label:
            rows = [r for r in rows if _label_matches(r["labels"], label)]
        if status:
            rows = [r for r in rows if r["status"] == status]
        rows = _sorted_runs(rows, sort, desc)
        return {"store": self.where, "runs": rows, "benchmarks": benchmarks}

    def _run_row(self, info: RunInfo) -> dict[str, Any]:
        scoring = self.scoring(info)
        values: dict[str, float] | None = None
        pending = False
        if info.status == "completed" and info.metrics:
            values = dict(info.metrics)  # as recorded when it finished
        elif info.n_done:
            summary, _ = self.summary(info, wait=False)
            values = summary.values if summary is not None else None
            pending = summary is None
        return {
            **self.run_head(info),
            "headline": {
                "metric": scoring.headline,
                "value": (values or {}).get(scoring.headline),
            },
            "metrics": values or {},
            "metrics_pending": pending,
        }

    @staticmethod
    def run_head(info: RunInfo) -> dict[str, Any]:
        status = status_of(info)
        end = info.finished_at or info.updated_at
        return {
            "run_id": info.run_id,
            "benchmark": info.benchmark,
            "labels": info.labels,
            "label": label_text(info.labels),
            "status": status,
            "samples": info.n_done,
            "total": info.n_samples,
            "passed": info.n_passed,
            "started": info.started_at,
            "updated": info.updated_at,
            "finished": info.finished_at,
            "duration_s": iso_seconds(info.started_at, end),
            "runner": info.runner,
            "host": info.host,
        }

    # -- one run ------------------------------------------------------------------------

    def progress(self, run_id: str) -> dict[str, Any]:
        info = self.info(run_id)
        return {
            "run_id": run_id,
            "status": status_of(info),
            "done": info.n_done,
            "total": info.n_samples,
            "passed": info.n_passed,
            "updated": info.updated_at,
            "version": info.extra.get("last_seq"),
        }

    def run(self, run_id: str) -> tuple[dict[str, Any], RunSummary]:
        """The run page's data (JSON-able) and the summary behind it. Raises: NotFound."""
        info = self.info(run_id)
        assert info.started is not None
        summary, fresh = self.summary(info)
        assert summary is not None
        slowest = self._st().sample_page(run_id, order="slowest", limit=SLOWEST).rows
        started = info.started
        head = self.run_head(info)
        if summary.samples < info.n_done:
            note = f"metrics over the first {summary.samples} of {info.n_done} verdicts so far"
            summary_notes = [note]
        else:
            summary_notes = []
        if info.n_done < info.n_samples:
            summary_notes.append(
                f"{info.n_done} of {info.n_samples} samples evaluated: metrics cover those only"
            )
        data = {
            "run": {
                **head,
                "runner": f"{started.runner} ({started.isolation})"
                if started.isolation
                else started.runner,
                "samples_file": started.samples_path,
                "problems_file": started.problems_path,
                "config": started.config,
                "toolchain": started.toolchain,
                "ks": started.ks,
                "vibes_version": started.vibes_version,
                "suite": started.suite,
            },
            "headline": summary.headline,
            "metrics": [
                {"name": n, "value": v, "description": summary.descriptions.get(n, "")}
                for n, v in summary.values.items()
            ],
            "tasks": [t.as_dict() for t in summary.tasks],
            "failures": summary.failures,
            "curves": [c.as_dict() for c in summary.curves],
            "slowest": [sample_row(r) for r in slowest],
            "notes": summary_notes + summary.notes,
            "summary": {
                "samples": summary.samples,
                "fresh": fresh,
                "computed_at": datetime.fromtimestamp(summary.computed_at, UTC).isoformat(),
                "compute_s": round(summary.compute_s, 4),
            },
            "reasons": self.scoring(info).reasons,
        }
        return data, summary

    def samples(
        self,
        run_id: str,
        *,
        task: str | None = None,
        reason: str | None = None,
        passed: bool | None = None,
        order: str = "task",
        offset: int = 0,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Raises: NotFound, BadRequest."""
        if order not in SAMPLE_ORDERS:
            raise BadRequest(f"order must be one of {', '.join(SAMPLE_ORDERS)}")
        if offset < 0 or not 1 <= limit <= PAGE_MAX:
            raise BadRequest(f"offset must be >= 0 and limit 1..{PAGE_MAX}")
        self.info(run_id)
        page = self._st().sample_page(
            run_id,
            task_id=task or None,
            reason=reason or None,
            passed=passed,
            order=order,  # type: ignore[arg-type]
            offset=offset,
            limit=limit,
        )
        return {
            "run_id": run_id,
            "total": page.total,
            "offset": offset,
            "limit": limit,
            "order": order,
            "filters": {"task": task, "reason": reason, "passed": passed},
            "rows": [sample_row(r) for r in page.rows],
        }

    def reasons(self, run_id: str) -> list[str]:
        """The reasons the run's verdicts have, for the samples page's filter."""
        return sorted({reason for reason, _ in self._st().outcome_counts(run_id)})

    def sample(self, run_id: str, task: str, index: int) -> dict[str, Any]:
        """One sample's full verdict and input record. Raises: NotFound."""
        info = self.info(run_id)
        ev = self._st().sample_event(run_id, task, index)
        if ev is None:
            raise NotFound(f"run '{run_id}' has no sample {task} #{index}")
        return {
            "run_id": run_id,
            "benchmark": info.benchmark,
            "task_id": task,
            "index": index,
            "line": ev.line,
            "at": ev.at,
            "record": ev.record,
            "result": ev.result.model_dump(mode="json"),
            "reason_meaning": self.scoring(info).reasons.get(ev.result.reason, ""),
        }

    # -- comparisons --------------------------------------------------------------------

    def compare(self, run_ids: Sequence[str]) -> dict[str, Any]:
        """Every run against the first (the baseline). Raises: NotFound, BadRequest."""
        ids = list(dict.fromkeys(r for r in run_ids if r))
        if len(ids) < 2:
            raise BadRequest("compare needs at least two different runs")
        infos = [self.info(r) for r in ids]
        base = infos[0]
        pairs = []
        for other in infos[1:]:
            version = (base.extra.get("last_seq"), other.extra.get("last_seq"))
            value, _ = self.comparisons.get(
                (base.run_id, other.run_id), version, lambda o=other: self._pair(base, o)
            )
            assert value is not None
            pairs.append(value)
        return {
            "baseline": base.run_id,
            "runs": [self.run_head(i) for i in infos],
            "comparisons": pairs,
        }

    def _pair(self, a: RunInfo, b: RunInfo) -> dict[str, Any]:
        assert a.started is not None and b.started is not None
        st = self._st()
        ks = sorted(set(a.started.ks) | set(b.started.ks))
        scoring = scoring_for(b.benchmark, b.started.config, ks)
        rows_a, rows_b = st.scored(a.run_id), st.scored(b.run_id)
        try:
            result = compare(rows_a, rows_b, scoring.metrics, solved=scoring.solved)
        except ValueError as exc:
            return {"a": a.run_id, "b": b.run_id, "error": str(exc), "per_task": []}
        notes = list(result.notes)
        if a.benchmark != b.benchmark:
            notes.append(
                f"different benchmarks ({a.benchmark}, {b.benchmark}): scored as {b.benchmark}"
            )
        if a.started.tasks_sha256 != b.started.tasks_sha256:
            notes.append("the runs used different problem sets: compare with care")
        for info in (a, b):
            if info.n_done < info.n_samples:
                notes.append(f"{info.run_id} has {info.n_done} of {info.n_samples} samples")
        sum_a, _ = self.summary(a)
        sum_b, _ = self.summary(b)
        assert sum_a is not None and sum_b is not None
        speed = sum_b.speed_metric if sum_b.speed_metric == sum_a.speed_metric else None
        by_a = {t.task_id: t for t in sum_a.tasks}
        per_task = []
        for tb in sum_b.tasks:
            ta = by_a.get(tb.task_id)
            if ta is None:
                continue
            row: dict[str, Any] = {"task_id": tb.task_id, "a": ta.rate, "b": tb.rate}
            if speed and speed in ta.values and speed in tb.values:
                row["speed_a"], row["speed_b"] = ta.values[speed], tb.values[speed]
            per_task.append(row)
        data = result.as_dict()
        data.update(a=a.run_id, b=b.run_id, notes=notes, per_task=per_task, speed_metric=speed)
        return data


def sample_row(r: SampleRow) -> dict[str, Any]:
    row = asdict(r)
    row.pop("seq", None)
    return row


def _label_matches(labels: dict[str, str], wanted: str) -> bool:
    """``k=v`` matches that label exactly; anything else, any label's key or value."""
    key, sep, value = wanted.partition("=")
    if sep:
        return labels.get(key.strip()) == value.strip()
    w = wanted.lower()
    return any(w in k.lower() or w in v.lower() for k, v in labels.items())


SORT_KEYS = ("started", "benchmark", "label", "status", "samples", "headline", "duration")


def _sorted_runs(rows: list[dict[str, Any]], sort: str, desc: bool) -> list[dict[str, Any]]:
    """Runs without a value for the key (no headline yet) go last either way."""
    if sort not in SORT_KEYS:
        raise BadRequest(f"sort must be one of {', '.join(SORT_KEYS)}")

    def key(r: dict[str, Any]) -> Any:
        if sort == "headline":
            return r["headline"]["value"]
        if sort == "duration":
            return r["duration_s"]
        return r[sort]

    present = [r for r in rows if key(r) is not None]
    missing = [r for r in rows if key(r) is None]
    return sorted(present, key=key, reverse=desc) + missing
