"""Static looks at a completion that decide how a batch may treat it.

- compile-risky: means something else inside a module of a batch crate; evaluated alone.
- runtime-risky: could reach process-wide state; its tests run in a process of their own.
- head-checkable: whether its code compiles cannot depend on the task's test block, so the
  batch's cheap check may compile it without the tests.

Every pattern runs on code with comments and literals blanked out (``rustsrc``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vibes_eval.benchmarks.humaneval.rustsrc import strip_comments_and_strings

_COMPILE_RISKY = re.compile(
    r"\bcrate\s*::|\bsuper\s*::|#\s*!\s*\[|"
    r"#\s*\[\s*(macro_export|no_mangle|export_name|path|link|link_section|link_name|used)\b|"
    r"\bmod\s+\w+\s*;|\b(module_path|file|include|include_str|include_bytes)\s*!|"
    r"\btype_name(_of_val)?\b|\bLocation\b|\bextern\b"
)
# Anything that can reach process-wide state. Statics, leaks and panics are not here: statics
# are per module, and a leak or abort ends the shared process, whose unfinished samples are
# then run alone anyway.
_RUNTIME_RISKY = re.compile(
    r"\b(env|process|thread|fs|net|os|io|panic|alloc|ptr|intrinsics|arch)\s*::|"
    r"\buse\s+std\s*::\s*\{[^}]*\b(env|process|thread|fs|net|os|io|panic|alloc|ptr)\b|"
    r"\b(exit|abort|set_hook|take_hook|unsafe|extern|asm|global_asm|libc|stdout|stderr|stdin|"
    r"Command|File|OpenOptions|TcpStream|TcpListener|UdpSocket|UnixStream|set_current_dir|"
    r"set_var|remove_var|spawn|scope)\b"
)
# Items a test block could define that code outside it might use (impls apply crate-wide).
_TEST_BLOCK_EXPORTS = re.compile(
    r"\b(impl|trait|struct|enum|union|type|const|static|macro_rules|extern|pub)\b|#\s*\["
    r"\s*macro_export"
)
_USE = re.compile(r"\buse\b")
_ITEM = re.compile(r"\b(?:fn|mod)\s+([A-Za-z_]\w*)")  # nameable from outside the block
_LOCAL = re.compile(r"\blet\s+(?:mut\s+)?([A-Za-z_]\w*)")
_CALLED = re.compile(r"(?<![\w.:!\[])\b([a-z_]\w*)\s*\(")  # not methods, paths, attributes
_FN = re.compile(r"\bfn\s+([A-Za-z_]\w*)")
_WORD = re.compile(r"[A-Za-z_]\w*")
# not function calls (and `drop`, the prelude function)
_KEYWORDS = frozenset(
    re.findall(
        r"\w+",
        "as break const continue else enum extern false fn for if impl in let loop match mod "
        "move mut pub ref return self static struct super trait true type unsafe use where "
        "while async await dyn drop",
    )
)


def _top_level_use(code: str) -> bool:
    """A `use` outside any block imports into the crate root, where the completion is."""
    for m in _USE.finditer(code):
        before = code[: m.start()]
        if before.count("{") == before.count("}"):
            return True
    return False


def compile_risky(code: str, *, stripped: bool = False) -> bool:
    code = code if stripped else strip_comments_and_strings(code)
    return _COMPILE_RISKY.search(code) is not None


def runtime_risky(code: str, *, stripped: bool = False) -> bool:
    code = code if stripped else strip_comments_and_strings(code)
    return _RUNTIME_RISKY.search(code) is not None


@dataclass(frozen=True)
class TaskFacts:
    """What a task's test block defines and calls, and the functions its header defines."""

    self_contained: bool  # defines nothing code outside it could use
    defines: frozenset[str]  # its modules and functions
    calls: frozenset[str]  # free functions it calls that it does not define itself
    header_fns: frozenset[str]

    @classmethod
    def of(cls, test_block: str, header: str) -> TaskFacts:
        code = strip_comments_and_strings(test_block)
        items = frozenset(_ITEM.findall(code))
        calls = frozenset(_CALLED.findall(code)) - items - set(_LOCAL.findall(code)) - _KEYWORDS
        return cls(
            self_contained=_TEST_BLOCK_EXPORTS.search(code) is None and not _top_level_use(code),
            defines=items,
            calls=calls,
            header_fns=frozenset(_FN.findall(strip_comments_and_strings(header))),
        )

    def head_checkable(self, completion: str, stripped_completion: str) -> bool:
        """Whether to check the code before the test block without it. Exact when the block
        exports nothing, the completion names nothing the block defines and ends an item:
        then that code has the same errors either way, and they come first in the file.
        Worth it only when every function the tests call is defined: else the tests fail to
        compile, which only the whole program shows (and then costs a second build)."""
        if not self.self_contained:
            return False
        # It must end an item: what precedes the end of the file can be an error there and
        # not before more items (a doc comment or attribute documents the test module).
        end = len(completion.rstrip())
        if end == 0 or end != len(stripped_completion.rstrip()) or completion[end - 1] not in "};":
            return False
        words = set(_WORD.findall(stripped_completion))
        if words & self.defines:
            return False
        fns = self.header_fns | set(_FN.findall(stripped_completion))
        return self.calls <= fns
