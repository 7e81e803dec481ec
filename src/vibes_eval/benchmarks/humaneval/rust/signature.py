"""The signatures of the functions a candidate serves, read from trusted source (a task's
header or reference solution) by tree-sitter: the types as written, whether the wire
(``wire.rs``) can carry them, and the same types with every lifetime made `'static`
(borrowed values cross the wire as owned ones that live as long as the process).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from vibes_eval.benchmarks.humaneval.rust.rustsrc import Lexed, words

PRIMITIVES = words("i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char")
# Containers the wire carries, by their last path segment, with their number of type
# arguments.
CONTAINERS = {
    "Vec": 1, "VecDeque": 1, "Option": 1, "Box": 1, "HashSet": 1, "BTreeSet": 1,
    "HashMap": 2, "BTreeMap": 2,
}  # fmt: skip
MAX_TUPLE = 6  # the wire's tuple impls


def text(lexed: Lexed, node: Node) -> str:
    return lexed.source[lexed.char(node.start_byte) : lexed.char(node.end_byte)]


@dataclass(frozen=True)
class Signature:
    """A served function: its name and types as written, and the same types with
    `'static` lifetimes (for the stub's and the server's own bindings)."""

    name: str
    visibility: str  # "pub " or ""
    generics: str  # lifetime parameters as written (`<'a>`), or ""
    params: tuple[str, ...]
    params_static: tuple[str, ...]
    ret: str | None
    ret_static: str | None
    enums: tuple[str, ...]  # the task's own enum types its result holds, as written

    @classmethod
    def of(cls, lexed: Lexed, fn: Node, enums: frozenset[str]) -> Signature | str:
        """The signature of ``fn`` (a function_item), or why the wire cannot carry it.
        ``enums``: the names of the task's own enums a result may hold."""
        why = _unsupported_shape(lexed, fn)
        if why:
            return why
        params, statics = [], []
        for p in _params(fn):
            typ = p.child_by_field_name("type")
            assert typ is not None
            if reason := carried(lexed, typ, frozenset()):
                return f"parameter type `{text(lexed, typ)}`: {reason}"
            params.append(text(lexed, typ))
            statics.append(static(lexed, typ))
        ret = fn.child_by_field_name("return_type")
        if ret is not None and (reason := carried(lexed, ret, enums)):
            return f"return type `{text(lexed, ret)}`: {reason}"
        vis = next((c for c in fn.children if c.type == "visibility_modifier"), None)
        type_params = fn.child_by_field_name("type_parameters")
        name = fn.child_by_field_name("name")
        assert name is not None
        return cls(
            name=text(lexed, name),
            visibility=text(lexed, vis) + " " if vis is not None else "",
            generics=text(lexed, type_params) if type_params is not None else "",
            params=tuple(params),
            params_static=tuple(statics),
            ret=text(lexed, ret) if ret is not None else None,
            ret_static=static(lexed, ret) if ret is not None else None,
            enums=tuple(_enum_types(lexed, ret, enums)) if ret is not None else (),
        )


def _params(fn: Node) -> list[Node]:
    params = fn.child_by_field_name("parameters")
    return [c for c in params.named_children if c.type == "parameter"] if params else []


def _unsupported_shape(lexed: Lexed, fn: Node) -> str | None:
    """Why ``fn`` is no plain free function of owned or shared arguments, if it is not."""
    if any(c.type in ("function_modifiers", "where_clause") for c in fn.children):
        return "a qualified function (async, const, unsafe, extern) or a where clause"
    type_params = fn.child_by_field_name("type_parameters")
    if type_params is not None and any(
        c.type != "lifetime_parameter" for c in type_params.named_children
    ):
        return "a generic function"
    params = fn.child_by_field_name("parameters")
    if params is not None and any(
        c.type not in ("parameter", "line_comment", "block_comment") for c in params.named_children
    ):
        return "a parameter the wire cannot carry (self, variadic, attributed)"
    vis = next((c for c in fn.children if c.type == "visibility_modifier"), None)
    if vis is not None and text(lexed, vis) not in ("pub", "pub(crate)"):
        return f"visibility `{text(lexed, vis)}`"
    return None


def _last_segment(lexed: Lexed, node: Node) -> str:
    if node.type == "scoped_type_identifier":
        name = node.child_by_field_name("name")
        return text(lexed, name) if name is not None else ""
    return text(lexed, node)


def _type_args(node: Node) -> list[Node]:
    args = node.child_by_field_name("type_arguments")
    if args is None:
        return []
    return [a for a in args.named_children if a.type not in ("lifetime", "line_comment")]


def carried(lexed: Lexed, node: Node, enums: frozenset[str]) -> str | None:
    """Why the wire cannot carry a value of the type ``node``, or None when it can."""
    kind = node.type
    if kind == "primitive_type":
        return None if text(lexed, node) in PRIMITIVES else "not an owned primitive"
    if kind == "unit_type":
        return None
    if kind in ("type_identifier", "scoped_type_identifier"):
        name = _last_segment(lexed, node)
        return None if name == "String" or name in enums else f"the type `{name}`"
    if kind == "generic_type":
        return _generic(lexed, node, enums)
    if kind == "reference_type":
        return _reference(lexed, node, enums)
    if kind == "tuple_type":
        items = node.named_children
        if len(items) > MAX_TUPLE:
            return f"a tuple of more than {MAX_TUPLE}"
        return next((r for t in items if (r := carried(lexed, t, enums))), None)
    if kind == "array_type" and node.child_by_field_name("length") is not None:
        element = node.child_by_field_name("element")
        return carried(lexed, element, enums) if element is not None else "an array"
    return f"a {kind.replace('_', ' ')}"


def _generic(lexed: Lexed, node: Node, enums: frozenset[str]) -> str | None:
    base = node.child_by_field_name("type")
    name = _last_segment(lexed, base) if base is not None else ""
    args = _type_args(node)
    if name in enums:
        return next((r for a in args if (r := carried(lexed, a, frozenset()))), None)
    if CONTAINERS.get(name) != len(args):
        return f"the type `{name}`"
    if name == "Box" and args[0].type == "dynamic_type":
        return _dyn_any(lexed, args[0])
    return next((r for a in args if (r := carried(lexed, a, enums))), None)


def _reference(lexed: Lexed, node: Node, enums: frozenset[str]) -> str | None:
    if any(c.type == "mutable_specifier" for c in node.children):
        return "a mutable reference (the caller would not see the change)"
    inner = node.child_by_field_name("type")
    if inner is None:
        return "a reference"
    if inner.type == "primitive_type" and text(lexed, inner) == "str":
        return None
    if inner.type == "dynamic_type":
        return _dyn_any(lexed, inner)
    if inner.type == "array_type" and inner.child_by_field_name("length") is None:
        element = inner.child_by_field_name("element")
        return carried(lexed, element, frozenset()) if element is not None else "a slice"
    return carried(lexed, inner, frozenset())


def _dyn_any(lexed: Lexed, node: Node) -> str | None:
    trait = node.child_by_field_name("trait")
    if trait is not None and _last_segment(lexed, trait) == "Any":
        return None
    return f"`{text(lexed, node)}` (only `dyn Any` is carried)"


def static(lexed: Lexed, node: Node) -> str:
    """The type ``node`` with every lifetime `'static`, elided ones too."""
    start = lexed.char(node.start_byte)
    edits: list[tuple[int, int, str]] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "lifetime":
            edits.append((lexed.char(n.start_byte), lexed.char(n.end_byte), "'static"))
            continue
        if n.type == "reference_type" and not any(c.type == "lifetime" for c in n.children):
            amp = n.children[0]
            edits.append((lexed.char(amp.end_byte), lexed.char(amp.end_byte), "'static "))
        stack.extend(n.children)
    out, pos = [], start
    for s, e, new in sorted(edits):
        out += [lexed.source[pos:s], new]
        pos = e
    out.append(lexed.source[pos : lexed.char(node.end_byte)])
    return "".join(out)


def _enum_types(lexed: Lexed, node: Node, enums: frozenset[str]) -> list[str]:
    """The task-enum types inside ``node`` as written (each once)."""
    found: list[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        base = n.child_by_field_name("type") if n.type == "generic_type" else n
        named = base is not None and base.type in ("type_identifier", "scoped_type_identifier")
        if named and _last_segment(lexed, base) in enums:
            if text(lexed, n) not in found:
                found.append(text(lexed, n))
            continue
        stack.extend(n.children)
    return found
