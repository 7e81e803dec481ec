"""Turn a `--sandbox` name into a runner instance; `auto` takes the strongest available."""

from __future__ import annotations

from vibes_eval.core.errors import RunnerUnavailable
from vibes_eval.core.registry import AUTO_ORDER, runner_class
from vibes_eval.core.runner import TaskRunner


def resolve_runner(name: str) -> TaskRunner:
    """The runner called ``name`` ("auto": the first of ``AUTO_ORDER`` that works here:
    Landlock stack, Seatbelt on macOS, bubblewrap, firejail, Docker). ``auto`` never picks
    ``process`` or ``none``: untrusted code runs unsandboxed only when asked by name.

    Raises:
        RunnerUnavailable: (one line: why) the runner cannot work here; for ``auto``,
            why each candidate was passed over.
        UserError: an unknown name.
    """
    if name == "auto":
        reasons = []
        for candidate in AUTO_ORDER:
            try:
                return _instantiate(candidate)
            except RunnerUnavailable as exc:
                reasons.append(f"{candidate}: {exc.message.removeprefix(_prefix(candidate))}")
        raise RunnerUnavailable("no sandbox is available here (" + "; ".join(reasons) + ")")
    return _instantiate(name)


def _prefix(name: str) -> str:
    return f"--sandbox {name}: "


def _instantiate(name: str) -> TaskRunner:
    cls = runner_class(name)
    why = cls.check_available()
    if why is not None:
        raise RunnerUnavailable(_prefix(name) + why)
    try:
        runner: TaskRunner = cls()
    except RunnerUnavailable as exc:
        # Found during set-up (launcher build, image build): same one-line form.
        message = exc.message
        raise RunnerUnavailable(
            message if message.startswith(_prefix(name)) else _prefix(name) + message
        ) from None
    return runner
