"""Who is evaluating a run: host, pid and a start-time token, so that a run killed with
kill -9 (no end event) shows as interrupted, and a live one is not resumed twice."""

from __future__ import annotations

import os
import socket
from pathlib import Path


def host() -> str:
    return socket.gethostname()


def start_token(pid: int | None = None) -> str:
    """Boot id + the process's start time in clock ticks (Linux); "" elsewhere. A pid that
    the kernel handed to another process after a crash has a different token."""
    pid = os.getpid() if pid is None else pid
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""
    # Field 22; the command name (field 2) may contain spaces, so count from its ')'.
    fields = stat.rsplit(")", 1)[-1].split()
    return f"{boot}:{fields[19]}" if len(fields) > 19 else ""


def is_alive(run_host: str, pid: int, token: str) -> bool | None:
    """Whether the recorded process still runs; None when it cannot be told from here
    (another host)."""
    if run_host != host():
        return None
    if pid <= 0:
        return False
    if token:
        return start_token(pid) == token
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def effective_status(status: str, run_host: str, pid: int, token: str) -> str:
    """A run recorded as running whose process is gone was killed: show it interrupted."""
    if status == "running" and is_alive(run_host, pid, token) is False:
        return "interrupted"
    return status
