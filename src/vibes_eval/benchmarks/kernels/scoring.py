"""The kernel metrics of the seed paper (section 3.3), as per-task values the spine
aggregates: compile rate, pass rate, speed (0 when invalid), mean and geometric-mean speed,
fast_p at 0.5, 0.8 and 1.05 (valid AND speed > p, over all tasks, KernelBench's strict
`>`), one-shot pass@k, the share flagged for audit, and pass rate, geometric-mean speed and
fast_1.05 per task class and per architecture group.

A task whose every sample is ``arch_unsupported``, ``no_device`` or
``unsupported_backend`` has no value: it is left out of the denominators, and reported.
With several samples per task, a task's value is the expectation for one sample drawn at
random (one-shot).

Also the tables for kernel runs that mix kinds of solutions (naive, expert, wrong,
cheats...): one line of headline metrics per kind, and the per-size timings as TSV (used
by `make demo-kernels` and scripts/kernels-gpu.sh)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from vibes_eval.benchmarks.kernels.tasks import ARCH_GROUPS, class_of, group_of
from vibes_eval.core.metrics import Metric, Scored, pass_at_k_exact, reason_counts, score

NOT_COUNTED = frozenset({"arch_unsupported", "no_device", "unsupported_backend"})
FAST_P = (0.5, 0.8, 1.05)
HEADLINE = "fast_1.05"


def counted(rs: Sequence[Scored]) -> list[Scored]:
    return [r for r in rs if r.reason not in NOT_COUNTED]


def speed(r: Scored) -> float:
    return float(r.measurements.get("speedup", 0.0)) if r.passed else 0.0


def _share(rs: Sequence[Scored], pred: Callable[[Scored], bool]) -> Fraction | None:
    rs = counted(rs)
    return Fraction(sum(1 for r in rs if pred(r)), len(rs)) if rs else None


def pass_rate(rs: Sequence[Scored]) -> Fraction | None:
    return _share(rs, lambda r: r.passed)


def mean_speed(rs: Sequence[Scored]) -> float | None:
    rs = counted(rs)
    return sum(speed(r) for r in rs) / len(rs) if rs else None


def fast(p: float) -> Callable[[Sequence[Scored]], Fraction | None]:
    return lambda rs: _share(rs, lambda r: r.passed and speed(r) > p)


def compile_rate(rs: Sequence[Scored]) -> float | None:
    """Over samples whose build was attempted (no_device ones included: they compile)."""
    tried = [r for r in rs if "compiled" in r.measurements]
    return sum(r.measurements["compiled"] for r in tried) / len(tried) if tried else None


def pass_at(k: int) -> Callable[[Sequence[Scored]], Fraction | None]:
    def value(rs: Sequence[Scored]) -> Fraction | None:
        rs = counted(rs)
        if not rs or k > len(rs):
            return None
        return pass_at_k_exact(len(rs), sum(r.passed for r in rs), k)

    return value


def _class(rs: Sequence[Scored]) -> int:
    for r in rs:
        if "task_class" in r.measurements:
            return int(r.measurements["task_class"])
    return class_of(rs[0].task_id) if rs else 0


def _only(keep: Callable[[Sequence[Scored]], bool], inner: Callable[[Sequence[Scored]], object]):  # type: ignore[no-untyped-def]
    return lambda rs: inner(rs) if rs and keep(rs) else None


def kernel_metrics(ks: Sequence[int]) -> list[Metric]:
    out = [
        Metric("compile_rate", compile_rate, description="share of builds that succeeded"),
        Metric("pass_rate", pass_rate, description="share of samples valid (built, passed)"),
        Metric("mean_speed", mean_speed, description="mean of t_ref / t_sol, 0 when invalid"),
        Metric("geomean_speed", mean_speed, aggregate="geomean",
               description="geometric mean speed over tasks with a valid sample"),
    ]  # fmt: skip
    out += [
        Metric(f"fast_{p:g}", fast(p), description=f"share valid AND speed > {p:g}") for p in FAST_P
    ]
    out += [
        Metric(f"pass@{k}", pass_at(k), all_tasks=True, counts=lambda rs: bool(counted(rs)),
               missing=f"some tasks have fewer than {k} counted samples",
               description=f"probability that one of {k} samples is valid")
        for k in ks
    ]  # fmt: skip
    out.append(Metric("flagged_10x", _share_fn("audit"),
                      description="share of samples with a speedup flagged for audit"))  # fmt: skip
    out += _grouped()
    return out


def _share_fn(key: str) -> Callable[[Sequence[Scored]], Fraction | None]:
    return lambda rs: _share(rs, lambda r: r.measurements.get(key, 0.0) > 0)


def _in_class(c: int) -> Callable[[Sequence[Scored]], bool]:
    return lambda rs: _class(rs) == c


def _in_group(g: str) -> Callable[[Sequence[Scored]], bool]:
    return lambda rs: group_of(rs[0].task_id) == g


def _grouped() -> list[Metric]:
    out: list[Metric] = []
    groups = [(f"class{c}", _in_class(c)) for c in (1, 2, 3, 4)]
    groups += [(g, _in_group(g)) for g in ARCH_GROUPS]
    for label, keep in groups:
        out += [
            Metric(f"pass_rate:{label}", _only(keep, pass_rate)),
            Metric(f"geomean_speed:{label}", _only(keep, mean_speed), aggregate="geomean"),
            Metric(f"{HEADLINE}:{label}", _only(keep, fast(1.05))),
        ]
    return out


def solved(rs: Sequence[Scored]) -> bool:
    """For McNemar's test: the task is fast (valid and > 1.05x) in at least half its
    samples."""
    value = fast(1.05)(rs)
    return value is not None and value >= Fraction(1, 2)


# -- tables for mixed runs ---------------------------------------------------------------

SHOWN = ("compile_rate", "pass_rate", "mean_speed", "geomean_speed", "fast_0.5", "fast_0.8",
         "fast_1.05")  # fmt: skip


def kind_table(groups: Mapping[str, Sequence[Scored]]) -> str:
    """One line per group (and one for all of them): the headline metrics and outcomes."""
    head = f"{'kind':8} {'n':>3} " + " ".join(f"{m:>13}" for m in SHOWN) + "  outcomes"
    lines = [head]
    everything = [r for rs in groups.values() for r in rs]
    for kind, rs in [*groups.items(), ("all", everything)]:
        values = score(kernel_metrics([1]), rs).values
        cells = " ".join(f"{values[m]:13.4f}" if m in values else f"{'-':>13}" for m in SHOWN)
        outcomes = ", ".join(f"{k} {v}" for k, v in reason_counts(r.reason for r in rs).items())
        lines.append(f"{kind:8} {len(rs):3d} {cells}  {outcomes}")
    return "\n".join(lines)


def timings_tsv(rows: Sequence[Mapping[str, Any]]) -> str:
    """Per sample, timing run and size: the reference's and the solution's times."""
    columns = "task kind name run size ref_min_ms ref_mean_ms sol_min_ms sol_mean_ms speedup"
    out = [columns.replace(" ", "\t")]
    for row in rows:
        for n, sizes in enumerate(row.get("details", {}).get("runs", []), start=1):
            task = row["task_id"].rsplit("/", 1)[-1]
            for s in sizes:
                times = (s["ref_min"], s["ref_mean"], s["sol_min"], s["sol_mean"], s["speedup"])
                cells = (task, row.get("kind", ""), row.get("name", ""), n, s["label"], *times)
                out.append("\t".join(str(c) for c in cells))
    return "\n".join(out) + "\n"


def sample_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per sample: kind, task, cheat name, verdict, speed and spread, detail."""
    lines = []
    for row in rows:
        m = row.get("measurements", {})
        speed = (f"speed {m['speedup']:.3f} (spread {m.get('speedup_spread', 0):.2f})"
                 if "speedup" in m else "")  # fmt: skip
        lines.append(f"{row.get('kind', ''):7} {row['task_id'].rsplit('/', 1)[-1]:20} "
                     f"{row.get('name', ''):18} {row['reason']:14} {speed:26} "
                     f"{row.get('detail', '')[:80]}")  # fmt: skip
    return lines


def cheat_check(rows: Sequence[Mapping[str, Any]]) -> tuple[int, int, list[str]]:
    """(caught with the expected rule, cheats, what went otherwise). A cheat classified
    no_device (no GPU here to run it) is neither caught nor missed."""
    cheats = [r for r in rows if r.get("expect")]
    caught, other = 0, []
    for r in cheats:
        rule = r.get("detail", "").split(":", 1)[0]
        if r["reason"] == "anti_cheat" and rule == r["expect"]:
            caught += 1
        else:
            other.append(f"{r.get('name')}: expected {r['expect']}, got {r['reason']} "
                         f"{r.get('detail', '')[:60]}")  # fmt: skip
    return caught, len(cheats), other
