"""Models in the loop on the command line: `vibes eval run BENCH --model ...` (the flags
below, and the flow that generates and evaluates), `vibes eval show RUN TASK [INDEX]` (a
sample's trajectory) and `vibes eval ab EXPERIMENT.yaml` (A/B experiments)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from vibes_eval import api
from vibes_eval.cli.run import RunArgs, run_and_report
from vibes_eval.core.errors import UserError
from vibes_eval.core.settings import Layer, build, nest, parse_assignments
from vibes_eval.generation.settings import GenerationSettings
from vibes_eval.store.sql import open_store
from vibes_eval.store.urls import resolve

# -- the flags `vibes eval run` takes for generation ------------------------------------

Model = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="Generate the samples with this model instead of reading --samples: "
        "openai/NAME (OpenAI, or any compatible server with --base-url) or anthropic/NAME. "
        "Keys come from OPENAI_API_KEY / ANTHROPIC_API_KEY.",
        rich_help_panel="Model",
    ),
]
BaseUrl = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 "
        "(vLLM, llama.cpp, Ollama, OpenRouter).",
        rich_help_panel="Model",
    ),
]
N = Annotated[
    int | None,
    typer.Option("--n", min=1, help="Samples per task (default 1).", rich_help_panel="Model"),
]
SettingOpt = Annotated[
    str | None,
    typer.Option(
        "--setting",
        help="one-shot (default), self-refine:N (N rounds with feedback) or "
        "tool-augmented:N (N tool calls in a sandbox).",
        rich_help_panel="Model",
    ),
]
Temperature = Annotated[float | None, typer.Option("--temperature", min=0, rich_help_panel="Model")]
TopP = Annotated[float | None, typer.Option("--top-p", rich_help_panel="Model")]
MaxTokens = Annotated[
    int | None,
    typer.Option("--max-tokens", min=1, help="Per answer (default 1024).", rich_help_panel="Model"),
]
Stop = Annotated[
    list[str] | None,
    typer.Option(
        "--stop",
        help="A stop sequence (repeatable; completion style has the benchmark's).",
        rich_help_panel="Model",
    ),
]
Seed = Annotated[
    int | None,
    typer.Option("--seed", help="Sample i of each task is sent seed + i.", rich_help_panel="Model"),
]
PromptTemplate = Annotated[
    Path | None,
    typer.Option(
        "--prompt-template",
        dir_okay=False,
        help="Jinja2 template of the first user message, "
        "or a YAML/TOML/JSON file of prompt settings (style, system, user, completion, "
        "feedback).",
        rich_help_panel="Model",
    ),
]
PromptStyle = Annotated[
    str | None,
    typer.Option(
        "--prompt-style",
        help="chat (default: code taken from the answer's fence) or "
        "completion (base models: the code prefix, continued to the stop sequences).",
        rich_help_panel="Model",
    ),
]
Tasks = Annotated[
    str | None,
    typer.Option(
        "--tasks",
        help="Comma-separated task ids, or a number: the first N tasks.",
        rich_help_panel="Model",
    ),
]
Concurrency = Annotated[
    int | None,
    typer.Option(
        "--concurrency", min=1, help="Requests at once (default 4).", rich_help_panel="Model"
    ),
]
MaxCost = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        min=0,
        help="Stop starting requests once the run has cost this many US "
        "dollars (prices: --gen price.input=... price.output=... per million tokens).",
        rich_help_panel="Model",
    ),
]
MaxTokensTotal = Annotated[
    int | None,
    typer.Option(
        "--max-tokens-total",
        min=0,
        help="Stop starting requests after this many tokens.",
        rich_help_panel="Model",
    ),
]
GenSet = Annotated[
    list[str] | None,
    typer.Option(
        "--gen",
        help="Any generation setting, key=value: request_timeout_s=60, max_retries=8, "
        "options.feedback_chars=2000, prompt.system=..., api_key_env=OPENROUTER_API_KEY.",
        rich_help_panel="Model",
    ),
]
DryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Print the first prompt and how many requests the run would send; send nothing.",
        rich_help_panel="Model",
    ),
]

FLAG_KEYS = {
    "model": "model",
    "base_url": "base_url",
    "n": "sampling.n",
    "setting": "setting",
    "temperature": "sampling.temperature",
    "top_p": "sampling.top_p",
    "max_tokens": "sampling.max_tokens",
    "stop": "sampling.stop",
    "seed": "sampling.seed",
    "prompt_style": "prompt.style",
    "concurrency": "concurrency",
    "max_cost": "max_cost",
    "max_tokens_total": "max_tokens_total",
}
FLAG_NAMES = {k: "--" + k.replace("_", "-") for k in FLAG_KEYS}


def settings_from_flags(values: Mapping[str, Any]) -> GenerationSettings | None:
    """The generation settings of `vibes eval run`'s flags (``values``: its parameters by
    name); None without --model. Layers, later winning: --prompt-template, the flags,
    --gen. Raises: UserError (one line naming the flag or key)."""
    given = {k: values.get(k) for k in FLAG_KEYS if values.get(k) not in (None, [])}
    extra = [n for n in ("tasks", "prompt_template", "gen") if values.get(n)]
    if values.get("model") is None:
        if given or extra or values.get("dry_run"):
            first = next(iter(given), None)
            flag = (
                FLAG_NAMES[first]
                if first
                else "--" + extra[0].replace("_", "-")
                if extra
                else "--dry-run"
            )
            raise UserError(f"{flag} needs --model (the samples are generated by a model)")
        return None
    layers: list[Layer] = []
    if values.get("prompt_template"):
        from vibes_eval.generation.prompts import read_template_file

        path = Path(values["prompt_template"])
        layers.append(Layer(str(path), {"prompt": read_template_file(path)}))
    for key, value in given.items():
        layers.append(Layer(FLAG_NAMES[key], nest(FLAG_KEYS[key], value)))
    if values.get("tasks"):
        layers.append(Layer("--tasks", tasks_layer(values["tasks"])))
    if values.get("gen"):
        layers.append(parse_assignments(values["gen"], "--gen"))
    return build(GenerationSettings, layers, "generation")  # type: ignore[return-value]


def tasks_layer(text: str) -> dict[str, Any]:
    text = text.strip()
    if text.isdigit():
        return {"limit": int(text)}
    return {"tasks": [t.strip() for t in text.split(",") if t.strip()]}


# -- `vibes eval run --model` -----------------------------------------------------------


def run_generation(args: RunArgs, settings: GenerationSettings, *, dry_run: bool) -> None:
    """Generate, evaluate as samples arrive, report. Exits 130 on Ctrl-C (resumable), 3
    when a budget stopped it (resume with `--run-id` and a larger budget)."""
    from vibes_eval.generation.pipeline import GenerationEvaluation

    if dry_run:
        dry_run_report(args, settings)
        return
    made: list[GenerationEvaluation] = []

    def factory(request: api.Request) -> api.Evaluation:
        made.append(GenerationEvaluation(request, settings))
        return made[-1]

    args.evaluation = factory
    args.on_report = print_generation_report
    run_and_report(args, compat=False)
    generated = made[-1].generated if made else None
    if generated is not None and generated.stop_reason:
        err = Console(stderr=True)
        run_id = made[-1].run_id
        if run_id:
            err.print(
                f"continue with a larger budget: the same command with --run-id {run_id}",
                soft_wrap=True,
            )
        sys.exit(3)


def dry_run_report(args: RunArgs, settings: GenerationSettings) -> None:
    """The first prompt and the number of requests; nothing is sent or recorded."""
    from vibes_eval.generation.dryrun import describe

    config = api.make_config(args.benchmark, args.base_config, *args.layers)
    print(describe(args.benchmark, config, settings))


def print_generation_report(ev: api.Evaluation, console: Console) -> None:
    from vibes_eval.generation.report import summary_lines

    generated = getattr(ev, "generated", None)
    if generated is None:
        return
    for line in summary_lines(
        ev.prepared.benchmark, generated.history, list(ev.request.ks), generated
    ):
        console.print(line, highlight=False, soft_wrap=True)


def resume_generation(run_id: str, started: Any, args: RunArgs) -> None:
    """`vibes eval resume RUN` of a generated run: its stored generation settings."""
    settings = GenerationSettings.model_validate(started.generation)
    run_generation(args, settings, dry_run=False)


# -- `vibes eval show` ------------------------------------------------------------------


def show_command(
    run_id: Annotated[str, typer.Argument(help="A run id, as `vibes eval results` lists them.")],
    task_id: Annotated[str, typer.Argument(help="A task id of the run, e.g. Rust/0.")],
    index: Annotated[int, typer.Argument(help="The sample's index within the task.")] = 0,
    store: Annotated[
        str | None,
        typer.Option(
            "--store", envvar="VIBES_STORE", help="The result store (default: the data dir's)."
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="text or json.")] = "text",
    full: Annotated[bool, typer.Option("--full", help="Every request's whole body.")] = False,
) -> None:
    """A sample's whole trajectory: every request and response (with retries, tokens,
    latency and cost), tool call, evaluated attempt and the final verdict."""
    from vibes_eval.generation.history import RunHistory
    from vibes_eval.generation.report import trajectory_text

    with open_store(resolve(store), create=False) as st:
        info = st.run(run_id)
        history = RunHistory.load(st, run_id)
    hist = history.samples.get((task_id, index))
    if hist is None or not hist.events:
        raise UserError(f"run '{run_id}' has no sample {task_id} #{index}")
    if fmt == "json":
        print(
            json.dumps(
                [ev.model_dump(mode="json") for ev in hist.events], indent=1, ensure_ascii=False
            )
        )
        return
    if fmt != "text":
        raise UserError(f"--format {fmt!r}: use text or json")
    sys.stdout.write(trajectory_text(info, hist, full=full))


# -- `vibes eval ab` --------------------------------------------------------------------


def ab_command(
    experiment: Annotated[
        Path, typer.Argument(help="The experiment file (YAML, TOML, JSON).", dir_okay=False)
    ],
    store: Annotated[
        str | None,
        typer.Option(
            "--store", envvar="VIBES_STORE", help="The result store (default: the data dir's)."
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json.")] = "table",
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Print each variant's first prompt and request count; send nothing."
        ),
    ] = False,
) -> None:
    """Run the experiment's variants on the same tasks with the same seeds, then report
    each variant's metrics and cost per solved task, and every pair's differences with
    paired bootstrap CIs and McNemar's test. Running it again resumes each variant's run."""
    from vibes_eval.generation.experiments import load_experiment, print_ab, run_experiment

    exp = load_experiment(experiment)
    if fmt not in ("table", "json"):
        raise UserError(f"--format {fmt!r}: use table or json")
    report = run_experiment(exp, store=store, progress=progress, dry_run=dry_run)
    if report is None:
        return
    if fmt == "json":
        print(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    else:
        console = Console(highlight=False)  # piped: not cut at 80 columns
        print_ab(report, console if console.is_terminal else Console(highlight=False, width=200))


def register(eval_app: typer.Typer) -> None:
    eval_app.command("show")(show_command)
    eval_app.command("ab")(ab_command)
