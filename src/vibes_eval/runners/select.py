"""Turn a `--sandbox` name into a runner instance; `auto` takes the strongest available."""

from __future__ import annotations

from collections.abc import Iterable

from vibes_eval.core.errors import RunnerUnavailable
from vibes_eval.core.registry import AUTO_ORDER, runner_class
from vibes_eval.core.runner import TaskRunner
from vibes_eval.runners import cgroups


def resolve_runner(name: str, needs: Iterable[str] = ()) -> TaskRunner:
    """The runner called ``name`` ("auto": the first of ``AUTO_ORDER`` that works here:
    Landlock stack, Seatbelt on macOS, bubblewrap, firejail, Docker; bubblewrap first where
    no per-job cgroup can be made). ``auto`` never picks ``process`` or ``none``: untrusted
    code runs unsandboxed only when asked by name. ``needs``: capabilities the benchmark
    cannot do without (``Capabilities`` flags such as ``session_images``); ``auto`` passes
    over runners that lack one.

    Raises:
        RunnerUnavailable: (one line: why) the runner cannot work here; for ``auto``,
            why each candidate was passed over.
        UserError: an unknown name.
    """
    if name == "auto":
        reasons = []
        for candidate in _auto_order():
            lacking = [n for n in needs if not getattr(runner_class(candidate).capabilities, n)]
            if lacking:
                reasons.append(f"{candidate}: no {', '.join(lacking)}")
                continue
            try:
                return _instantiate(candidate)
            except RunnerUnavailable as exc:
                reasons.append(f"{candidate}: {exc.message.removeprefix(_prefix(candidate))}")
        raise RunnerUnavailable("no sandbox is available here (" + "; ".join(reasons) + ")")
    return _instantiate(name)


def _auto_order() -> list[str]:
    """``AUTO_ORDER``, except that without a per-job cgroup (not root, no delegated v2)
    bubblewrap goes before Landlock: its pid namespace still kills a detached grandchild
    and its network namespace still cuts the network, which Landlock alone cannot."""
    order = list(AUTO_ORDER)
    if "landlock" in order and "bwrap" in order and cgroups.manager()[0] is None:
        order.remove("bwrap")
        order.insert(order.index("landlock"), "bwrap")
    return order


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
