"""`vibes`: the main command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vibes_eval.cli import generate as gen
from vibes_eval.cli import options as opt
from vibes_eval.cli.errors import run_cli
from vibes_eval.cli.images import register as register_image_commands
from vibes_eval.cli.results import register as register_store_commands
from vibes_eval.cli.run import RunArgs, run_and_report
from vibes_eval.cli.serve import serve_command
from vibes_eval.core import registry
from vibes_eval.core.errors import UserError

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="vibes-eval: measure how well language models write code.",
    rich_markup_mode=None,  # click's plain help: fits 80 columns without cutting names
)
# Built-in benchmarks and those installed packages register (``vibes_eval.benchmarks``).
_BENCHMARK_HELP = "One of: " + ", ".join(registry.benchmark_names()) + "."

eval_app = typer.Typer(
    no_args_is_help=True, help="Run and inspect evaluations.", rich_markup_mode=None
)
app.add_typer(eval_app, name="eval")


@eval_app.command(
    "run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def run_command(
    ctx: typer.Context,
    benchmark: Annotated[str, typer.Argument(help=_BENCHMARK_HELP, metavar="BENCHMARK")],
    samples: Annotated[
        Path | None,
        typer.Option(
            "--samples",
            "--predictions",
            "-s",
            help="The model's outputs: JSONL of completions ({task_id, completion} per line); "
            "for swe-bench, predictions ({instance_id, model_name_or_path, model_patch}).",
        ),
    ] = None,
    config: opt.ConfigFile = None,
    set_: opt.SetItems = None,
    problems: opt.Problems = None,
    k: opt.Ks = "1,10,100",
    workers: opt.Workers = None,
    timeout: opt.Timeout = None,
    enforce_policy: opt.EnforcePolicy = None,
    sandbox: opt.Sandbox = "auto",
    extract: opt.Extract = None,
    output: opt.Output = None,
    progress: opt.ShowProgress = True,
    batch: opt.Batch = None,
    store: opt.Store = None,
    run_id: opt.RunId = None,
    label: opt.Label = None,
    no_cache: opt.NoCache = False,
    store_hint: opt.StoreHint = True,
    executor: opt.ExecutorName = "local",
    ray_address: opt.RayAddress = None,
    model: gen.Model = None,
    base_url: gen.BaseUrl = None,
    n: gen.N = None,
    setting: gen.SettingOpt = None,
    temperature: gen.Temperature = None,
    top_p: gen.TopP = None,
    max_tokens: gen.MaxTokens = None,
    stop: gen.Stop = None,
    seed: gen.Seed = None,
    prompt_template: gen.PromptTemplate = None,
    prompt_style: gen.PromptStyle = None,
    tasks: gen.Tasks = None,
    concurrency: gen.Concurrency = None,
    max_cost: gen.MaxCost = None,
    max_tokens_total: gen.MaxTokensTotal = None,
    gen_set: gen.GenSet = None,
    dry_run: gen.DryRun = False,
) -> None:
    """Evaluate a file of completions (or generate them with --model) and report the
    benchmark's metrics; the run is recorded in the store. Any setting of the benchmark is
    also an option: --name value (e.g. --instance-ids a b, --repos DIR for swe-bench), the
    same as --set name=value."""
    if tasks and problems is None and (model is None or Path(tasks).expanduser().exists()):
        # `--tasks` is also --problems' alias (kernels: `--tasks DIR`); click gives it to
        # the task selection, so a folder or file given without --model is the problems.
        problems, tasks = tasks, None
    generation = gen.settings_from_flags({**locals(), "gen": gen_set})  # None without --model
    if generation is None and samples is None:
        raise UserError("--samples is required (or --model to generate the samples)")
    flags = opt.shorthand(
        problems=problems,
        limits__timeout_s=timeout,
        enforce_policy=enforce_policy,
        extract=extract,
        batch=batch,
    )
    args = RunArgs(
        benchmark,
        opt.samples_path(samples) if samples is not None else None,
        k,
        workers,
        sandbox,
        output,
        progress,
        layers=opt.settings_layers(config, [*flags, *opt.extra_settings(ctx.args)], set_),
        store=store,
        run_id=run_id,
        labels=label or [],
        no_cache=no_cache,
        store_hint=store_hint,
        executor=executor,
        ray_address=ray_address,
    )
    if generation is not None:
        gen.run_generation(args, generation, dry_run=dry_run)
    else:
        run_and_report(args, compat=False)


register_store_commands(eval_app)
gen.register(eval_app)
register_image_commands(eval_app)
eval_app.command("serve")(serve_command)


def main() -> None:
    run_cli(app, "vibes")


if __name__ == "__main__":
    main()
