"""Turn a `--sandbox` name into a runner instance; `auto` takes the strongest available."""

from __future__ import annotations

from vibes_eval.core.errors import RunnerUnavailable
from vibes_eval.core.registry import AUTO_ORDER, runner_class
from vibes_eval.core.runner import TaskRunner


def resolve_runner(name: str) -> TaskRunner:
    """Raises: RunnerUnavailable (one line: why) when the runner cannot work here;
    UserError for an unknown name."""
    if name == "auto":
        reasons = []
        for candidate in AUTO_ORDER:
            cls = runner_class(candidate)
            why = cls.check_available()
            if why is None:
                return cls()
            reasons.append(f"{candidate}: {why}")
        raise RunnerUnavailable("no sandbox is available here (" + "; ".join(reasons) + ")")
    cls = runner_class(name)
    why = cls.check_available()
    if why is not None:
        raise RunnerUnavailable(f"--sandbox {name} is not available here: {why}")
    return cls()
