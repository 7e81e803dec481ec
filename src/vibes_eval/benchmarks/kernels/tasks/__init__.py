"""Kernel tasks: every ``task.yaml`` under a directory tree
(``tasks/class{1..4}/{general,hopper,blackwell}/<task>/``), with the files of its folder.

A task's files are what the harness builds from (Makefile, harness, naive solution,
expert reference); their hash is part of the task's fingerprint, so an edited harness
never reuses a cached verdict.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from vibes_eval.benchmarks.kernels.tasks.schema import TaskSpec, load_task_yaml
from vibes_eval.core.errors import UserError
from vibes_eval.core.types import Task

MAX_TASK_BYTES = 64 << 20  # a task folder larger than this is refused (build outputs left?)
SKIP = re.compile(r"(^|/)(\.git|__pycache__|\.vibes[^/]*)(/|$)")
CHANNEL_MARK = "KH_RESULTS"  # a harness that reads this writes its verdict to our channel
ARCH_GROUPS = ("general", "hopper", "blackwell")
CUDA_BACKENDS = frozenset({"class1_make", "class2_defpy", "class3_app", "class4_challenge"})


class KernelTask(Task):
    """One task.yaml and where its files are."""

    spec: TaskSpec
    folder: str  # the task's directory on this machine
    root: str  # the task set's root (holds `tasks/`, maybe `reference_sources/`)
    files_digest: str  # hash of every file of the folder, names included
    file_names: list[str]  # relative paths of the folder's files
    channel: bool  # the harness reports through the results channel (trusted verdicts)

    def fingerprint(self) -> str:
        # Where the task lives does not change verdicts; what its files hold does.
        return hashlib.sha256(
            self.spec.model_dump_json().encode() + self.files_digest.encode()
        ).hexdigest()

    @property
    def backend(self) -> str:
        return self.spec.runner.backend

    @property
    def needs_gpu(self) -> bool:
        return self.backend in CUDA_BACKENDS

    @property
    def task_class(self) -> int:
        return self.spec.task_class or class_of(self.task_id)

    @property
    def group(self) -> str:
        return group_of(self.task_id)

    @property
    def solution_file(self) -> str:
        return self.spec.solution_file

    def read_files(self) -> dict[str, bytes]:
        """The folder's files, as they are on disk now.

        Raises:
            UserError: a file went missing or grew past the limit since loading.
        """
        folder = Path(self.folder)
        out: dict[str, bytes] = {}
        for rel in self.file_names:
            try:
                out[rel] = (folder / rel).read_bytes()
            except OSError as exc:
                raise UserError(
                    f"cannot read task file: {exc.strerror}", path=folder / rel
                ) from None
        return out

    def original_solution(self) -> str:
        """The naive solution shipped with the task (what the model replaces)."""
        path = Path(self.folder) / self.solution_file
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""


def class_of(task_id: str) -> int:
    m = re.match(r"class(\d+)/", task_id)
    return int(m.group(1)) if m else 0


def group_of(task_id: str) -> str:
    """general / hopper / blackwell from an id like class1/hopper/52_gemm; else other."""
    parts = task_id.split("/")
    return parts[1] if len(parts) > 2 and parts[1] in ARCH_GROUPS else "other"


def find_root(folder: Path, given: Path) -> Path:
    """The task set's root: the nearest ancestor holding the `tasks` folder the task sits
    in; else the directory the user gave."""
    for parent in folder.parents:
        if parent.name == "tasks":
            return parent.parent
        if parent == given.parent:
            break
    return given


def load_tasks(path: str | Path) -> dict[str, KernelTask]:
    """Every task.yaml below ``path`` (or ``path`` itself when it is a task.yaml).

    Raises:
        UserError: no such directory, no task.yaml below it, a bad task.yaml (file, line,
            field), a duplicated task id, a missing solution file, a folder too large.
    """
    given = Path(path).expanduser()
    if not given.exists():
        raise UserError("no such file or directory", path=given)
    found = [given] if given.is_file() else sorted(given.rglob("task.yaml"))
    found = [p for p in found if not SKIP.search(p.as_posix())]
    if not found:
        raise UserError("no task.yaml below this directory", path=given)
    tasks: dict[str, KernelTask] = {}
    for yaml_path in found:
        task = _load_one(yaml_path, given if given.is_dir() else given.parent)
        if task.task_id in tasks:
            raise UserError(
                f"task id {task.task_id!r} also in {tasks[task.task_id].source}",
                path=yaml_path, field="task_id",
            )  # fmt: skip
        tasks[task.task_id] = task
    return tasks


def _load_one(yaml_path: Path, given: Path) -> KernelTask:
    spec = load_task_yaml(yaml_path)
    folder = yaml_path.parent.resolve()
    names, digest, channel = _scan(folder, yaml_path)
    if spec.solution_file not in names and spec.runner.backend != "class3_app":
        raise UserError(
            f"the task folder has no {spec.solution_file} (the naive solution a model replaces)",
            path=yaml_path, field="runner.solution_file",
        )  # fmt: skip
    return KernelTask(
        task_id=spec.task_id,
        source=str(yaml_path),
        spec=spec,
        folder=str(folder),
        root=str(find_root(folder, given.resolve())),
        files_digest=digest,
        file_names=names,
        channel=channel,
    )


def _scan(folder: Path, yaml_path: Path) -> tuple[list[str], str, bool]:
    h = hashlib.sha256()
    names: list[str] = []
    total, channel = 0, False
    for file in sorted(folder.rglob("*")):
        rel = file.relative_to(folder).as_posix()
        if not file.is_file() or SKIP.search(rel):
            continue
        data = file.read_bytes()
        total += len(data)
        if total > MAX_TASK_BYTES:
            raise UserError(
                f"the task folder holds more than {MAX_TASK_BYTES >> 20} MiB (build outputs?)",
                path=yaml_path,
            )
        names.append(rel)
        h.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
        channel = channel or (file.suffix in (".c", ".cc", ".cpp", ".cu", ".h", ".cuh", ".hpp")
                              and CHANNEL_MARK.encode() in data)  # fmt: skip
    return names, h.hexdigest(), channel
