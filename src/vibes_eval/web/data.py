"""What every page and JSON endpoint reads, as plain JSON-able values: the store opened
read-only, a run's summary computed once per state of the run (``memo``), pages of
samples and single events queried through the store's indexes.

Raises ``NotFound`` for an unknown run or sample and ``BadRequest`` for parameters that
make no sense; the app turns them into 404 and 400."""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from vibes_eval.core.registry import Scoring, scoring_for
from vibes_eval.runs.summary import label_text, status_of
from vibes_eval.store.base import (
    SAMPLE_ORDERS,
    EventStore,
    RunInfo,
    SampleRow,
    StoreMissing,
    UnknownRun,
)
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve
from vibes_eval.web.memo import Background, Memo
from vibes_eval.web.summary import RunSummary
from vibes_eval.web.worker import Rows, Worker, run_compare, run_summary

# Runs of up to this many verdicts are summarized and compared here, at once; bigger ones in
# the worker process, in the background (their page says so until it is done).
SYNC_LIMIT = 20_000
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

    def __init__(
        self,
        store_spec: str | None = None,
        *,
        store: EventStore | None = None,
        worker: bool = True,
    ) -> None:
        """``store_spec`` as --store takes it; or an open ``store`` (then big runs are
        scored in this process too). ``worker``: score big runs in a child process."""
        self.spec = store_spec
        self.where = resolve(store_spec).display if store is None else store.url
        self._store = store
        self._owns_store = store is None
        self._open_lock = threading.Lock()
        self._last_try = 0.0
        self._background = Background()
        self.summaries: Memo[RunSummary] = Memo(self._background)
        self.comparisons: Memo[dict[str, Any]] = Memo(self._background, size=32)
        self._scorings: dict[str, Scoring] = {}
        self._samples_files: dict[str, str] = {}  # run id -> its samples file
        self._rows = Rows()  # of the runs scored here
        self._worker = Worker(store_spec) if worker and store is None else None

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
        self._background.close()
        if self._worker is not None:
            self._worker.close()
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
            self._samples_files[info.run_id] = info.started.samples_path or ""
        return self._scorings[info.run_id]

    def samples_file(self, info: RunInfo) -> str:
        """The path of the samples file the run evaluated (kept with its scoring)."""
        self.scoring(info)
        return self._samples_files.get(info.run_id, "")

    # -- summaries ----------------------------------------------------------------------

    @staticmethod
    def version(info: RunInfo) -> Hashable:
        """The run's state: its last event."""
        return info.extra.get("last_seq", info.updated_at)

    def _here(self, *infos: RunInfo) -> bool:
        """Whether to score these runs in this process (small, or no worker)."""
        return self._worker is None or sum(i.n_done for i in infos) <= SYNC_LIMIT

    def summary(self, info: RunInfo, *, wait: bool = True) -> tuple[RunSummary | None, bool]:
        """(summary, fresh) of one run; see ``Memo.get``."""
        version = self.version(info)
        compute = self._summarizer(info)
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
            self.summaries.schedule(info.run_id, self.version(info), self._summarizer(info))

    def _summarizer(self, info: RunInfo) -> Any:
        if self._here(info):
            scoring = self.scoring(info)
            return lambda: run_summary(self._st(), self._rows, info.run_id, scoring)
        worker = self._worker
        assert worker is not None
        return lambda: worker.summary(info.run_id)

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
            "samples_file": self.samples_file(info),
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

    def run(self, run_id: str, *, wait: bool = True) -> tuple[dict[str, Any], RunSummary]:
        """The run page's data (JSON-able) and the summary behind it. Without ``wait``, a
        big run whose summary is not computed yet gets an empty one, marked ``pending``,
        while it is computed in the background. Raises: NotFound."""
        info = self.info(run_id)
        assert info.started is not None
        summary, fresh = self.summary(info, wait=wait)
        pending = summary is None
        if summary is None:
            summary = RunSummary.pending(run_id, self.scoring(info).headline)
        slowest = self._st().sample_page(run_id, order="slowest", limit=SLOWEST, count=False).rows
        started = info.started
        head = self.run_head(info)
        if summary.samples < info.n_done and not pending:
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
                {
                    "name": n,
                    "value": v,
                    "description": summary.descriptions.get(n, ""),
                    "ci": summary.intervals.get(n),
                }
                for n, v in summary.values.items()
            ],
            "tasks": [t.as_dict() for t in summary.tasks],
            "failures": summary.failures,
            "groups": summary.groups,
            "curves": [c.as_dict() for c in summary.curves],
            "slowest": [sample_row(r) for r in slowest],
            "notes": summary_notes + summary.notes,
            "pending": pending,
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
        info = self.info(run_id)
        # Counting a big run's matches is a scan; its summary has counted them already.
        entry = self.summaries.peek(run_id)
        known = entry is not None and entry.version == self.version(info)
        page = self._st().sample_page(
            run_id,
            task_id=task or None,
            reason=reason or None,
            passed=passed,
            order=order,  # type: ignore[arg-type]
            offset=offset,
            limit=limit,
            count=not known,
        )
        total = page.total
        if known:
            assert entry is not None
            total = entry.value.count(task or None, reason or None, passed)
        return {
            "run_id": run_id,
            "total": total,
            "offset": offset,
            "limit": limit,
            "order": order,
            "filters": {"task": task, "reason": reason, "passed": passed},
            "rows": [sample_row(r) for r in page.rows],
        }

    def reasons(self, info: RunInfo) -> list[str]:
        """Reasons to filter the samples page by: those the benchmark declares and those
        the run's last summary saw (without counting anything again)."""
        found = set(self.scoring(info).reasons)
        entry = self.summaries.peek(info.run_id)
        if entry is not None:
            found |= set(entry.value.failures)
        return sorted(found)

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

    def compare(self, run_ids: Sequence[str], *, wait: bool = True) -> dict[str, Any]:
        """Every run against the first (the baseline). Without ``wait``, pairs of big runs
        not compared yet are computed in the background and the answer says ``pending``.

        Raises: NotFound, BadRequest."""
        ids = list(dict.fromkeys(r for r in run_ids if r))
        if len(ids) < 2:
            raise BadRequest("compare needs at least two different runs")
        infos = [self.info(r) for r in ids]
        base = infos[0]
        pairs = []
        for other in infos[1:]:
            version = (self.version(base), self.version(other))
            small = base.n_done + other.n_done <= SYNC_LIMIT
            value, _ = self.comparisons.get(
                (base.run_id, other.run_id),
                version,
                lambda o=other: self._pair(base, o),
                wait=wait or small,
            )
            if value is not None:
                pairs.append(value)
        return {
            "baseline": base.run_id,
            "runs": [self.run_head(i) for i in infos],
            "comparisons": pairs,
            "pending": len(pairs) < len(infos) - 1,
        }

    def _pair(self, a: RunInfo, b: RunInfo) -> dict[str, Any]:
        assert a.started is not None and b.started is not None
        ks = sorted(set(a.started.ks) | set(b.started.ks))
        if self._here(a, b):
            scoring = scoring_for(b.benchmark, b.started.config, ks)
            data = run_compare(self._st(), self._rows, a.run_id, b.run_id, scoring)
        else:
            assert self._worker is not None
            data = self._worker.compare(a.run_id, b.run_id, ks)
        if "error" in data:
            return {"a": a.run_id, "b": b.run_id, "error": data["error"], "per_task": []}
        notes = list(data["notes"])
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
