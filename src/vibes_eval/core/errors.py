"""Errors that reach the user as one line, never as a traceback."""

from __future__ import annotations

from pathlib import Path


class UserError(Exception):
    """A mistake in the user's input or environment.

    The CLI prints ``str(err)`` on one line and exits with code 2. ``where`` names the
    file and line, ``field`` the offending field, so the message points at the fix.
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.message = message
        super().__init__(self.render())

    def render(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line is not None else "")
        if self.field is not None:
            where = f"{where} field '{self.field}'" if where else f"field '{self.field}'"
        return f"{where}: {self.message}" if where else self.message


class RunnerUnavailable(UserError):
    """The requested runner cannot work on this machine (missing tool, no privileges)."""


class RunnerBroken(UserError):
    """The runner's own parts failed: the sandbox launcher does not build or run, the
    Docker image does not build. A bug or a broken installation, not a tool missing here:
    never a reason to fall back to another sandbox or to skip a test. One line, exit 3."""

    exit_code = 3


class RunnerError(Exception):
    """The runner itself failed (infrastructure), not the code it was running."""


class PolicyUnsupported(UserError):
    """A session asked for isolation or access the chosen runner cannot enforce (a host
    allow-list under Landlock, extra blocked syscalls under seatbelt...)."""


class DeviceUnavailable(RunnerError):
    """A session needs an accelerator and this runner has none (or none of that kind).
    Benchmarks report it as ``no_device``, never as a wrong answer."""
