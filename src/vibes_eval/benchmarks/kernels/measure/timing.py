"""Reading timings: from the results channel (trusted: written by the harness, every line
carrying the run's nonce), or from stdout in CUDAHercules's format for harnesses that do
not speak the channel (untrusted: the solution shares their process). Speed per run is
the arithmetic mean over sizes of ref_min / sol_min, as CUDAHercules computes it; repeated
runs give the median and the spread. Reference times are cached per task, device,
toolchain and CPU threads, from runs of the expert against itself only (``RefCache``), to
show drift between runs and to score against a fixed baseline on request.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import statistics
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vibes_eval.core.filelock import locked


@dataclass
class SizeTiming:
    label: str
    ref_min: float
    sol_min: float
    ref_mean: float = 0.0
    sol_mean: float = 0.0
    trials: int = 0

    @property
    def speedup(self) -> float:
        return self.ref_min / self.sol_min if self.sol_min > 0 else 0.0

    @property
    def speedup_mean(self) -> float:
        return self.ref_mean / self.sol_mean if self.sol_mean > 0 else 0.0


@dataclass
class ChannelReport:
    """What a harness wrote to the results channel in one run."""

    begun: bool = False
    ended: bool = False
    passed: bool = False
    sizes: list[SizeTiming] = field(default_factory=list)
    failure: str = ""  # the first failing size's reason
    cheat_rule: str = ""  # a cheat the harness recognised (cached_result, zero_output...)
    cheat_detail: str = ""
    reference_broken: str = ""
    died: str = ""  # the solution's process ended during a call (the harness said how)
    isolation: str = ""  # "processes": the harness runs the solution in a process of its own
    clock: str = ""  # what its times are: "cpu" (the process's CPU time) or "wall"


_KV = re.compile(r"(\w+)=(\S+)")


def parse_channel(text: str, nonce: str) -> ChannelReport:
    """Lines of the results file that carry ``nonce``; anything else is ignored."""
    report = ChannelReport()
    for line in text.splitlines():
        head, _, rest = line.partition(" ")
        if head != nonce:
            continue
        kind, _, body = rest.partition(" ")
        fields, why = _fields(body)
        if kind == "begin":
            report.begun = True
            report.isolation = fields.get("isolation", "")
            report.clock = fields.get("clock", "")
        elif kind == "size" and fields.get("ok") == "1":
            report.sizes.append(_size(fields))
        elif kind == "size":
            report.failure = report.failure or f"{fields.get('label', '?')}: {why}"
        elif kind == "cheat":
            report.cheat_rule = report.cheat_rule or fields.get("rule", "harness")
            report.cheat_detail = report.cheat_detail or f"{fields.get('label', '?')}: {why}"
        elif kind == "died":
            report.died = report.died or f"{fields.get('label', '?')}: {why}"
        elif kind == "reference_broken":
            report.reference_broken = why or body
        elif kind == "end":
            report.ended = True
            report.passed = fields.get("passed") == "1"
    return report


def _fields(body: str) -> tuple[dict[str, str], str]:
    """key=value pairs before `why=`, and the free text after it."""
    head, sep, why = body.partition("why=")
    return dict(_KV.findall(head)), why.strip() if sep else ""


def _size(f: dict[str, str]) -> SizeTiming:
    def num(key: str) -> float:
        try:
            return float(f.get(key, "0"))
        except ValueError:
            return 0.0

    return SizeTiming(f.get("label", "?"), num("ref_min"), num("sol_min"), num("ref_mean"),
                      num("sol_mean"), int(num("trials")))  # fmt: skip


_BLOCK = re.compile(
    r"===\s*(?P<label>.+?)\s*===.*?"
    r"Ref time:\s*(?P<ref_mean>[\d.]+)\s*ms[^\n]*?min:\s*(?P<ref_min>[\d.]+)\s*ms.*?"
    r"Kernel time:\s*(?P<sol_mean>[\d.]+)\s*ms[^\n]*?min:\s*(?P<sol_min>[\d.]+)\s*ms",
    re.S,
)


def parse_stdout(stdout: str, kernel_regex: str, ref_regex: str) -> list[SizeTiming]:
    """Per-size timings in CUDAHercules's stdout format (`=== size ===`, `Ref time: X ms
    (avg over N trials, min: Y ms)`, `Kernel time: ...`); else one size from the task's
    own regexes (the first number each captures)."""
    sizes = [
        SizeTiming(
            m["label"],
            float(m["ref_min"]),
            float(m["sol_min"]),
            float(m["ref_mean"]),
            float(m["sol_mean"]),
        )
        for m in _BLOCK.finditer(stdout)
    ]
    if sizes:
        return sizes
    k = re.search(kernel_regex, stdout) if kernel_regex else None
    r = re.search(ref_regex, stdout) if ref_regex else None
    if k and r:
        with contextlib.suppress(ValueError, IndexError):
            sol, ref = float(k.group(1)), float(r.group(1))
            return [SizeTiming("all", ref, sol, ref, sol)]
    return []


def run_speed(sizes: list[SizeTiming], ref_override: list[float] | None = None) -> float:
    """Arithmetic mean over sizes of ref_min / sol_min (a cached reference time per size
    replaces the live one when given)."""
    if not sizes:
        return 0.0
    ratios = []
    for i, s in enumerate(sizes):
        ref = ref_override[i] if ref_override and i < len(ref_override) else s.ref_min
        ratios.append(ref / s.sol_min if s.sol_min > 0 else 0.0)
    return sum(ratios) / len(ratios)


@dataclass
class Spread:
    median: float
    low: float
    high: float

    @property
    def relative(self) -> float:
        """(max - min) / median: 0 when every run agreed."""
        return (self.high - self.low) / self.median if self.median > 0 else 0.0


def spread(values: list[float]) -> Spread:
    return Spread(statistics.median(values), min(values), max(values)) if values else Spread(
        0.0, 0.0, 0.0)  # fmt: skip


def sizes_json(sizes: list[SizeTiming]) -> list[dict[str, Any]]:
    return [{**asdict(s), "speedup": round(s.speedup, 4)} for s in sizes]


class RefCache:
    """Reference times per (task fingerprint, device, toolchain, CPU threads), in one JSON
    file shared by concurrent runs (an exclusive lock around each read-modify-write).

    Only a run in which no solution took part writes here (the task's expert submitted as
    the solution: ``judge`` decides), and what it writes is the least time per size over
    its runs and every earlier such run: a time can only get closer to the reference's
    own best, never be raised by anything that ran beside it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @staticmethod
    def key(task_fp: str, device: str, toolchain: str, threads: int = 0) -> str:
        return f"{task_fp[:16]}|{device}|{toolchain}" + (f"|{threads}t" if threads else "")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with locked(self.path.with_suffix(".lock")):
            try:
                data = json.loads(self.path.read_text()) if self.path.exists() else {}
            except (OSError, ValueError):
                data = {}
            yield data
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
            tmp.replace(self.path)

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached entry for ``key`` (None when there is none)."""
        try:
            with self._locked() as data:
                return data.get(key)
        except OSError:
            return None

    def store_best(self, key: str, runs: list[list[SizeTiming]]) -> dict[str, Any] | None:
        """Merge a reference-only run's times (its ``runs``, each a list of sizes) into the
        entry for ``key``: per size the least reference time seen. Returns the entry."""
        labels = [s.label for s in runs[0]] if runs and runs[0] else []
        if not labels or any([s.label for s in r] != labels for r in runs):
            return self.get(key)
        best = [min(r[i].ref_min for r in runs) for i in range(len(labels))]
        try:
            with self._locked() as data:
                entry = data.get(key)
                if entry is not None and entry.get("labels") == labels:
                    best = [min(a, b) for a, b in zip(best, entry["ref_min_ms"], strict=True)]
                data[key] = {"labels": labels, "ref_min_ms": best,
                             "stored": time.strftime("%Y-%m-%dT%H:%M:%S")}  # fmt: skip
                return data[key]
        except OSError:
            return None
