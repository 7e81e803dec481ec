"""The tool-augmented agent: the model works in a sandbox session of the run's runner
(the same isolation as evaluation; network off) through function calls, within a budget
of N tool calls, and its solution file is then evaluated as the sample.

Tools: list_files, read_file, search, write_file, edit_file, run (a shell command in the
session: build, run, time, profile with nsys/ncu where the session has them), run_tests
(the benchmark's own evaluation of the current solution: an attempt, recorded and
reported per round), submit. Reading and listing run as commands in the sandbox, so a
planted symlink reads only what the sandbox can; writes go through the runner, which
refuses paths that leave the work dir.

On resume the recorded model answers are replayed; the tool calls that change the work
dir (write_file, edit_file, run) are executed again to rebuild it, and the model is shown
the outputs it saw the first time."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from vibes_eval.core.errors import RunnerError
from vibes_eval.core.runner import SandboxPolicy, Session, SessionSpec
from vibes_eval.core.types import Limits, SampleResult
from vibes_eval.generation.job import Job
from vibes_eval.generation.models import CallFailed, Message, Reply, ToolCall
from vibes_eval.generation.prompts import Workspace, cap
from vibes_eval.store.events import ToolCalled


def _fn(name: str, description: str, **params: str) -> dict[str, Any]:
    props = {p: {"type": "string", "description": d} for p, d in params.items()}
    required = [p for p in params if not params[p].startswith("(optional)")]
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": props, "required": required},
        },
    }


SPECS: dict[str, dict[str, Any]] = {
    "list_files": _fn(
        "list_files",
        "List the files under a directory of the work dir.",
        path="(optional) a directory, default .",
    ),
    "read_file": _fn("read_file", "Read a file of the work dir.", path="the file"),
    "search": _fn(
        "search",
        "Search the work dir's files for an extended regular expression.",
        pattern="the regex",
        path="(optional) where to search, default .",
    ),
    "write_file": _fn(
        "write_file",
        "Create or replace a file of the work dir.",
        path="the file",
        content="its whole new content",
    ),
    "edit_file": _fn(
        "edit_file",
        "Replace text that occurs exactly once in a file.",
        path="the file",
        old="the text to replace",
        new="its replacement",
    ),
    "run": _fn(
        "run",
        "Run a shell command in the work dir (no network): build, run, time.",
        command="the command",
    ),
    "run_tests": _fn("run_tests", "Evaluate the current solution with the benchmark's tests."),
    "submit": _fn("submit", "Finish: the current solution file is your answer."),
}
CHANGES_WORKDIR = frozenset({"write_file", "edit_file", "run"})


class Toolbox:
    """One sandbox session and the tools that act on it."""

    def __init__(self, job: Job, workspace: Workspace) -> None:
        self.job = job
        self.ws = workspace
        self.runner = job.run.runner
        self.output_chars = int(job.run.option("output_chars", 4000))
        self.limits = Limits(
            timeout_s=float(job.run.option("command_timeout_s", 60.0)),
            memory_mb=4096,
            pids=128,
            output_bytes=1 << 20,
        )
        self.session: Session | None = None
        self.tests_run = 0
        self.submitted = False

    def __enter__(self) -> Toolbox:
        policy = SandboxPolicy(readonly_paths=self.ws.readonly_paths, network=self.ws.network)
        spec = SessionSpec(
            label=self.job.key[0].replace("/", "_"),
            files=dict(self.ws.files),
            policy=policy,
            device=self.ws.device,
            image=self.ws.image,
        )
        self.session = self.runner.prepare(spec)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.session is not None:
            self.runner.cleanup(self.session)

    # -- the tools --------------------------------------------------------------------

    def call(self, call: ToolCall) -> tuple[str, bool]:
        """(what the model is shown, whether it worked). Raises: Stopped, RunnerError
        from session-level failures only."""
        if call.error:
            return f"error: {call.error}", False
        args = {k: v if isinstance(v, str) else str(v) for k, v in call.arguments.items()}
        try:
            handler = getattr(self, "_" + call.name) if call.name in self.offered() else None
            if handler is None:
                return f"error: no tool named {call.name!r}", False
            return handler(**args)
        except TypeError as exc:  # missing or unexpected arguments
            return f"error: {exc}", False
        except ValueError as exc:  # a path that leaves the work dir
            return f"error: {exc}", False

    def offered(self) -> list[str]:
        chosen = self.job.run.option("tools", None)
        return [t for t in SPECS if chosen is None or t in chosen or t == "submit"]

    def _exec(self, argv: list[str], stdin: bytes | None = None) -> tuple[int | None, str, str]:
        """Run in the workspace's root (the work dir, or a directory of the image)."""
        assert self.session is not None
        if self.ws.root:
            argv = ["/bin/sh", "-c", 'cd "$0" && exec "$@"', self.ws.root, *argv]
        res = self.runner.execute(self.session, argv, self.limits, env=self.ws.env, stdin=stdin)
        code = res.exit_code if res.termination.value == "exited" else None
        return (
            code,
            res.stdout,
            res.stderr + ("" if code is not None else f"\n[{res.termination.value}]"),
        )

    @staticmethod
    def _inside(path: str) -> str:
        """Refuse a path outside the work dir before anything runs (the sandbox would
        contain it; the process runner would not). Raises: ValueError."""
        parts = PurePosixPath(path).parts
        if not path or path.startswith("/") or ".." in parts:
            raise ValueError(f"path {path!r} leaves the work dir: use a relative path")
        return path

    def _list_files(self, path: str = ".") -> tuple[str, bool]:
        code, out, err = self._exec(["find", self._inside(path), "-maxdepth", "4", "-type", "f"])
        return cap(out or err, self.output_chars), code == 0

    def _read_file(self, path: str) -> tuple[str, bool]:
        code, out, err = self._exec(["cat", "--", self._inside(path)])
        return cap(out if code == 0 else err, self.output_chars), code == 0

    def _search(self, pattern: str, path: str = ".") -> tuple[str, bool]:
        code, out, err = self._exec(["grep", "-rnE", "--", pattern, self._inside(path)])
        return cap(out or err or "no match", self.output_chars), code in (0, 1)

    def _write_file(self, path: str, content: str) -> tuple[str, bool]:
        assert self.session is not None
        path = self._inside(path)
        if not self.ws.root:
            self.runner.write_files(self.session, {path: content})
        else:  # a directory of the image: written from inside the sandbox
            script = 'mkdir -p "$(dirname "$0")" && cat > "$0"'
            code, _, err = self._exec(["/bin/sh", "-c", script, path], stdin=content.encode())
            if code != 0:
                return cap(err or f"cannot write {path}", self.output_chars), False
        return f"wrote {len(content)} characters to {path}", True

    def _edit_file(self, path: str, old: str, new: str) -> tuple[str, bool]:
        code, text, err = self._exec(["cat", "--", self._inside(path)])
        if code != 0:
            return cap(err, self.output_chars), False
        count = text.count(old) if old else 0
        if count != 1:
            return f"error: the text occurs {count} times in {path}; it must occur once", False
        return self._write_file(path, text.replace(old, new, 1))

    def _run(self, command: str) -> tuple[str, bool]:
        if self.ws.shell_prelude:
            argv = ["/bin/bash", "-c", f"{self.ws.shell_prelude}\n{command}"]
        else:
            argv = ["/bin/sh", "-c", command]
        code, out, err = self._exec(argv)
        shown = (
            f"exit code: {code}\n"
            + (f"stdout:\n{out}\n" if out else "")
            + (f"stderr:\n{err}\n" if err.strip() else "")
        )
        return cap(shown, self.output_chars), code == 0

    def _run_tests(self) -> tuple[str, bool]:
        self.tests_run += 1
        completion = self.solution_completion()
        result = self.job.evaluate(completion, self.tests_run)
        self.job.record_attempt(self.tests_run, completion, result)
        return self.verdict_text(result), result.passed

    def _submit(self) -> tuple[str, bool]:
        self.submitted = True
        return "submitted", True

    # -- the solution -----------------------------------------------------------------

    def solution_text(self) -> str:
        argv = list(self.ws.solution_command) or ["cat", "--", self.ws.solution]
        code, out, _ = self._exec(argv)
        return out if code == 0 else ""

    def solution_completion(self) -> str:
        return self.job.run.prompting.from_workspace(
            self.job.task, self.job.ctx, self.solution_text()
        )

    def verdict_text(self, result: SampleResult) -> str:
        if result.passed:
            return "passed: every test passed"
        values = self.job.run.prompting.feedback(result, self.output_chars)
        reason = values.get("reason", result.reason)
        parts = [
            "failed" if reason == "failed" else f"failed: {reason}",
            values.get("detail", ""),
            values.get("output", ""),
        ]
        return "\n".join(p for p in parts if p)


def _assistant(reply: Reply, step: int) -> Message:
    msg: Message = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        msg["tool_calls"] = [
            {
                "id": c.id or f"call_{step}_{i}",
                "type": "function",
                "function": {"name": c.name, "arguments": c.raw or "{}"},
            }
            for i, c in enumerate(reply.tool_calls)
        ]
    return msg


def run_agent(job: Job) -> None:
    """Raises: Stopped, BudgetExceeded, FatalModelError."""
    workspace = job.run.prompting.workspace(job.task, job.ctx)
    if workspace is None:
        job.fail("infra_error", f"{job.run.benchmark.name} gives agents no work dir", 1)
        return
    job.ctx = job.ctx.model_copy(update={"workspace": workspace})  # the prompt names its files
    budget = job.run.settings.agent.budget
    recorded = {(t.step, t.call_id): t for t in job.hist.tools}
    try:
        with Toolbox(job, workspace) as box:
            specs = [SPECS[t] for t in box.offered()]
            messages = job.first_messages(agent=True, tool_budget=budget)
            used, initial = 0, box.solution_text()
            final_text = ""
            while not box.submitted and used < budget:
                try:
                    reply = job.chat(messages, specs)
                except CallFailed as failure:
                    job.failed_call(failure, box.tests_run + 1)
                    return
                step = job.step - 1
                messages.append(_assistant(reply, step))
                if not reply.tool_calls:
                    final_text = reply.text
                    break
                for i, call in enumerate(reply.tool_calls):
                    call.id = call.id or f"call_{step}_{i}"
                    if used >= budget or box.submitted:
                        output = (
                            "not run: the tool budget is spent"
                            if used >= budget
                            else ("not run: already submitted")
                        )
                    else:
                        used += 1
                        output = _tool(job, box, call, step, recorded)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
            completion = box.solution_completion()
            if final_text and box.solution_text() == initial:
                completion = job.completion(final_text)  # answered in text, never wrote
    except RunnerError as exc:
        job.fail("infra_error", f"sandbox session: {exc}", len(job.hist.attempts) + 1)
        return
    round_ = len(job.hist.attempts) + 1  # after the test runs the agent asked for
    job.finish(job.evaluate(completion, round_), completion, round_)


def _tool(
    job: Job,
    box: Toolbox,
    call: ToolCall,
    step: int,
    recorded: Mapping[tuple[int, str], ToolCalled],
) -> str:
    """Run one tool call (or replay it), record it, and return what the model sees."""
    before = recorded.get((step, call.id))
    start = time.monotonic()
    if before is not None:
        if call.name in CHANGES_WORKDIR or call.name in ("run_tests", "submit"):
            box.call(call)  # rebuild the work dir; the model sees what it saw then
        return before.output
    output, ok = box.call(call)
    job.run.sink.append(
        [
            ToolCalled(
                run_id=job.run.run_id,
                task_id=job.key[0],
                index=job.key[1],
                step=step,
                call_id=call.id,
                name=call.name,
                arguments=call.arguments or {"raw": call.raw},
                output=output,
                ok=ok,
                wall_s=round(time.monotonic() - start, 4),
            )
        ]
    )
    return output
