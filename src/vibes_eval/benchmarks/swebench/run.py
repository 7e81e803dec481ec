"""Evaluate one model patch in its instance's image, through the Docker runner.

A fresh container per prediction (the image is the snapshot: a container starts in half a
second, and nothing one prediction leaves behind can reach another). In it, as the
unprivileged job user, with a loopback interface and nothing else (``--network none``):

1. apply the patch with the official fallbacks (``git apply``, ``--3way``, ``--reject``,
   ``patch --fuzz=5``), resetting the tree after each failed try;
2. run the eval script in three commands: what comes before the start marker (log the
   state, reinstall, reset the test files, apply the test patch), the test command, and
   what follows the end marker (reset). The test command runs alone, so its exit status
   comes from the runner, not from a line it prints, and the log section the parser reads
   is exactly its output;
3. for pytest, the harness's probe (``integrity/probe/vibes_swe_probe.py``, from a
   read-only mount) records each test's raw outcome in a file of its own; for a
   unittest-based runner (Django's ``runtests.py``), the start-up witness
   (``integrity/probe/startup/sitecustomize.py``) records what each test method did.

``test_output.txt`` is the three outputs joined with the markers, as the official script
prints them, plus the ``>>>>> Test Exit Code`` line swebench 5.x reads. ``Observation`` is
everything ``run_task`` hands to the judge.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from vibes_eval.benchmarks.swebench.env import services
from vibes_eval.benchmarks.swebench.env.specs import (
    APPLIED,
    APPLY_FAILED,
    END,
    REPO_DIR,
    START,
    Spec,
    test_directives,
)
from vibes_eval.benchmarks.swebench.integrity import PROBE_DIR
from vibes_eval.benchmarks.swebench.integrity.tampering import Findings
from vibes_eval.benchmarks.swebench.tasks import SweInstance
from vibes_eval.core.errors import RunnerError
from vibes_eval.core.runner import NetworkPolicy, SandboxPolicy, Session, SessionSpec, TaskRunner
from vibes_eval.core.types import ExecutionResult, Limits, Termination

PROBE_FILE = "probe.jsonl"
STARTUP_DIR = PROBE_DIR / "startup"
APPLY_COMMANDS = (
    "git apply --verbose",
    "git apply --verbose --3way",
    "git apply --verbose --reject",
    "patch --batch --forward --fuzz=5 -p1 -i",
)
RESET_TREE = "git reset -q --hard HEAD && git clean -qfd"
APPLY_LIMITS = Limits(timeout_s=120, memory_mb=1024, pids=256, output_bytes=1 << 20)
_ENV_LINE = re.compile(r"^\s*(source |\. |conda activate|cd |export |set )")
_HEREDOC_START = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
GIT_ENV = {  # /testbed of an official image is root's: let the job user's git read it
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "safe.directory",
    "GIT_CONFIG_VALUE_0": "*",
    # git looks the host up for a default identity (a socket the sandbox refuses)
    "GIT_AUTHOR_NAME": "vibes-eval",
    "GIT_AUTHOR_EMAIL": "vibes-eval@localhost",
    "GIT_COMMITTER_NAME": "vibes-eval",
    "GIT_COMMITTER_EMAIL": "vibes-eval@localhost",
    "PIP_NO_INDEX": "1",  # no network in the session: fail at once instead of retrying
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
}


@dataclass
class Steps:
    """An eval script cut at the markers."""

    pre: str
    test: str
    post: str
    split: bool  # False: no markers found, the whole script runs as ``test``


@dataclass
class SweRun:
    """What evaluating one prediction observed."""

    image: str = ""
    eval_script: str = ""
    apply_log: str = ""
    applied_with: str | None = None
    pre: ExecutionResult | None = None
    test: ExecutionResult | None = None
    post: ExecutionResult | None = None
    probe: list[dict[str, Any]] = field(default_factory=list)
    uses_pytest: bool = False
    uses_unittest: bool = False  # the start-up witness of unittest-based runners ran
    wall_s: float = 0.0
    log: list[str] = field(default_factory=list)  # run_instance.log lines

    @property
    def applied(self) -> bool:
        return self.applied_with is not None

    def test_output(self) -> str:
        """The log the official script would print (markers included)."""
        parts = [self.pre.stdout if self.pre else "", self.test.stdout if self.test else ""]
        if self.test is not None:
            parts.append(self.post.stdout if self.post else f"+ : '{END}'\n")
            parts.append(f">>>>> Test Exit Code: {self.test_exit}\n")
        return "".join(p if p.endswith("\n") or not p else p + "\n" for p in parts)

    def section(self) -> str:
        """The test command's output: what the parser reads."""
        if self.test is None:
            return ""
        out = self.test.stdout
        marker = out.find(START)
        return out[out.index("\n", marker) + 1 :] if marker >= 0 and "\n" in out[marker:] else out

    @property
    def test_exit(self) -> int | None:
        return None if self.test is None else self.test.exit_code


@dataclass
class Observation:
    """What ``run_task`` observed for one prediction, for the judge: an empty patch, or the
    static findings and the run (or the infrastructure error that stopped it)."""

    empty: bool = False
    findings: Findings | None = None
    run: SweRun | None = None
    infra: str = ""
    script: str = ""
    # the interpreter the environment has and how it differs from the spec (images.notes)
    environment: dict[str, Any] = field(default_factory=dict)


def split_script(script: str) -> Steps:
    """Cut an eval script at ``: '>>>>> Start Test Output'`` and ``... End ...``. The test
    and the post-test parts start with the script's environment lines (activate, cd,
    export) so they run in the same environment, and in the repository, as the whole
    script would."""
    lines = script.splitlines()
    start = next(
        (
            i
            for i, line in enumerate(lines)
            if START in line and "echo" not in line and line.strip().startswith(":")
        ),
        None,
    )
    end = next(
        (i for i, line in enumerate(lines) if END in line and line.strip().startswith(":")), None
    )
    header = ["#!/bin/bash", "exec 2>&1"]
    if start is None or end is None or end < start:
        return Steps("", "\n".join([*header, *lines]) + "\n", "", split=False)
    body = [line for line in lines[:start] if not line.startswith("#!")]
    env = [line for line in _outside_heredocs(body) if _ENV_LINE.match(line) and "<<" not in line]
    pre = [*header, *body]
    test = [*header, *env, *lines[start:end]]
    post = [*header, *env, *lines[end:]]
    return Steps(*("\n".join(x) + "\n" for x in (pre, test, post)), split=True)


def _outside_heredocs(lines: list[str]) -> list[str]:
    """The script's own lines: a heredoc's body (a test patch) is data, and its lines may
    look like commands (``source = \"\"\"`` in pytest-9359's patch read as ``source``)."""
    out: list[str] = []
    until: str | None = None
    for line in lines:
        if until is not None:
            until = None if line == until else until
            continue
        out.append(line)
        if match := _HEREDOC_START.search(line):
            until = match.group(1)
    return out


def looks_like_pytest(steps: Steps) -> bool:
    return bool(re.search(r"\bpytest\b|py\.test", steps.test.split(START, 1)[-1]))


def looks_like_unittest(inst: SweInstance, steps: Steps) -> bool:
    """Django's runner (unittest underneath): ``tests/runtests.py``."""
    return inst.repo == "django/django" or "runtests.py" in steps.test.split(START, 1)[-1]


class PatchEvaluator:
    """Runs predictions of SWE-bench instances on a runner that takes session images."""

    def __init__(self, limits: Limits, probe: bool = True) -> None:
        self.limits = limits
        self.probe = probe

    def run(
        self,
        inst: SweInstance,
        patch: str,
        image: str,
        script: str,
        runner: TaskRunner,
        spec: Spec | None = None,
    ) -> SweRun:
        """``spec`` names the local services the test step starts (env/services.py).
        Raises: RunnerError when the runner fails (infrastructure)."""
        start = time.monotonic()
        out = SweRun(image=image, eval_script=script)
        steps = split_script(script)
        out.uses_pytest = self.probe and steps.split and looks_like_pytest(steps)
        out.uses_unittest = (
            self.probe and steps.split and not out.uses_pytest and looks_like_unittest(inst, steps)
        )
        files = {
            "patch.diff": patch,
            "pre.sh": steps.pre,
            "test.sh": steps.test,
            "post.sh": steps.post,
            "services.sh": services.start_script(spec),
        }
        # Loopback only: test suites start servers of their own (pytest-httpbin, local
        # HTTP servers); the container has no other interface, so nothing leaves it.
        policy = SandboxPolicy(readonly_paths=(PROBE_DIR,), network=NetworkPolicy.LOCAL)
        out.log.append(f"instance {inst.task_id}: image {image}")
        session_spec = SessionSpec(label=inst.task_id, files=files, policy=policy, image=image)
        try:
            with runner.session(session_spec) as session:
                self._apply(session, runner, out)
                if out.applied:
                    self._evaluate(inst, session, runner, steps, out, spec)
        finally:
            out.wall_s = time.monotonic() - start
        return out

    def _step(
        self,
        session: Session,
        runner: TaskRunner,
        name: str,
        env: dict[str, str] | None = None,
        prelude: str = "",
    ) -> ExecutionResult:
        """An eval step, started in the repository (the official images' working dir)."""
        command = f"cd {REPO_DIR} && {prelude}bash {session.path}/{name}"
        return self._sh(session, runner, command, self.limits, env)

    def _sh(
        self,
        session: Session,
        runner: TaskRunner,
        command: str,
        limits: Limits,
        env: dict[str, str] | None = None,
    ) -> ExecutionResult:
        res = runner.execute(
            session, ["bash", "-c", command], limits, env={**GIT_ENV, **(env or {})}
        )
        if res.termination is Termination.KILLED:
            raise RunnerError("the container was stopped from outside (runner shutdown)")
        return res

    def _apply(self, session: Session, runner: TaskRunner, out: SweRun) -> None:
        patch = f"{session.path}/patch.diff"
        for command in APPLY_COMMANDS:
            res = self._sh(session, runner, f"cd {REPO_DIR} && {command} {patch}", APPLY_LIMITS)
            out.apply_log += f"$ {command}\n{res.stdout}{res.stderr}"
            if res.ok:
                out.applied_with = command
                out.log.append(f"{APPLIED}: {command}")
                return
            out.log.append(f"failed: {command} (exit {res.exit_code}, {res.termination})")
            reset = self._sh(session, runner, f"cd {REPO_DIR} && {RESET_TREE}", APPLY_LIMITS)
            if not reset.ok:
                raise RunnerError(
                    f"cannot reset the repository: {reset.stdout}{reset.stderr}"[:300]
                )
        out.log.append(APPLY_FAILED)

    def _evaluate(
        self,
        inst: SweInstance,
        session: Session,
        runner: TaskRunner,
        steps: Steps,
        out: SweRun,
        spec: Spec | None = None,
    ) -> None:
        path = session.path
        if steps.pre:
            out.pre = self._step(session, runner, "pre.sh")
            out.log.append(f"pre-test steps: exit {out.pre.exit_code} ({out.pre.termination})")
        env: dict[str, str] = {}
        if out.uses_pytest:
            tests = [f"{REPO_DIR}/{d}" for d in test_directives(inst) if d.endswith(".py")]
            env = {
                "VIBES_PROBE_OUT": f"{path}/{PROBE_FILE}",
                "VIBES_PROBE_FILES": ":".join(tests),
                "PYTHONPATH": str(PROBE_DIR),
                "PYTEST_ADDOPTS": "-p vibes_swe_probe",
            }
        elif out.uses_unittest:
            env = {"VIBES_PROBE_OUT": f"{path}/{PROBE_FILE}", "PYTHONPATH": str(STARTUP_DIR)}
        # Local services start in the same command (vibes-box ends what a command leaves).
        prelude = f". {path}/services.sh && " if services.services(spec) else ""
        env = {**services.service_env(spec), **env}
        out.test = self._step(session, runner, "test.sh", env, prelude)
        out.log.append(
            f"test command: exit {out.test.exit_code} ({out.test.termination}, "
            f"{out.test.wall_s:.1f} s)"
        )
        if steps.post:
            out.post = self._step(session, runner, "post.sh")
        if out.uses_pytest or out.uses_unittest:
            out.probe = read_probe(runner, session)


def read_probe(runner: TaskRunner, session: Session) -> list[dict[str, Any]]:
    try:
        raw = runner.read_file(session, PROBE_FILE)
    except FileNotFoundError:
        return []
    records = []
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            records.append(rec)
    return records
