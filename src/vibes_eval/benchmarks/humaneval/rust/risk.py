"""Static looks at a completion that decide whether a batch may take it. A sample with any
risk is evaluated alone: compiled and run exactly as ``--no-batch`` does.

- compile risk: its code means something else as a module of a batch crate, or reaches
  the other modules (crate-wide impls, symbols, allocators, code before or after main,
  macros that can expand to any of those), or it cannot be read with certainty (a parse
  tree-sitter cannot make, huge identifiers).
- runtime risk: it could reach process-wide state (env, cwd, exit, threads, hooks, I/O,
  unsafe) and so change what the other samples of a shared test process report.

Every rule runs on the real lexer's reading (``scan.Scan``): comments and the insides of
literals are blanked, attributes and impls are read from the syntax tree.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from vibes_eval.benchmarks.humaneval.rust.rustsrc import words
from vibes_eval.benchmarks.humaneval.rust.scan import Scan

_COMPILE_RISKY = re.compile(
    r"\bcrate\s*::|\bsuper\s*::|#\s*!\s*\[|"
    r"\bmod\s+\w+\s*;|\b(module_path|file|include|include_str|include_bytes|env|option_env|"
    r"asm|global_asm|naked_asm)\s*!|"
    r"\btype_name(_of_val)?\b|\bLocation\b|\bextern\b|\bmacro_rules\b|\$"
)
# Any of these in an attribute (`#[..]`, `#[unsafe(..)]`, `#[cfg_attr(.., ..)]`): symbols,
# link sections (code before or after main), allocators, paths, the sample's own tests.
_RISKY_ATTRIBUTES = words(
    "no_mangle export_name link_section link link_name link_ordinal used global_allocator "
    "naked path macro_export macro_use test bench test_runner panic_handler "
    "alloc_error_handler lang start main no_main no_std no_core feature recursion_limit "
    "type_length_limit instruction_set target_feature ffi_pure ffi_const thread_local "
    "proc_macro proc_macro_derive proc_macro_attribute register_tool"
)
# Anything that can reach process-wide state. Statics, leaks and panics are not here: statics
# are per module, and a leak or abort ends the shared process, whose unfinished samples are
# then run alone anyway.
_RUNTIME_RISKY = re.compile(
    r"\b(env|process|thread|fs|net|os|io|panic|alloc|ptr|intrinsics|arch)\s*::|"
    r"\buse\s+std\s*::\s*\{[^}]*\b(env|process|thread|fs|net|os|io|panic|alloc|ptr)\b|"
    r"\b(exit|abort|set_hook|take_hook|update_hook|unsafe|extern|asm|global_asm|libc|stdout|"
    r"stderr|stdin|Command|File|OpenOptions|TcpStream|TcpListener|UdpSocket|UnixStream|"
    r"set_current_dir|set_var|remove_var|spawn|scope|thread_local|set_output_capture)\b"
)
MAX_IDENTIFIER = 256  # characters: longer names make test paths no argv can hold


def compile_risk(scan: Scan) -> str | None:
    """Why ``scan``'s completion must be compiled apart from other samples, or None."""
    if not scan.clean:
        return f"not read with certainty ({scan.problems[0]})"
    if scan.tampering:
        return scan.tampering
    if m := _COMPILE_RISKY.search(scan.bare):
        return f"`{m.group().strip()}`"
    tokens = scan.tokens()
    if long := next((t for t in tokens if len(t.text) > MAX_IDENTIFIER and t.code), None):
        return f"a token of {len(long.text)} characters"
    return _risky_attribute(scan) or _reaching_impl(scan)


def runtime_risk(scan: Scan) -> str | None:
    """Why ``scan``'s tests must not share a process with other samples', or None."""
    m = _RUNTIME_RISKY.search(scan.bare)
    return f"`{m.group().strip()}`" if m else None


def risk(scan: Scan) -> str | None:
    """Why the sample must be evaluated alone (compiled and run apart), or None."""
    return compile_risk(scan) or runtime_risk(scan)


def _nodes(scan: Scan, types: frozenset[str]) -> list[Node]:
    """Nodes of ``types`` that start in the completion (inside function bodies too)."""
    found = []
    stack = [scan.lexed.root]
    while stack:
        node = stack.pop()
        if scan.lexed.char(node.end_byte) <= scan.start:
            continue
        if scan.lexed.char(node.start_byte) >= scan.end:
            continue
        if node.type in types and scan.lexed.char(node.start_byte) >= scan.start:
            found.append(node)
        stack.extend(node.children)
    return found


def _risky_attribute(scan: Scan) -> str | None:
    for attr in _nodes(scan, frozenset({"attribute_item", "inner_attribute_item"})):
        start, end = scan.lexed.char(attr.start_byte), scan.lexed.char(attr.end_byte)
        for tok in scan.lexed.code_tokens(start, end):
            if tok.text.removeprefix("r#") in _RISKY_ATTRIBUTES or tok.text == "$":
                return f"the attribute `{scan.lexed.source[start:end][:60]}`"
    return None


def _local_types(scan: Scan) -> tuple[set[str], set[str]]:
    """(types, traits) the completion defines, anywhere in it."""
    kinds = frozenset({"struct_item", "enum_item", "union_item", "type_item", "trait_item"})
    types, traits = set(), set()
    for item in _nodes(scan, kinds):
        name = item.child_by_field_name("name")
        if name is not None:
            (traits if item.type == "trait_item" else types).add(_text(name))
    return types, traits


def _reaching_impl(scan: Scan) -> str | None:
    """An impl that can change type inference in other modules of the crate: one of a
    trait the completion does not define, for a type that is not the completion's own
    plain type, or with type arguments that are not its own types (`From<i32> for Local`
    gives `i32: Into<?>` a second candidate everywhere)."""
    impls = _nodes(scan, frozenset({"impl_item"}))
    if not impls:
        return None
    types, traits = _local_types(scan)
    for impl in impls:
        trait = impl.child_by_field_name("trait")
        if trait is None:
            continue  # inherent: only for a type of its own
        base = trait.child_by_field_name("type") if trait.type == "generic_type" else trait
        if base is not None and _text(base) in traits:
            continue
        self_type = impl.child_by_field_name("type")
        contained = self_type is not None and _plain(self_type, types)
        args = trait.child_by_field_name("type_arguments")
        if args is not None:
            contained = contained and all(
                _plain(a, types) for a in args.named_children if a.type != "lifetime"
            )
        if not contained:
            text = scan.lexed.source[
                scan.lexed.char(impl.start_byte) : scan.lexed.char(impl.end_byte)
            ]
            return f"`{text.split('{')[0].strip()[:80]}` reaches other modules"
    return None


def _plain(node: Node, types: set[str]) -> bool:
    """``node`` is one of ``types``, maybe with generic arguments."""
    if node.type == "generic_type":
        node = node.child_by_field_name("type") or node
    return node.type == "type_identifier" and _text(node) in types


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")
