"""Tables for kernel runs that mix kinds of solutions (naive, expert, wrong, cheats...):
one line of headline metrics per kind, and the per-size timings as TSV. Used by
`make demo-kernels` and scripts/kernels-gpu.sh."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vibes_eval.benchmarks.kernels.metrics import kernel_metrics
from vibes_eval.core.metrics import Scored, reason_counts, score

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
