"""What a generation run reports besides the benchmark's metrics: what generation cost
(requests, retries, tokens, dollars, latency), the metrics per round of a self-refining
or tool-using run, and one sample's trajectory (`vibes eval show`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from vibes_eval.core.benchmark import Benchmark
from vibes_eval.generation.history import RunHistory, SampleHistory, Totals, round_table
from vibes_eval.store.base import RunInfo
from vibes_eval.store.events import AttemptEvaluated, ModelCalled, SampleEvaluated, ToolCalled

WIDE = 4  # metrics above which the per-round table turns (a row per metric)


def totals_text(t: Totals) -> str:
    mean = t.latency_s / t.answers if t.answers else 0.0
    return (
        f"{t.answers} answers from {t.requests} requests ({t.retries} retried), "
        f"{t.input_tokens} input + {t.output_tokens} output tokens, ${t.cost_usd:.4f}, "
        f"{mean:.2f} s per answer" + (f", {t.tool_calls} tool calls" if t.tool_calls else "")
    )


def rounds_table(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> Table:
    """A row per round; with many metrics (kernels: speeds and fast_p), a row per metric
    and a column per round instead, so that it fits a terminal."""
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    if len(names) > WIDE:
        table.add_column("round", justify="left")
        for row in rows:
            table.add_column(str(row["round"]), justify="right")
        for label, key in (("samples", "samples"), ("passed", "passed")):
            table.add_row(label, *(str(row[key]) for row in rows))
        for n in names:
            table.add_row(n, *(f"{row[n]:.4f}" if n in row else "-" for row in rows))
        table.add_row("still refining", *(str(row["refining"]) for row in rows))
        return table
    for col in ("round", "samples", "passed", *names, "still refining"):
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(
            str(row["round"]),
            str(row["samples"]),
            str(row["passed"]),
            *(f"{row[n]:.4f}" if n in row else "-" for n in names),
            str(row["refining"]),
        )
    return table


def summary_lines(
    benchmark: Benchmark[Any, Any], history: RunHistory, ks: Sequence[int], generated: Any
) -> list[Any]:
    out: list[Any] = [
        f"generation: {totals_text(history.totals)}; "
        f"{generated.evaluated} attempts evaluated in {generated.batches} batches"
    ]
    declared = benchmark.metrics(ks)
    rows = round_table(history, declared)
    if len(rows) > 1:
        # Per-group variants (kernels' `fast_1.05:class1`) stay in `vibes eval results`.
        names = [m.name for m in declared if ":" not in m.name and any(m.name in r for r in rows)]
        out += [
            "by round (a sample that stopped keeps its last verdict):",
            rounds_table(rows, names),
        ]
    errors = [
        h.final.result
        for h in history.finished()
        if h.final is not None and h.final.result.reason == "generation_error"
    ]
    if errors:
        out.append(f"generation errors: {len(errors)} (first: {errors[0].detail})")
    return out


# -- one sample's trajectory ------------------------------------------------------------


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in str(text).splitlines()) + "\n"


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    if "messages" in body:
        msgs = list(body["messages"])
        if "system" in body:  # Anthropic keeps it apart
            msgs.insert(0, {"role": "system", "content": body["system"]})
        return msgs
    return [{"role": "prompt", "content": body.get("prompt", "")}]


def _content(msg: dict[str, Any]) -> str:
    content = msg.get("content")
    if isinstance(content, list):  # Anthropic blocks
        return "\n".join(
            json.dumps(b, ensure_ascii=False) if b.get("type") != "text" else b.get("text", "")
            for b in content
        )
    text = content or ""
    for call in msg.get("tool_calls") or []:
        fn = call.get("function", {})
        text += f"\n[tool call {call.get('id', '')}] {fn.get('name')}({fn.get('arguments')})"
    return text


def trajectory_text(info: RunInfo, hist: SampleHistory, *, full: bool = False) -> str:
    started = info.started
    gen = started.generation if started else {}
    task_id, index = hist.key
    head = f"run {info.run_id}  {info.benchmark}"
    if gen:
        head += f"  model {gen.get('model')}  setting {gen.get('setting')}"
    lines = [head, f"sample {task_id} #{index}"]
    shown = 0  # messages of the conversation already printed
    for ev in hist.events:
        if isinstance(ev, ModelCalled):
            lines.append(_call_text(ev))
            if ev.request:
                msgs = _messages(ev.request)
                new = msgs if full else msgs[shown:]
                shown = len(msgs)
                for msg in new:
                    lines.append(f"  > {msg.get('role')}:\n" + _indent(_content(msg)).rstrip("\n"))
            if ev.ok:
                resp = ev.response
                text = resp.get("text", "")
                for call in resp.get("tool_calls") or []:
                    text += (
                        f"\n[tool call {call.get('id')}] {call.get('name')}"
                        f"({json.dumps(call.get('arguments'), ensure_ascii=False)})"
                    )
                lines.append("  < assistant:\n" + _indent(text).rstrip("\n"))
                shown += 1
        elif isinstance(ev, ToolCalled):
            args = json.dumps(ev.arguments, ensure_ascii=False)
            lines.append(
                f"step {ev.step} · tool {ev.name}({args[:200]}) "
                f"{'ok' if ev.ok else 'failed'} in {ev.wall_s:.2f} s"
            )
            lines.append(_indent(ev.output).rstrip("\n"))
        elif isinstance(ev, AttemptEvaluated):
            lines.append(f"round {ev.round} · {_verdict(ev.result)}")
        elif isinstance(ev, SampleEvaluated):
            rec = ev.record
            lines.append(
                f"final · {_verdict(ev.result)} after {rec.get('rounds', 1)} round(s); "
                f"{rec.get('model_calls', 0)} answers, {rec.get('requests', 0)} "
                f"requests, {rec.get('input_tokens', 0)}+{rec.get('output_tokens', 0)} "
                f"tokens, ${rec.get('cost_usd', 0.0):.4f}"
            )
            if rec.get("completion"):
                lines.append("  completion:\n" + _indent(rec["completion"]).rstrip("\n"))
    return "\n".join(lines) + "\n"


def _call_text(ev: ModelCalled) -> str:
    head = f"step {ev.step} · {ev.model} attempt {ev.attempt}: "
    if ev.ok:
        return head + (
            f"answered in {ev.latency_s:.2f} s, {ev.input_tokens}+{ev.output_tokens} "
            f"tokens, ${ev.cost_usd:.4f}, finish {ev.response.get('finish_reason')}"
        )
    text = head + f"failed in {ev.latency_s:.2f} s: {ev.error}"
    return text + (f"; retrying in {ev.retry_in_s:.2f} s" if ev.retry else "")


def _verdict(result: Any) -> str:
    text = "passed" if result.passed else f"failed ({result.reason})"
    if result.cached:
        text += " [cached]"
    if result.detail and not result.passed:
        text += f": {result.detail.splitlines()[0][:200]}"
    return text
