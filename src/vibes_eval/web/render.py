"""HTML for what a sample carries: its code highlighted (Pygments), its ``details`` (any
benchmark's JSON: per-test statuses, timings per size, nested values) and a generated
sample's trajectory. Every string is escaped here: ``Markup.format`` escapes its
arguments, and nothing from a sample ever reaches ``Markup`` unescaped."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

CODE_FIELDS = ("completion", "model_patch", "patch", "solution", "code", "generation", "output")
TRAJECTORY_KEYS = ("trajectory", "messages", "conversation", "transcript")
MAX_CODE = 200_000  # characters highlighted; the rest is cut with a note
MAX_ITEMS = 500  # list items or mapping keys shown at one level
MAX_DEPTH = 8
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
STATUS_CSS = {
    "success": "ok",
    "passed": "ok",
    "PASSED": "ok",
    "failure": "bad",
    "failed": "bad",
    "FAILED": "bad",
    "ERROR": "bad",
    "error": "bad",
}

# A word of the benchmark's name -> the language of its samples (MultiPL-E's come from the
# record's "language" when it has one).
BENCHMARK_LEXERS = (
    ("rust", "rust"), ("swe", "diff"), ("cuda", "cuda"), ("kernels", "cuda"), ("kernel", "cuda"),
    ("python", "python"), ("mbpp", "python"), ("cpp", "cpp"), ("go", "go"),
    ("js", "javascript"), ("java", "java"),
)  # fmt: skip

_formatter = HtmlFormatter(cssclass="hl", linenos="inline", wrapcode=True)


@cache
def pygments_css() -> str:
    """Pygments' colours, scoped to ``.hl`` (its unscoped ``pre`` rule dropped)."""
    lines = _formatter.get_style_defs(".hl").splitlines()
    return "\n".join(line for line in lines if not line.startswith("pre ")) + "\n"


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def code_of(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, text) of the sample's code in its input record, when it has one."""
    for name in CODE_FIELDS:
        value = record.get(name)
        if isinstance(value, str):
            return name, value
    return None


def language(benchmark: str, field: str, text: str, record: Mapping[str, Any]) -> str:
    """A Pygments lexer name for a sample's code."""
    declared = record.get("language") or record.get("lang")
    if isinstance(declared, str) and declared.strip():
        return declared.strip().lower()
    head = text.lstrip()[:200]
    if field in ("model_patch", "patch") or head.startswith(("diff --git", "--- ", "Index: ")):
        return "diff"
    words = set(re.split(r"[^a-z0-9+]+", benchmark.lower()))
    for hint, lexer in BENCHMARK_LEXERS:
        if hint in words:
            return lexer
    return "text"


def highlighted(text: str, lang: str) -> Markup:
    """Pygments escapes the code it formats; a lexer it does not know falls back to text."""
    cut = len(text) > MAX_CODE
    try:
        lexer = get_lexer_by_name(lang, stripnl=False, ensurenl=False)
    except ClassNotFound:
        lexer = get_lexer_by_name("text", stripnl=False, ensurenl=False)
    out = Markup(highlight(text[:MAX_CODE], lexer, _formatter))
    if cut:
        out += Markup('<p class="note">{} more characters not shown</p>').format(
            len(text) - MAX_CODE
        )
    return out


# -- details ------------------------------------------------------------------------------


def _scalar(value: Any) -> Markup:
    if value is None:
        return Markup('<span class="null">null</span>')
    if isinstance(value, bool):
        return Markup('<span class="bool">{}</span>').format(str(value).lower())
    if isinstance(value, float):
        return Markup('<span class="num">{}</span>').format(f"{value:.6g}")
    if isinstance(value, int):
        return Markup('<span class="num">{}</span>').format(value)
    text = str(value)
    if "\n" in text or len(text) > 160:
        return Markup('<pre class="text">{}</pre>').format(strip_ansi(text))
    cls = STATUS_CSS.get(text)
    if cls:
        return Markup('<span class="status {}">{}</span>').format(cls, text)
    return Markup('<span class="str">{}</span>').format(text)


def is_test_statuses(value: Any) -> bool:
    """SWE-bench's tests_status: {"FAIL_TO_PASS": {"success": [...], "failure": [...]}, ...}."""
    return (
        isinstance(value, Mapping)
        and bool(value)
        and all(
            isinstance(v, Mapping)
            and v
            and set(v) <= {"success", "failure"}
            and all(isinstance(x, list) for x in v.values())
            for v in value.values()
        )
    )


def test_statuses(value: Mapping[str, Mapping[str, list[Any]]]) -> Markup:
    rows = []
    summary = []
    for group, outcome in value.items():
        ok, bad = list(outcome.get("success", [])), list(outcome.get("failure", []))
        summary.append(Markup("{}: {} of {} pass").format(group, len(ok), len(ok) + len(bad)))
        for name, status in [*((n, "failure") for n in bad), *((n, "success") for n in ok)]:
            rows.append(
                Markup('<tr><td>{}</td><td class="mono">{}</td><td>{}</td></tr>').format(
                    group, name, _scalar(status)
                )
            )
    head = Markup('<p class="teststat">{}</p>').format(Markup("; ").join(summary))
    table = Markup(
        '<table class="tests"><thead><tr><th>group</th><th>test</th><th>status</th></tr>'
        "</thead><tbody>{}</tbody></table>"
    ).format(Markup("").join(rows[:MAX_ITEMS]))
    more = _more(len(rows))
    return head + table + more


def is_records(value: Any) -> bool:
    """A list of flat mappings (a kernel's timings per size, per-test rows): a table."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(v, Mapping)
            and v
            and all(not isinstance(x, Mapping | list) for x in v.values())
            for v in value
        )
    )


def records_table(value: list[Mapping[str, Any]]) -> Markup:
    columns: list[str] = []
    for row in value:
        columns.extend(k for k in row if k not in columns)
    head = Markup("").join(Markup("<th>{}</th>").format(c) for c in columns)
    body = Markup("").join(
        Markup("<tr>{}</tr>").format(
            Markup("").join(
                Markup("<td>{}</td>").format(_scalar(row[c]) if c in row else "") for c in columns
            )
        )
        for row in value[:MAX_ITEMS]
    )
    return Markup(
        '<table class="records"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>'
    ).format(head, body) + _more(len(value))


def _more(n: int) -> Markup:
    if n <= MAX_ITEMS:
        return Markup("")
    return Markup('<p class="note">{} more not shown (the JSON endpoint has them all)</p>').format(
        n - MAX_ITEMS
    )


def is_trajectory(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(m, Mapping) and "role" in m for m in value)
    )


def render_value(value: Any, depth: int = 0) -> Markup:
    """Any JSON value as nested HTML, recognising test statuses, tables and trajectories."""
    if depth > MAX_DEPTH:
        return Markup('<pre class="text">{}</pre>').format(json.dumps(value, indent=1)[:5000])
    if is_test_statuses(value):
        return test_statuses(value)
    if is_trajectory(value):
        return trajectory(value)
    if is_records(value):
        return records_table(value)
    if isinstance(value, Mapping):
        if not value:
            return Markup('<span class="null">{}</span>').format("{}")
        items = list(value.items())
        rows = Markup("").join(
            Markup("<div><dt>{}</dt><dd>{}</dd></div>").format(k, render_value(v, depth + 1))
            for k, v in items[:MAX_ITEMS]
        )
        return Markup('<dl class="tree">{}</dl>').format(rows) + _more(len(items))
    if isinstance(value, list):
        if not value:
            return Markup('<span class="null">[]</span>')
        if all(not isinstance(v, Mapping | list) for v in value):
            return Markup('<ul class="inline">{}</ul>').format(
                Markup("").join(Markup("<li>{}</li>").format(_scalar(v)) for v in value[:MAX_ITEMS])
            ) + _more(len(value))
        return Markup('<ol class="tree">{}</ol>').format(
            Markup("").join(
                Markup("<li>{}</li>").format(render_value(v, depth + 1)) for v in value[:MAX_ITEMS]
            )
        ) + _more(len(value))
    return _scalar(value)


# -- trajectories -------------------------------------------------------------------------


def find_trajectory(*sources: Mapping[str, Any]) -> tuple[str, list[Mapping[str, Any]]] | None:
    """The first list of messages under a trajectory-like key of the record or details."""
    for source in sources:
        for key in TRAJECTORY_KEYS:
            value = source.get(key)
            if is_trajectory(value):
                return key, value
    return None


def _content(content: Any) -> Markup:
    if isinstance(content, str):
        return Markup('<pre class="msg">{}</pre>').format(content)
    if isinstance(content, list):  # parts: [{"type": "text", "text": ...}, ...]
        parts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(Markup('<pre class="msg">{}</pre>').format(part["text"]))
            else:
                parts.append(render_value(part, 1))
        return Markup("").join(parts)
    return render_value(content, 1) if content is not None else Markup("")


def _tool_call(call: Any) -> Markup:
    if not isinstance(call, Mapping):
        return render_value(call, 1)
    fn = call.get("function") if isinstance(call.get("function"), Mapping) else call
    name = fn.get("name", "?")
    args = fn.get("arguments", fn.get("input", ""))
    if isinstance(args, str):
        with contextlib.suppress(ValueError):
            args = json.dumps(json.loads(args), indent=2)
    else:
        args = json.dumps(args, indent=2)
    return Markup('<div class="toolcall"><span class="tool">{}</span><pre>{}</pre></div>').format(
        name, args
    )


def trajectory(messages: list[Mapping[str, Any]]) -> Markup:
    """Prompts, responses and tool calls, one block per message."""
    blocks = []
    for i, msg in enumerate(messages[:MAX_ITEMS]):
        role = str(msg.get("role", "?"))
        calls = msg.get("tool_calls") or []
        extra = msg.get("name") or msg.get("tool_call_id") or ""
        blocks.append(
            Markup(
                '<div class="message role-{}"><div class="who">{} <span class="muted">#{} {}'
                "</span></div>{}{}</div>"
            ).format(
                re.sub(r"[^a-z]", "", role.lower())[:20] or "other",
                role,
                i,
                extra,
                _content(msg.get("content")),
                Markup("").join(_tool_call(c) for c in calls if calls),
            )
        )
    return Markup('<div class="trajectory">{}</div>').format(Markup("").join(blocks)) + _more(
        len(messages)
    )
