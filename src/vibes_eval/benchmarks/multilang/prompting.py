"""What a model is told about a problem of these benchmarks, and how its answer becomes a
completion (the text the evaluators append to the prompt).

- **chat**: the model is asked for the whole function in a fence of the language; the
  fence is taken out as ``extract: auto`` does. Python keeps the whole block (it
  redefines the prompt's function, as ``extract: auto`` evaluates it; MBPP has no prompt
  to continue). Languages with braces keep what follows the repeated signature's opening
  brace, closed as the prompt needs (MultiPL-E's tests close the function themselves).
- **completion** (base models): the prompt itself, cut at the stop sequences (MultiPL-E's
  own; Codex's for Python; ``\\n}`` for the brace languages, whose open braces are then
  closed).
"""

from __future__ import annotations

import re

from vibes_eval.benchmarks.multilang.languages.policy import strip_c_like
from vibes_eval.benchmarks.multilang.tasks import CodeTask
from vibes_eval.core.prompting import PromptContext, Prompting, cut_at_stop

PY_STOP = ["\ndef ", "\nclass ", "\nif __name__", "\nprint(", "\n#"]  # Codex's, as usual
BRACE_STOP = ["\n}"]
FENCE_TAGS = {"python": ("python", "py", "python3")}
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+#-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_IDENT = re.compile(r"([A-Za-z_]\w*)\s*(?:=|\()")
_KEYWORDS = frozenset(
    [
        "func",
        "function",
        "if",
        "for",
        "while",
        "return",
        "const",
        "let",
        "var",
        "switch",
        "catch",
        "sizeof",
        "static",
        "public",
        "private",
    ]
)
# What a whole-file answer repeats before its function and a continuation cannot hold.
_PREAMBLE = re.compile(
    r"^\s*(#\s*include|using\s+namespace|package\s|import\s|import\(|class\s|public\s+class\s)"
)


def fence_tags(lang: str) -> tuple[str, ...]:
    if lang in FENCE_TAGS:
        return FENCE_TAGS[lang]
    from vibes_eval.benchmarks.multilang.languages.programs import language

    try:
        return language(lang).fence_tags
    except KeyError:
        return (lang,)


def fenced(text: str, tags: tuple[str, ...]) -> str:
    """The first block tagged with one of ``tags`` (or untagged), else the first block,
    else the text: what ``extract: auto`` takes."""
    if "```" not in text:
        return text
    blocks = _FENCE.findall(text)
    for tag, body in blocks:
        if tag.lower() in (*tags, ""):
            return body
    return blocks[0][1] if blocks else text


def _braces(problem: CodeTask) -> bool:
    return problem.language != "python" and problem.prompt.rstrip().endswith("{")


def stop_sequences(problem: CodeTask) -> list[str]:
    if problem.format == "multipl-e" and problem.stop_tokens:
        return list(problem.stop_tokens)
    return BRACE_STOP if _braces(problem) else PY_STOP


def prompt_context(problem: CodeTask) -> PromptContext:
    lang = problem.language
    if problem.format == "mbpp":
        tests = "\n".join(problem.test_list)
        description = f"{problem.prompt.strip()}\nYour code should pass these tests:\n\n{tests}"
        return PromptContext(task_id=problem.task_id, family="solution", language=lang,
                             variables={"description": description}, stop=PY_STOP)  # fmt: skip
    return PromptContext(
        task_id=problem.task_id,
        family="function",
        language=lang,
        variables={
            "prompt": problem.prompt,
            "entry_point": entry_name(problem),
            "format": problem.format,
        },
        stop=stop_sequences(problem),
    )


def entry_name(problem: CodeTask) -> str:
    """The function the prompt leaves open (Python: its entry point; braces: the name on
    the line that opens it)."""
    if problem.entry_point or not _braces(problem):
        return problem.entry_point
    code = strip_c_like(problem.prompt, backtick=problem.language in ("js", "go"))
    last = code.rstrip().rsplit("\n", 1)[-1]
    names = [n for n in _IDENT.findall(last) if n not in _KEYWORDS]
    return names[0] if names else ""


def to_completion(problem: CodeTask, text: str, style: str) -> str:
    """The completion to evaluate from a model's answer."""
    if style == "completion":
        body, _ = cut_at_stop(text, stop_sequences(problem))
        if _braces(problem) and problem.format != "multipl-e":
            body = body.rstrip("\n") + "\n" + "}\n" * max(0, _depth(problem.prompt + body))
        return body
    code = fenced(text, fence_tags(problem.language))
    if not _braces(problem):
        return code
    return _continuation(problem, code)


def _depth(code: str) -> int:
    bare = strip_c_like(code, backtick=True)
    return bare.count("{") - bare.count("}")


def _continuation(problem: CodeTask, code: str) -> str:
    """What follows the answer's repeated signature, as a continuation of the prompt."""
    name = entry_name(problem)
    js_go = problem.language in ("js", "go")
    bare = strip_c_like(code, backtick=js_go)
    m = re.search(rf"\b{re.escape(name)}\b[^;{{}}]*\{{", bare) if name else None
    if m is None:
        return code  # the body alone
    before, body = code[: code.rfind("\n", 0, m.start()) + 1], code[m.end() :]
    open_now = _depth(problem.prompt)
    if problem.format == "multipl-e":
        return body[: _closing(body, js_go)]  # its tests close the function
    closers = max(0, open_now + _depth(body))
    out = body.rstrip("\n") + "\n" + "}\n" * closers if closers else body
    if js_go:  # helpers the model wrote first still work after the function
        helpers = _helpers(before)
        out += ("\n" + helpers) if helpers.strip() else ""
    return out


def _closing(body: str, backtick: bool) -> int:
    """Where the function the body continues closes (its length when it never does)."""
    depth = 1
    for i, c in enumerate(strip_c_like(body, backtick=backtick)):
        depth += (c == "{") - (c == "}")
        if depth == 0:
            return i
    return len(body)


def _helpers(before: str) -> str:
    """``before`` without the preamble the prompt already has (includes, package and
    import lines or blocks, the class that holds the function)."""
    out: list[str] = []
    in_import = False
    for line in before.splitlines():
        if in_import:
            in_import = not line.strip().startswith(")")
            continue
        if _PREAMBLE.match(line):
            in_import = line.strip().startswith("import") and line.rstrip().endswith("(")
            continue
        out.append(line)
    return "\n".join(out)


class CodeTaskPrompting(Prompting[CodeTask]):
    """Prompts and answers of the Python and multi-language benchmarks."""

    def context(self, task: CodeTask) -> PromptContext:
        return prompt_context(task)

    def completion(self, task: CodeTask, ctx: PromptContext, text: str, style: str) -> str:
        return to_completion(task, text, style)
