"""Static policy filter: refuse completions that reach for the filesystem, processes, the
network or unsafe code before they are compiled.

Patterns are matched on the real lexer's reading of the program (``rustsrc``): comments
and the insides of literals are blanked, so a docstring that mentions `std::fs` passes and
code hidden after any literal form cannot sneak a call past it. Where that reading is not
clean (a parse error), the rules also run on the raw text: fail closed. This is a cheap
first line; the sandbox is what actually contains a sample.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vibes_eval.benchmarks.humaneval.rustsrc import lex_completion


@dataclass(frozen=True)
class Violation:
    category: str
    rule: str
    line: int  # 1-based, within the completion

    def __str__(self) -> str:
        return f"{self.category}: {self.rule} (completion line {self.line})"


def _group(module: str) -> str:
    # `use std::{fs, ...}` and `use std::{io::Write, fs::File}` name the module inside braces
    return rf"\bstd\s*::\s*\{{[^}}]*\b{module}\b"


RULES: list[tuple[str, str, str]] = [
    # (category, readable rule, regex)
    ("filesystem", "std::fs", r"\bstd\s*::\s*fs\b|\bfs\s*::|" + _group("fs")),
    ("filesystem", "File/OpenOptions", r"\b(File|OpenOptions|DirBuilder)\s*::"),
    ("filesystem", "include_str!/include_bytes!/include!", r"\binclude(_str|_bytes)?\s*!"),
    ("process", "std::process", r"\bstd\s*::\s*process\b|\bprocess\s*::|" + _group("process")),
    ("process", "Command", r"\bCommand\s*::\s*new\b"),
    ("network", "std::net", r"\bstd\s*::\s*net\b|\bnet\s*::|" + _group("net")),
    (
        "network",
        "sockets",
        r"\b(TcpStream|TcpListener|UdpSocket|UnixStream|UnixListener|UnixDatagram)\b",
    ),
    ("unsafe", "unsafe", r"\bunsafe\b"),
    ("unsafe", "extern", r"\bextern\s*(\"|\{|fn\b|crate\s+(?!(rand|regex|md5|std|core|alloc)\b))"),
    ("unsafe", "inline assembly", r"\b(global_)?asm\s*!"),
    ("unsafe", "linker attributes", r"#\s*\[\s*(no_mangle|export_name|link|link_section|used)\b"),
    ("unsafe", "crate attributes", r"#\s*!\s*\["),
    ("unsafe", "std::os / libc", r"\bstd\s*::\s*os\b|\blibc\s*::|" + _group("os")),
    ("environment", "environment mutation", r"\b(set_var|remove_var|set_current_dir)\b"),
    # `std::$m::exit` with `m!(process)`: a path no rule above can read
    ("unsafe", "path built by a macro", r"\$\s*\w+\s*::|::\s*\$"),
]
_COMPILED = [(cat, rule, re.compile(rx)) for cat, rule, rx in RULES]


def check(completion: str, bare: str | None = None, clean: bool = True) -> Violation | None:
    """The first rule the completion breaks, or None. ``bare``: the completion with
    comments and literals blanked, as read in its program (``scan.Scan``); without it the
    completion is read alone, as the body of a function. ``clean``: whether that reading
    is certain; when not, the raw text is checked too."""
    if bare is None:
        lexed, start = lex_completion(completion)
        bare, clean = lexed.bare(start), lexed.clean
    texts = [bare] if clean else [bare, completion]
    first: Violation | None = None
    for code in texts:
        for cat, rule, rx in _COMPILED:
            m = rx.search(code)
            if m and (first is None or code.count("\n", 0, m.start()) + 1 < first.line):
                first = Violation(cat, rule, code.count("\n", 0, m.start()) + 1)
    return first


# Redefining the assertion macros would make every test pass without testing anything.
RULES.append(
    (
        "test tampering",
        "redefines an assertion macro",
        r"\bmacro_rules\s*!\s*(assert\w*|debug_assert\w*|panic|unreachable|todo)\b",
    )
)
_COMPILED.append((RULES[-1][0], RULES[-1][1], re.compile(RULES[-1][2])))
