"""A/B experiments: variants of a generation run (model, sampling, setting, prompt, agent
options) on the same tasks with the same seeds, compared pairwise.

    name: refine-vs-oneshot          # run ids are <name>.<variant>: running it again resumes
    benchmark: humaneval-rust
    config: {problems: humaneval-x-rust}     # the benchmark's settings, shared
    generation:                      # shared generation settings (any key of --gen)
      model: openai/qwen2.5-coder
      base_url: http://127.0.0.1:8080/v1
      limit: 20
      sampling: {n: 5, seed: 1, temperature: 0.8}
    k: [1, 5]
    variants:
      one-shot: {setting: one-shot}
      refine: {setting: self-refine:3, feedback_chars: 2000}

A variant's keys are generation settings; n, temperature, top_p, max_tokens, stop and
seed may be given at its top level, ``prompt_template`` names a template file (relative
to the experiment file), and any other key is an agent option. Without a seed anywhere,
seed 0 is used so that paired samples share their seeds. Variants share the result cache:
identical code is evaluated once across them."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from rich.console import Console
from rich.table import Table

from vibes_eval import api
from vibes_eval.core.errors import UserError
from vibes_eval.core.metrics import by_task
from vibes_eval.core.registry import scoring_for
from vibes_eval.core.settings import Layer, build, read_config_file
from vibes_eval.generation.history import RunHistory, round_table
from vibes_eval.generation.settings import GenerationSettings
from vibes_eval.runs.compare import compare
from vibes_eval.runs.lifecycle import RUN_ID
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

SAMPLING_KEYS = ("n", "temperature", "top_p", "max_tokens", "stop", "seed")


class Experiment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    benchmark: str
    config: dict[str, Any] = Field(default_factory=dict)
    generation: dict[str, Any] = Field(default_factory=dict)
    variants: dict[str, dict[str, Any]]
    k: list[int] = Field(default_factory=lambda: [1])
    sandbox: str = "auto"
    workers: int | None = Field(None, ge=1)
    labels: dict[str, str] = Field(default_factory=dict)

    @field_validator("variants")
    @classmethod
    def _some(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        if not value:
            raise ValueError("list at least one variant")
        for name in value:
            if not RUN_ID.fullmatch(name):
                raise ValueError(f"variant name {name!r}: letters, digits and . _ : - only")
        return value


def load_experiment(path: Path) -> tuple[Experiment, Path]:
    """Raises: UserError naming the file, line and field."""
    layer = read_config_file(path)
    values = dict(layer.values)
    values.setdefault("name", path.stem)
    for name, variant in (values.get("variants") or {}).items():
        if variant is None:
            values["variants"][name] = {}
    try:
        exp = Experiment.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise UserError(first["msg"], path=path, field=loc) from None
    if not RUN_ID.fullmatch(f"{exp.name}.x"):
        raise UserError("letters, digits and . _ : - only", path=path, field="name")
    return exp, path


def _normalize(values: dict[str, Any], base: Path) -> dict[str, Any]:
    """Sampling keys into ``sampling``, a template file into ``prompt``, unknown keys into
    the agent's ``options``."""
    out: dict[str, Any] = {}
    fields = set(GenerationSettings.model_fields)
    for key, value in values.items():
        if key in SAMPLING_KEYS:
            out.setdefault("sampling", {})[key] = value
        elif key == "prompt_template":
            from vibes_eval.generation.prompts import read_template_file

            out.setdefault("prompt", {}).update(read_template_file(base / str(value)))
        elif key in fields:
            out[key] = value
        else:
            out.setdefault("options", {})[key] = value
    return out


def variant_settings(exp: Experiment, path: Path, name: str) -> GenerationSettings:
    """Raises: UserError naming the variant's offending setting."""
    base = path.parent
    shared = _normalize(exp.generation, base)
    mine = _normalize(exp.variants[name], base)
    layers = [Layer(f"{path}: generation", shared), Layer(f"{path}: variants.{name}", mine)]
    seeded = "seed" in shared.get("sampling", {}) or "seed" in mine.get("sampling", {})
    if not seeded:
        layers.insert(0, Layer("the experiment's default seed", {"sampling": {"seed": 0}}))
    return build(GenerationSettings, layers, f"variant {name}")  # type: ignore[return-value]


def run_id_of(exp: Experiment, variant: str) -> str:
    return f"{exp.name}.{variant}"


def run_experiment(
    loaded: tuple[Experiment, Path], *, store: str | None, progress: bool, dry_run: bool
) -> dict[str, Any] | None:
    """Run (or resume) every variant, then compare them. None after a dry run.

    Raises: UserError; SystemExit 130 on Ctrl-C (the finished variants stay recorded).
    """
    exp, path = loaded
    settings = {name: variant_settings(exp, path, name) for name in exp.variants}
    config = api.make_config(exp.benchmark, exp.config)
    if dry_run:
        from vibes_eval.generation.dryrun import describe

        for name, s in settings.items():
            print(f"=== variant {name} (run {run_id_of(exp, name)})")
            print(describe(exp.benchmark, config, s))
        return None
    spec = store or api.DEFAULT_STORE
    for name, s in settings.items():
        _run_variant(exp, name, s, config, spec, progress)
    return report(exp, settings, store)


def _run_variant(
    exp: Experiment,
    name: str,
    settings: GenerationSettings,
    config: Any,
    store: str,
    progress: bool,
) -> None:
    import sys

    from vibes_eval.generation.pipeline import GenerationEvaluation
    from vibes_eval.progress import sample_progress

    labels = {"experiment": exp.name, "variant": name, "model": settings.model, **exp.labels}
    request = api.Request(
        benchmark=exp.benchmark,
        samples=[],
        config=config,
        sandbox=exp.sandbox,
        store=store,
        workers=exp.workers,
        run_id=run_id_of(exp, name),
        labels=labels,
        ks=exp.k,
    )
    err = Console(stderr=True, highlight=False)
    with GenerationEvaluation(request, settings) as ev:
        err.print(
            f"variant {name}: run {ev.run_id}"
            + (f" (resumed, {ev.already_done} samples done)" if ev.resumed else "")
        )
        with sample_progress(
            len(ev.prepared.samples), ev.already_done, enabled=progress, console=err
        ) as advance:
            outcome = ev.run(advance)
    if outcome.interrupted:
        err.print(f"interrupted: run the experiment again to resume {ev.run_id}")
        sys.exit(130)
    if ev.generated is not None and ev.generated.stop_reason:
        err.print(f"variant {name} stopped: {ev.generated.stop_reason}")


def report(
    exp: Experiment, settings: dict[str, GenerationSettings], store: str | None
) -> dict[str, Any]:
    """Each variant's metrics, cost and solved tasks; every pair's differences."""
    with open_store(
        resolve(None if store in (None, api.DEFAULT_STORE) else store), create=False
    ) as st:
        runs = {name: run_id_of(exp, name) for name in settings}
        infos = {name: st.run(rid) for name, rid in runs.items()}
        rows = {name: st.samples(rid) for name, rid in runs.items()}
        histories = {name: RunHistory.load(st, rid) for name, rid in runs.items()}
    first = next(iter(infos.values()))
    assert first.started is not None
    scoring = scoring_for(exp.benchmark, first.started.config, exp.k)
    variants = []
    for name, s in settings.items():
        variants.append(_variant_row(name, runs[name], s, rows[name], histories[name], scoring))
    pairs = []
    for a, b in combinations(settings, 2):
        try:
            cmp = compare(rows[a], rows[b], scoring.metrics, solved=scoring.solved)
        except ValueError as exc:
            pairs.append({"a": a, "b": b, "error": str(exc)})
            continue
        pairs.append({"a": a, "b": b, **cmp.as_dict()})
    return {
        "experiment": exp.name,
        "benchmark": exp.benchmark,
        "variants": variants,
        "pairs": pairs,
    }


def _variant_row(
    name: str,
    run_id: str,
    s: GenerationSettings,
    rows: list[Any],
    history: RunHistory,
    scoring: Any,
) -> dict[str, Any]:
    from vibes_eval.core.metrics import score

    scores = score(scoring.metrics, rows)
    solved = sum(1 for rs in by_task(rows).values() if scoring.solved(rs))
    t = history.totals
    rounds = round_table(history, scoring.metrics) if s.agent.kind != "one-shot" else []
    return {
        "variant": name,
        "run_id": run_id,
        "model": s.model,
        "setting": s.setting,
        "sampling": s.sampling.model_dump(exclude_none=True),
        "samples": len(rows),
        "tasks": len(by_task(rows)),
        "metrics": scores.values,
        "solved": solved,
        "cost_usd": round(t.cost_usd, 6),
        "tokens": t.tokens,
        "requests": t.requests,
        "cost_per_solved": round(t.cost_usd / solved, 6) if solved else None,
        "reused": sum(1 for r in rows if r.cached),
        "rounds": rounds,
        "notes": scores.notes,
    }


def _table(*cols: str) -> Table:
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for i, col in enumerate(cols):
        table.add_column(col, justify="left" if i == 0 else "right")
    return table


def print_ab(rep: dict[str, Any], console: Console) -> None:
    variants = rep["variants"]
    names = list(dict.fromkeys(m for v in variants for m in v["metrics"]))
    console.print(f"[bold]{rep['experiment']}[/]: {rep['benchmark']}, {len(variants)} variants")
    table = _table(
        "variant", "setting", "samples", *names, "solved", "cost $", "$/solved", "reused"
    )
    for v in variants:
        per = "-" if v["cost_per_solved"] is None else f"{v['cost_per_solved']:.4f}"
        table.add_row(
            v["variant"],
            v["setting"],
            str(v["samples"]),
            *(f"{v['metrics'][n]:.4f}" if n in v["metrics"] else "-" for n in names),
            f"{v['solved']}/{v['tasks']}",
            f"{v['cost_usd']:.4f}",
            per,
            str(v["reused"]),
        )
    console.print(table)
    for v in variants:
        if len(v["rounds"]) > 1:
            headline = next((n for n in names if n in v["rounds"][0]), None)
            if headline:
                steps = ", ".join(f"{r['round']}: {r[headline]:.3f}" for r in v["rounds"])
                console.print(f"{v['variant']}: {headline} by round  {steps}")
    for pair in rep["pairs"]:
        console.print(
            f"[bold]{pair['b']} - {pair['a']}[/]"
            + (f": {pair['error']}" if "error" in pair else f" over {pair['tasks']} tasks")
        )
        if "error" in pair:
            continue
        diffs = _table("metric", pair["a"], pair["b"], "difference", "95% CI")
        for m in pair["metrics"]:
            diffs.add_row(
                m["metric"],
                f"{m['a']:.4f}",
                f"{m['b']:.4f}",
                f"{m['diff']:+.4f}",
                f"[{m['ci_low']:+.4f}, {m['ci_high']:+.4f}]",
            )
        console.print(diffs)
        mc = pair["mcnemar"]
        console.print(
            f"McNemar exact test on solved tasks: {mc['improved']} improved, "
            f"{mc['regressed']} regressed, p = {mc['p_value']:.4g}"
        )
        for note in pair["notes"]:
            console.print(f"[yellow]note[/]: {note}")
