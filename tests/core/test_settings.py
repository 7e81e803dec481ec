"""Settings reach a benchmark through --config and --set, validated by its own model; every
mistake is one line naming the setting and where it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli
from vibes_eval.benchmarks.humaneval.config import HumanEvalConfig
from vibes_eval.core.errors import UserError
from vibes_eval.core.settings import Layer, build, parse_assignments, read_config_file


def test_assignments_nest_and_read_yaml_scalars() -> None:
    layer = parse_assignments(["limits.timeout_s=2.5", "batch=false", "extract=auto", "a.b=[1, 2]"])
    assert layer.values == {
        "limits": {"timeout_s": 2.5},
        "batch": False,
        "extract": "auto",
        "a": {"b": [1, 2]},
    }
    with pytest.raises(UserError, match="expected key=value"):
        parse_assignments(["timeout"])


def test_layers_merge_later_wins_and_validate() -> None:
    config = build(
        HumanEvalConfig,
        [Layer("a.yaml", {"limits": {"timeout_s": 3, "memory_mb": 512}}),
         Layer("--set", {"limits": {"timeout_s": 4}})],
        "humaneval-rust",
    )  # fmt: skip
    assert (config.limits.timeout_s, config.limits.memory_mb) == (4, 512)


@pytest.mark.parametrize(
    ("text", "suffix", "message"),
    [
        ("limits:\n  timeout_s: 3\n  memry_mb: 1\n", ".yaml",
         "run.yaml:3 field 'limits.memry_mb': unknown setting for humaneval-rust (known: "),
        ('extract = "sometimes"\n', ".toml", "run.toml:1 field 'extract': Input should be"),
        ('{"batch": "maybe"}', ".json", "run.json:1 field 'batch': Input should be a valid boolean"),
        ("limits: [1, 2\n", ".yaml", "run.yaml:2: invalid YAML"),
    ],
)  # fmt: skip
def test_config_file_errors_name_file_line_and_setting(
    tmp_path: Path, text: str, suffix: str, message: str
) -> None:
    path = tmp_path / f"run{suffix}"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        build(HumanEvalConfig, [read_config_file(path)], "humaneval-rust")
    assert str(err.value).startswith(f"{tmp_path}/{message}"), str(err.value)


def test_a_set_error_names_the_flag() -> None:
    with pytest.raises(UserError) as err:
        build(HumanEvalConfig, [parse_assignments(["limits.timeout_s=soon"])], "humaneval-rust")
    assert str(err.value).startswith(
        "field 'limits.timeout_s': --set: Input should be a valid number"
    )


def test_the_cli_takes_config_and_set_and_refuses_unknown_settings(tmp_path: Path) -> None:
    problems = EXAMPLES / "sanity" / "problems.jsonl"
    samples = EXAMPLES / "sanity" / "samples.jsonl"
    base = ["eval", "run", "humaneval-rust", "--samples", str(samples), "--problems",
            str(problems), "--store", "none", "--no-progress", "-o", str(tmp_path / "r.jsonl")]  # fmt: skip
    proc = run_cli(*base, "--set", "enforce_polcy=false")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "field 'enforce_polcy': --set: unknown setting for humaneval-rust" in proc.stderr
    assert "enforce_policy" in proc.stderr  # the known ones are listed

    config = tmp_path / "run.yaml"
    config.write_text("limits:\n  timeout_s: 2\nenforce_policy: false\n")
    proc = run_cli(*base, "--config", str(config), "--set", "limits.timeout_s=3", "--k", "1")
    assert proc.returncode == 0, proc.stderr
    # The policy filter was off: the sample it would block ran (and timed out or failed).
    assert "blocked_policy" not in proc.stdout
