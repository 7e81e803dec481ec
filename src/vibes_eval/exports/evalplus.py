"""`--format evalplus`: EvalPlus's `eval_results.json`: per task, one entry per sample
with its base and plus statuses (``pass``, ``fail``, ``timeout``) and the first failing
input of each, plus pass@k over the base and the plus tests.

The harness judges an EvalPlus task as EvalPlus does, base inputs then plus inputs, and
records both statuses in ``details.evalplus``; the failing input is named in the detail
("base input n" / "plus input n"). A phase that never ran (plus after a base failure)
fails: EvalPlus's plus score counts a sample only when both pass. Runs stored before the
split carry only "extra test n" (a position in base + plus), read as before. A task
without plus inputs (not an EvalPlus problems file) gets ``plus_status`` null, as
EvalPlus writes with ``--base-only``."""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from vibes_eval.core import metrics
from vibes_eval.core.errors import UserError
from vibes_eval.core.types import Reason, SampleResult
from vibes_eval.exports.source import RunData, local_tasks, task_text

PASS, FAIL, TIMEOUT = "pass", "fail", "timeout"
EXTRA = re.compile(r"^extra test (\d+):")  # runs stored before the split
PHASED = re.compile(r"^(base|plus) input (\d+):")


def default_path(data: RunData) -> Path:
    return Path(f"{data.run_id}_eval_results.json")


def write(data: RunData, path: Path | None) -> str:
    doc = build(data)
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    if path is None:
        print(text)
        return ""
    try:
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write results: {exc.strerror}", path=path) from None
    return f"{len(data.results)} samples of {len(doc['eval'])} tasks: {path}"


def build(data: RunData) -> dict[str, Any]:
    tasks = local_tasks(data)  # none: a plus failure cannot be told from a base one
    evals: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row, res in data.pairs():
        evals[res.task_id].append(_entry(row, res, tasks.get(res.task_id)))
    return {
        "date": _date(data.run.get("started")),
        "hash": _hash(data.run.get("problems_file")),
        "eval": dict(evals),
        "pass_at_k": _pass_at_k(evals, _run_ks(data)),
    }


def _entry(row: dict[str, Any], res: SampleResult, task: Any) -> dict[str, Any]:
    inputs = list(getattr(task, "plus_inputs", None) or [])
    base_count = int(getattr(task, "base_count", 0) or 0)
    base, plus, base_fail, plus_fail = _statuses(res, inputs, base_count)
    return {
        "task_id": res.task_id,
        "solution": _solution(row, task),
        "base_status": base,
        "plus_status": plus if inputs else None,
        "base_fail_tests": base_fail,
        "plus_fail_tests": plus_fail if inputs else [],
    }


def _solution(row: dict[str, Any], task: Any) -> str:
    """EvalPlus's ``solution``: the sample's own, else the prompt and the completion."""
    if isinstance(row.get("solution"), str):
        return str(row["solution"])
    return task_text(task, "prompt") + str(row.get("completion") or "")


def _statuses(
    res: SampleResult, inputs: list[Any], base_count: int
) -> tuple[str, str, list[Any], list[Any]]:
    """(base status, plus status, base failing inputs, plus failing inputs)."""
    if res.passed:
        return PASS, PASS, [], []
    phases = (res.details or {}).get("evalplus")
    if isinstance(phases, dict) and phases.get("base"):
        return _phased(res, phases, inputs, base_count)
    found = EXTRA.match(res.detail) if res.reason == Reason.FAILED else None
    if found and int(found.group(1)) < len(inputs):
        n = int(found.group(1))
        if n >= base_count:  # the base inputs all passed before it
            return PASS, FAIL, [], [inputs[n]]
        return FAIL, FAIL, [inputs[n]], []  # its plus inputs never ran: not passed
    status = TIMEOUT if res.reason == Reason.TIMEOUT else FAIL
    return status, status, [], []


def _phased(
    res: SampleResult, phases: dict[str, Any], inputs: list[Any], base_count: int
) -> tuple[str, str, list[Any], list[Any]]:
    """The statuses the harness recorded, and the failing input its detail names."""
    base, plus = str(phases["base"]), str(phases.get("plus") or FAIL)
    failing: dict[str, list[Any]] = {"base": [], "plus": []}
    found = PHASED.match(res.detail or "")
    if found:
        n = int(found.group(2)) + (base_count if found.group(1) == "plus" else 0)
        if n < len(inputs):
            failing[found.group(1)] = [inputs[n]]
    return base, plus, failing["base"], failing["plus"]


def _run_ks(data: RunData) -> list[int]:
    """EvalPlus's ks (1, 10, 100) and the run's own."""
    own = {int(name[5:]) for name in data.metrics if re.fullmatch(r"pass@\d+", name)}
    return sorted({1, 10, 100} | own)


def _pass_at_k(evals: dict[str, list[dict[str, Any]]], ks: list[int]) -> Any:
    """pass@k over the base and the plus statuses, for each k every task has samples for."""
    ns = {t: len(es) for t, es in evals.items()}
    ks = [k for k in ks if ns and min(ns.values()) >= k]
    out: dict[str, dict[str, float]] = {}
    for phase in ("base", "plus"):
        if any(e[f"{phase}_status"] is None for es in evals.values() for e in es):
            continue
        passed = {t: sum(e[f"{phase}_status"] == PASS for e in es) for t, es in evals.items()}
        out[phase] = {
            f"pass@{k}": sum(metrics.pass_at_k(ns[t], passed[t], k) for t in ns) / len(ns)
            for k in ks
        }
    return out


def _date(started: str | None) -> str:
    """EvalPlus's own date format."""
    try:
        return datetime.fromisoformat(str(started)).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return ""


def _hash(problems: str | None) -> str:
    """EvalPlus names a dataset by the MD5 of its file."""
    try:
        return hashlib.md5(Path(str(problems)).read_bytes()).hexdigest() if problems else ""
    except OSError:
        return ""
