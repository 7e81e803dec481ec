"""A run's identity and lifecycle in the store: start it, resume it (refusing other
settings), and close it with ``RunCompleted`` or ``RunInterrupted``."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import vibes_eval
from vibes_eval.core.benchmark import Benchmark, BenchmarkConfig
from vibes_eval.core.errors import UserError
from vibes_eval.core.runner import TaskRunner
from vibes_eval.core.types import Reason, Sample, Task, sha256
from vibes_eval.runs import code, process
from vibes_eval.store.base import EventStore, UnknownRun
from vibes_eval.store.events import RunResumed, RunStarted, verdict_config
from vibes_eval.store.writer import GroupWriter

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
LABEL_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


def new_run_id() -> str:
    """Sortable and short: 20260126-051400-3fa2."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def check_run_id(run_id: str) -> str:
    if not RUN_ID.fullmatch(run_id):
        raise UserError(
            f"--run-id {run_id!r}: use up to 64 letters, digits and . _ : - "
            "(starting with a letter or digit)"
        )
    return run_id


def parse_labels(items: Sequence[str]) -> dict[str, str]:
    """['model=x', 'temperature=0.2'] -> {'model': 'x', 'temperature': '0.2'}."""
    labels: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not LABEL_KEY.fullmatch(key):
            raise UserError(f"--label {item!r}: expected key=value, e.g. model=gpt-4o")
        if key in labels and labels[key] != value:
            raise UserError(f"--label {key} given twice with different values")
        labels[key] = value
    return labels


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror}", path=path) from None
    return h.hexdigest()


def records_sha256(samples: Sequence[Sample]) -> str:
    """Samples handed over in memory: their records, in order, as canonical JSON."""
    return sha256(
        "\n".join(json.dumps(s.record, sort_keys=True, ensure_ascii=False) for s in samples)
    )


def tasks_sha256(tasks: Mapping[str, Task]) -> str:
    return sha256("".join(f"{t}\0{tasks[t].fingerprint()}\n" for t in sorted(tasks)))


def run_started(
    run_id: str,
    *,
    benchmark: Benchmark[Any, Any],
    tasks: Mapping[str, Task],
    samples: Sequence[Sample],
    samples_path: Path | None,
    runner: TaskRunner,
    ks: Sequence[int],
    labels: Mapping[str, str],
    output_path: Path | None = None,
    workers: int = 0,
    generation: Mapping[str, Any] | None = None,
    generation_identity: Mapping[str, Any] | None = None,
) -> RunStarted:
    """The ``RunStarted`` event for this evaluation. Calls ``benchmark.environment()``
    (which may build toolchain pieces on first use). ``samples_path`` None: the samples
    were handed over in memory, and their records are hashed instead of a file."""
    path = benchmark.problems_path()
    t_hash = tasks_sha256(tasks)
    return RunStarted(
        run_id=run_id,
        benchmark=benchmark.name,
        suite=getattr(benchmark, "suite", ""),
        config=benchmark.config.model_dump(mode="json"),
        config_identity=config_identity(benchmark.config),
        problems_sha256=file_sha256(path) if path is not None else t_hash,
        tasks_sha256=t_hash,
        samples_sha256=(  # a folder of sample files (kernels) is hashed by its records
            file_sha256(samples_path)
            if samples_path and not samples_path.is_dir()
            else records_sha256(samples)
        ),
        problems_path=str(path.absolute()) if path is not None else "",
        samples_path=str(samples_path.absolute()) if samples_path else "",
        output_path=str(output_path.absolute()) if output_path is not None else "",
        n_samples=len(samples),
        n_tasks=len({s.task_id for s in samples}),
        ks=list(ks),
        toolchain=benchmark.environment(),
        runner=runner.name,
        isolation=runner.capabilities.isolation_level.value,
        host=process.host(),
        pid=os.getpid(),
        proc_start=process.start_token(),
        labels=dict(labels),
        vibes_version=vibes_eval.__version__,
        judge_code=code.fingerprint(),
        workers=workers,
        generation=dict(generation or {}),
        generation_identity=dict(generation_identity or {}),
    )


def config_identity(config: BenchmarkConfig) -> dict[str, Any]:
    return config.identity()


def identity(started: RunStarted) -> dict[str, Any]:
    """What must match for a resume, flattened to dotted keys. The problem file's path is
    left out (its hash is in), and so are workers, ks, output path and host."""
    flat: dict[str, Any] = {
        "benchmark": started.benchmark,
        "problems_sha256": started.problems_sha256,
        "tasks_sha256": started.tasks_sha256,
        "samples_sha256": started.samples_sha256,
        "runner": started.runner,
        "isolation": started.isolation,  # the same runner name may isolate differently
    }
    _flatten("config", verdict_config(started), flat)
    _flatten("toolchain", started.toolchain, flat)
    _flatten("labels", started.labels, flat)
    _flatten("generation", started.generation_identity, flat)  # model, sampling, prompt
    return flat


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}", v, out)
    else:
        out[prefix] = value


def differences(stored: RunStarted, new: RunStarted) -> list[str]:
    """Human-readable differences between two run identities, by key."""
    old, cur = identity(stored), identity(new)
    out = []
    for key in sorted(old.keys() | cur.keys()):
        a, b = old.get(key, "<unset>"), cur.get(key, "<unset>")
        if a == b:
            continue
        if key.endswith("sha256"):
            out.append(f"{key.removesuffix('_sha256')} file content")
        else:
            out.append(f"{key} (stored {a!r}, now {b!r})")
    return out


def _has_infra_errors(store: EventStore, run_id: str) -> bool:
    """A completed run whose verdicts include infra errors is resumed to retry them."""
    return any(r.reason == Reason.INFRA for r in store.samples(run_id))


@dataclass
class OpenedRun:
    run_id: str
    resumed: bool  # the run existed
    finished: bool  # it had completed: nothing left to do


def begin(
    store: EventStore, writer: GroupWriter, started: RunStarted, *, resume: bool
) -> OpenedRun:
    """Start ``started.run_id``, or take it over when it exists.

    ``resume``: the id came from the user, so an existing run is continued; otherwise an
    existing id is an error (a generated id collided).

    Raises:
        UserError: the stored run has other settings (names them), or its process is alive.
        StoreError: the store failed.
    """
    run_id = started.run_id
    try:
        info = store.run(run_id)
    except UnknownRun:
        writer.append([started])
        return OpenedRun(run_id, resumed=False, finished=False)
    if not resume:
        raise UserError(f"run id '{run_id}' is already taken")
    assert info.started is not None
    diff = differences(info.started, started)
    if diff:
        raise UserError(
            f"run '{run_id}' was started with other settings: {'; '.join(diff)}. "
            "Use the original settings, or another --run-id for a new run"
        )
    if info.status == "completed" and not _has_infra_errors(store, run_id):
        return OpenedRun(run_id, resumed=True, finished=True)
    if info.status == "running" and process.is_alive(info.host, info.pid, info.proc_start):
        raise UserError(
            f"run '{run_id}' is being evaluated right now (pid {info.pid} on {info.host})"
        )
    writer.append(
        [
            RunResumed(
                run_id=run_id,
                host=process.host(),
                pid=os.getpid(),
                proc_start=process.start_token(),
                vibes_version=vibes_eval.__version__,
            )
        ]
    )
    return OpenedRun(run_id, resumed=True, finished=False)
