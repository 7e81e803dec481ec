"""What a completion does to the program it completes, read from tree-sitter's parse of
the whole program (exactly the text rustc compiles).

- ``TaskFacts``: per task, from its header and test block: the full paths of the tests it
  declares, the names its code resolves from the module the completion lives in
  (``protected``), and the tokens of the test block as it reads alone.
- ``Scan``: per sample: the completion's code with comments and literals blanked,
  whether the parse is clean, and ``tampering``: why the task's tests may not be what
  they are alone (the test block lexes or nests differently after the completion) or why
  they may call the completion's code where they mean the task's (the completion defines
  a name they resolve: a primitive or prelude type, the entry point, a macro they call).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from vibes_eval.benchmarks.humaneval.rust.rustsrc import Lexed, Token, words
from vibes_eval.benchmarks.humaneval.tasks import GUARD, STD_MACROS, RustProblem

PRIMITIVES = words(
    "bool char str i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f16 f32 f64 f128"
)
# The 2021 prelude, and the crates every program can name.
PRELUDE = words(
    "Copy Send Sized Sync Unpin Drop Fn FnMut FnOnce drop Box ToOwned Clone PartialEq "
    "PartialOrd Eq Ord AsRef AsMut Into From Default Iterator Extend IntoIterator "
    "DoubleEndedIterator ExactSizeIterator Option Some None Result Ok Err String ToString "
    "Vec TryFrom TryInto FromIterator std core alloc rand regex md5"
)
OPEN_BODY = "fn __vibes_open() {\n"  # stands for the entry point's open body (MultiPL-E)
_ITEM = re.compile(r"\b(?:fn|mod)\s+([A-Za-z_]\w*)")  # nameable from outside the block
_LOCAL = re.compile(r"\blet\s+(?:mut\s+)?([A-Za-z_]\w*)")
_CALLED = re.compile(r"(?<![\w.:!\[])\b([a-z_]\w*)\s*\(")  # not methods, paths, attributes
_FN = re.compile(r"\bfn\s+([A-Za-z_]\w*)")
# not function calls (and `drop`, the prelude function)
_KEYWORDS = words(
    "as break const continue else enum extern false fn for if impl in let loop match mod "
    "move mut pub ref return self static struct super trait true type unsafe use where "
    "while async await dyn drop"
)
_NAMED_ITEMS = frozenset(
    {
        "function_item", "function_signature_item", "struct_item", "enum_item", "union_item",
        "type_item", "trait_item", "mod_item", "const_item", "static_item", "macro_definition",
    }
)  # fmt: skip
_NAMES = frozenset({"identifier", "type_identifier", "primitive_type"})


@dataclass(frozen=True)
class TaskFacts:
    """What a task's header and test block define, call and resolve."""

    calls: frozenset[str]  # free functions it calls that it does not define itself
    header_fns: frozenset[str]
    declared: tuple[str, ...]  # full paths of its `#[test]` functions, from the crate root
    protected: frozenset[str]  # names its code resolves where the completion's items live
    tail: tuple[tuple[str, str], ...]  # GUARD + test block alone: (kind, text) per token
    tail_roots: tuple[int, ...]  # where its top-level items start, from the GUARD
    tail_clean: bool

    @classmethod
    def of(cls, task: RustProblem) -> TaskFacts:
        test_block = task.test_block
        # MultiPL-E's test block starts by closing the entry point's body (its GUARD comes
        # after that brace): opened again, it parses as items.
        lead = OPEN_BODY if task.format == "multipl-e" else GUARD
        tail = Lexed(lead + test_block)
        at = len(lead) if lead == OPEN_BODY else 0  # where the program's own tail starts
        # The header ends inside the entry point's body: closed, it parses as items.
        header = Lexed(task.header_text() + "\n}\n")
        code = tail.bare(len(lead))
        items = frozenset(_ITEM.findall(code))
        calls = frozenset(_CALLED.findall(code)) - items - set(_LOCAL.findall(code)) - _KEYWORDS
        header_fns = frozenset(_FN.findall(header.bare()))
        resolved = _resolved(tail) | _resolved(header)
        if _has_glob(header.root):  # what it brings in is unknown: keep every name
            protected = resolved - (calls - header_fns)
        else:
            # Names the task's code uses but neither defines nor imports (a helper, a type
            # of the signature) are the completion's to define.
            provided = _provided(header.root) | _provided(tail.root) | header_fns
            protected = resolved & (provided | PRIMITIVES | PRELUDE | STD_MACROS)
        return cls(
            calls=calls,
            header_fns=header_fns,
            declared=tuple(_declared_tests(tail.root, "")),
            protected=frozenset(protected),
            tail=tuple((t.kind, t.text) for t in tail.tokens if t.start >= at),
            tail_roots=tuple(
                r - at for c in tail.root.children if (r := tail.char(c.start_byte)) >= at
            ),
            tail_clean=tail.clean,
        )


def _declared_tests(node: Node, prefix: str) -> Iterator[str]:
    """Full paths of the `#[test]` functions among ``node``'s items and in its modules."""
    is_test = False
    for child in node.children:
        if child.type == "attribute_item":
            attr = child.named_children[0] if child.named_children else None
            is_test = is_test or (attr is not None and _text(attr) == "test")
        elif child.type in ("line_comment", "block_comment"):
            continue
        else:
            name = child.child_by_field_name("name")
            if child.type == "function_item" and is_test and name is not None:
                yield prefix + _text(name)
            elif child.type == "mod_item" and name is not None:
                body = child.child_by_field_name("body")
                if body is not None:
                    yield from _declared_tests(body, f"{prefix}{_text(name)}::")
            is_test = False


def _provided(root: Node) -> set[str]:
    """Names the items of a (trusted) source define or import at its top level and in its
    modules."""
    names: set[str] = set()
    stack = list(root.children)
    while stack:
        node = stack.pop()
        names.update(_defined_names(node))
        if node.type == "use_declaration":
            names.update(_imported(node.child_by_field_name("argument")))
        if node.type == "mod_item" and (body := node.child_by_field_name("body")):
            stack.extend(body.children)
    return names


def _imported(node: Node | None) -> set[str]:
    """The names a `use` tree imports under their own name."""
    if node is None:
        return set()
    if node.type in ("identifier", "self", "crate", "super"):
        return {_text(node)}
    if node.type == "scoped_identifier":
        name = node.child_by_field_name("name")
        if name is not None and name.type == "self":  # `cmp::{self}` imports `cmp`
            return _imported(node.child_by_field_name("path"))
        return _imported(name)
    if node.type == "scoped_use_list":
        path, items = node.child_by_field_name("path"), node.child_by_field_name("list")
        out = set().union(*(_imported(c) for c in items.named_children)) if items else set()
        if "self" in out and path is not None:
            out = (out - {"self"}) | _imported(path)
        return out
    if node.type == "use_list":
        return set().union(*(_imported(c) for c in node.named_children))
    return set()  # `as` aliases are in _defined_names; globs are unknown


def _has_glob(root: Node) -> bool:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "use_wildcard":
            return True
        stack.extend(node.children)
    return False


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _binders(root: Node) -> set[str]:
    """Names bound locally (let, parameters, closures, for, if/while let): they resolve to
    the binding, and a completion's item of that name turns the pattern into an error."""
    found: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        pattern = None
        if node.type in ("let_declaration", "parameter", "for_expression", "let_condition"):
            pattern = node.child_by_field_name("pattern")
        elif node.type == "closure_parameters":
            pattern = node
        if pattern is not None:
            found |= _pattern_names(pattern)
        stack.extend(node.children)
    return found


def _pattern_names(pattern: Node) -> set[str]:
    names: set[str] = set()
    stack = [pattern]
    while stack:
        node = stack.pop()
        if node.type in ("identifier", "shorthand_field_identifier"):
            parent = node.parent
            is_path = parent is not None and parent.type in (
                "tuple_struct_pattern", "struct_pattern", "scoped_identifier"
            ) and parent.child_by_field_name("type") == node  # fmt: skip
            if not is_path:
                names.add(_text(node))
        stack.extend(node.children)
    return names


def _resolved(lexed: Lexed) -> set[str]:
    """Names ``lexed`` resolves from its module: identifiers and types that start a path
    (not a path's later segments, fields or methods), less what it binds locally and what
    only attributes name (`test` in `#[test]` is no item a completion could replace)."""
    spans = [
        (lexed.char(n.start_byte), lexed.char(n.end_byte))
        for n in _descendants(lexed.root)
        if n.type in ("attribute_item", "inner_attribute_item")
    ]
    code = [t for t in lexed.tokens if t.code]
    names = {
        tok.text.removeprefix("r#")
        for n, tok in enumerate(code)
        if tok.kind in _NAMES
        and (n == 0 or code[n - 1].text not in ("::", "."))
        and not any(a <= tok.start < b for a, b in spans)
    }
    return names - _binders(lexed.root)


def _descendants(root: Node) -> Iterator[Node]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)


@dataclass(frozen=True)
class Scan:
    """One completion read in its program."""

    code: str
    lexed: Lexed  # the whole program
    start: int  # the completion's span in the program
    end: int
    bare: str  # the completion, comments and literals blanked
    problems: tuple[str, ...]  # why the parse cannot be trusted (empty: clean)
    tampering: str | None  # why the task's tests may not test the task's code

    @property
    def clean(self) -> bool:
        return not self.problems

    @classmethod
    def of(cls, task: RustProblem, facts: TaskFacts, code: str) -> Scan:
        head = task.header_text()
        program = task.program(code)
        lexed = Lexed(program)
        start, end = len(head), len(head) + len(code)
        scan = cls(code, lexed, start, end, lexed.bare(start, end), tuple(lexed.problems), None)
        why = scan._tests_changed(facts) or scan._shadows(facts)
        return scan if why is None else dataclasses.replace(scan, tampering=why)

    def tokens(self) -> list[Token]:
        """The completion's code tokens (no comments)."""
        return list(self.lexed.code_tokens(self.start, self.end))

    def module_items(self, nested: bool = True) -> Iterator[Node]:
        """The completion's items at module level (outside every function body), and with
        ``nested`` those of the modules it defines."""
        stack = [c for c in self.lexed.root.children if self._in_completion(c)]
        while stack:
            node = stack.pop()
            if node.type == "expression_statement" and node.named_children:
                node = node.named_children[0]  # tree-sitter's item-level macro call
            yield node
            if nested and node.type in ("mod_item", "foreign_mod_item"):
                body = node.child_by_field_name("body")
                if body is not None:
                    stack.extend(body.children)

    def _in_completion(self, node: Node) -> bool:
        return self.start <= self.lexed.char(node.start_byte) < self.end

    def _tests_changed(self, facts: TaskFacts) -> str | None:
        """Why the GUARD and the test block may not read as they do alone, if they may."""
        if not self.clean or not facts.tail_clean:
            return "the program cannot be parsed to check that the task's tests are intact"
        tail_at = self.end + 1  # after the completion's "\n"
        straddles = any(t.start < tail_at < t.end for t in self.lexed.tokens)
        tail = tuple((t.kind, t.text) for t in self.lexed.tokens if t.start >= tail_at)
        roots = {self.lexed.char(c.start_byte) - tail_at for c in self.lexed.root.children}
        if straddles or tail != facts.tail or not set(facts.tail_roots) <= roots:
            return "the completion changes how the task's tests read"
        return None

    def _shadows(self, facts: TaskFacts) -> str | None:
        """A name the header or the tests resolve that the completion brings into their
        module: an item, a `use ... as` alias, what it imports from its own items (a
        variant, an item of its modules), or an item a macro call of it may define."""
        for name in sorted(self.module_names()):
            if name in facts.protected:
                return f"the completion defines `{name}`, which the task's code uses"
        for item in self.module_items():
            if item.type != "macro_invocation":
                continue
            for tok in self.lexed.code_tokens(
                self.lexed.char(item.start_byte), self.lexed.char(item.end_byte)
            ):
                if tok.kind in _NAMES and tok.text in facts.protected:
                    return (
                        f"a macro call of the completion names `{tok.text}`, which the task's "
                        "code uses"
                    )
        return None

    def module_names(self) -> set[str]:
        """The names the completion brings into the module the task's code lives in."""
        top = list(self.module_items(nested=False))
        names: set[str] = set()
        for item in top:
            names.update(_defined_names(item))
        local = names | {"self", "crate", "super"}
        inner: set[str] = set()  # variants, and items of the completion's modules
        for item in self.module_items():
            if item.type == "macro_definition":  # textual scope: `#[macro_use] mod m {..}`
                names.update(_defined_names(item))
            elif item not in top:
                inner.update(_defined_names(item))
            inner.update(_variants(item))
        for item in top:
            if item.type == "use_declaration" and _use_head(item) in local:
                if _has_glob(item):
                    names |= inner
                names |= _imported(item.child_by_field_name("argument"))
        return names


def _defined_names(item: Node) -> Iterator[str]:
    """The names an item brings into its module (variants and `use ... as` too)."""
    if item.type in _NAMED_ITEMS:
        name = item.child_by_field_name("name")
        if name is not None:
            yield _text(name).removeprefix("r#")
    if item.type in ("use_declaration", "extern_crate_declaration"):
        stack = [item]
        while stack:
            node = stack.pop()
            alias = node.child_by_field_name("alias")
            if alias is not None:
                yield _text(alias).removeprefix("r#")
            stack.extend(node.named_children)


def _variants(item: Node) -> Iterator[str]:
    if item.type == "enum_item" and (body := item.child_by_field_name("body")) is not None:
        for variant in body.named_children:
            if variant.type == "enum_variant" and (v := variant.child_by_field_name("name")):
                yield _text(v).removeprefix("r#")


def _use_head(use: Node) -> str:
    """The first segment of a `use` path."""
    node = use.child_by_field_name("argument")
    while node is not None and node.named_children:
        first = node.child_by_field_name("path") or node.named_children[0]
        if first == node:
            break
        node = first
    return _text(node).removeprefix("::") if node is not None else ""
