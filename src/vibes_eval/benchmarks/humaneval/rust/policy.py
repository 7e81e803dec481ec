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

from vibes_eval.benchmarks.common.rules import RuleSet, Violation
from vibes_eval.benchmarks.humaneval.rust.rustsrc import lex_completion


def _group(module: str) -> str:
    # `use std::{fs, ...}` and `use std::{io::Write, fs::File}` name the module inside braces
    return rf"\bstd\s*::\s*\{{[^}}]*\b{module}\b"


RULES: list[tuple[str, str, str]] = [
    # (category, readable rule, regex)
    ("filesystem", "std::fs", r"\bstd\s*::\s*fs\b|\bfs\s*::|" + _group("fs")),
    ("filesystem", "File/OpenOptions", r"\b(File|OpenOptions|DirBuilder)\s*::"),
    ("filesystem", "include_str!/include_bytes!/include!", r"\binclude(_str|_bytes)?\s*!"),
    ("environment", "env!/option_env!", r"\b(option_)?env\s*!"),
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
    # `use std as s; use s::fs as q`: an alias of a root crate (or of a module through
    # `self as`) spells no path the rules above can read (red team A6)
    ("unsafe", "alias of std/core/alloc", r"\b(std|core|alloc)\s+as\b|\buse\b[^;]*\bself\s+as\b"),
    # Redefining the assertion macros would make every test pass without testing anything.
    (
        "test tampering",
        "redefines an assertion macro",
        r"\bmacro_rules\s*!\s*(assert\w*|debug_assert\w*|panic|unreachable|todo)\b",
    ),
]
RULE_SET = RuleSet.of(RULES)

# A macro the completion defines can call a macro it is handed by name, as a plain
# identifier (`macro_rules! g { ($m:ident) => { $m!("main.rs") } }` with `g!(include_str)`
# embeds the program's own source, tests included). So once a completion defines a macro,
# the names of the compile-time file, environment and assembly macros are refused wherever
# they appear as words; without one, such a name is only an identifier (`let include = 1;`).
# A courtesy: what the verdict rests on is the harness, not this filter.
NAMED_IN_A_MACRO = RuleSet.of(
    [
        ("filesystem", "include_str/include_bytes/include named in a macro",
         r"\binclude(_str|_bytes)?\b"),
        ("unsafe", "asm/global_asm named in a macro", r"\b(global_|naked_)?asm\b"),
        # `std::env::args()` and `use std::env;` name the module, not the macro
        ("environment", "env/option_env named in a macro",
         r"\boption_env\b|(?<!::)(?<!:: )\benv\b(?!\s*::)"),
    ]
)  # fmt: skip
_DEFINES_MACRO = re.compile(r"\bmacro_rules\b")


def check(completion: str, bare: str | None = None, clean: bool = True) -> Violation | None:
    """The first rule the completion breaks, or None. ``bare``: the completion with
    comments and literals blanked, as read in its program (``scan.Scan``); without it the
    completion is read alone, as the body of a function. ``clean``: whether that reading
    is certain; when not, the raw text is checked too."""
    if bare is None:
        lexed, start = lex_completion(completion)
        bare, clean = lexed.bare(start), lexed.clean
    texts = [bare] if clean else [bare, completion]
    # The earliest line wins; on one line, the reading before the raw text, then rule order.
    hits = [v for code in texts for v in _hits(code)]
    return min(hits, key=lambda v: v.line, default=None)


def _hits(code: str) -> list[Violation]:
    hits = RULE_SET.all(code)
    if _DEFINES_MACRO.search(code):
        hits += NAMED_IN_A_MACRO.all(code)
    return hits
