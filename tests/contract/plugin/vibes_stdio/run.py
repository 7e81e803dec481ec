"""What executes: the program alone in a fresh session, once per case, the case's input
on stdin. The expected outputs never enter the session: the judge holds them, so nothing
the program can read or write decides its verdict."""

from __future__ import annotations

from vibes_eval.core.runner import SessionSpec, TaskRunner
from vibes_eval.core.types import ExecutionResult, Limits, Sample
from vibes_stdio.config import StdioConfig
from vibes_stdio.tasks import StdioTask


def run_cases(
    task: StdioTask, sample: Sample, runner: TaskRunner, config: StdioConfig
) -> list[ExecutionResult]:
    """One observation per case; stops at the first case the program does not finish."""
    spec = SessionSpec(label=task.task_id, files={"main.py": sample.completion})
    limits = Limits(timeout_s=config.limits.timeout_s, memory_mb=config.limits.memory_mb)
    seen: list[ExecutionResult] = []
    with runner.session(spec) as session:
        for case in task.cases:
            argv = [config.interpreter, "main.py"]
            res = runner.execute(session, argv, limits, stdin=case.input.encode())
            seen.append(res)
            if not res.ok:
                break
    return seen
