"""What the solution's object may hold besides the calls it makes (``symbols``): no code
that runs before or after ``main`` (initializer and finalizer sections, however they were
made), and no global symbol the rest of the program could bind to except the task's entry
points (a definition the harness or the reference also has, even a weak one, could take
theirs over at link time).

The functions here read the text of ``readelf -SW``, ``readelf -rW``, ``objdump -t`` and
``nm -g``; the run gathers it (``run.Pipeline``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from vibes_eval.benchmarks.common.rules import Violation
from vibes_eval.benchmarks.kernels.checks import cheat

INIT_SECTIONS = (".init_array", ".fini_array", ".preinit_array", ".ctors", ".dtors")
INIT_TYPES = frozenset({"INIT_ARRAY", "FINI_ARRAY", "PREINIT_ARRAY"})
# nvcc registers every CUDA object's kernels from one `.init_array` entry of its own.
CUDA_REGISTRATION = re.compile(r"^_ZL\d+__sti____cudaRegisterAll\w*$")
STRONG = frozenset("TDBRGSCi")  # nm's letters for strong definitions (u: unique, W/V: weak)
SAME_EVERYWHERE = re.compile(r"^DW\.ref\.")  # the personality pointer every C++ object has

_SECTION = re.compile(r"^\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)")
_RELOC_HEAD = re.compile(r"^Relocation section '\.rela?(\S+)'")
_RELOC = re.compile(r"^[0-9a-f]+\s+[0-9a-f]+\s+\S+\s+[0-9a-f]+\s+(\S+)\s*([+-]\s*[0-9a-f]+)?")
_FUNC = re.compile(r"^([0-9a-f]+)\s.{6}F\s+(\S+)\s+[0-9a-f]+\s+(\S+)$")


def sections(readelf_sections: str) -> dict[str, tuple[str, int]]:
    """Section name -> (type, size) from ``readelf -SW``."""
    out = {}
    for line in readelf_sections.splitlines():
        m = _SECTION.match(line)
        if m:
            out[m.group(1)] = (m.group(2), int(m.group(3), 16))
    return out


def init_targets(readelf_relocs: str, symtab: str, section: str = ".init_array") -> list[str]:
    """The functions ``section``'s entries point at (``section+addend`` resolved through
    ``objdump -t``; an entry that resolves to no function stays as it was written)."""
    funcs = {}
    for line in symtab.splitlines():
        m = _FUNC.match(line.strip())
        if m:
            funcs[(m.group(2), int(m.group(1), 16))] = m.group(3)
    targets, current = [], ""
    for line in readelf_relocs.splitlines():
        head = _RELOC_HEAD.match(line)
        if head:
            current = head.group(1)
            continue
        m = _RELOC.match(line.strip())
        if current == section and m:
            addend = int(m.group(2).replace(" ", ""), 16) if m.group(2) else 0
            targets.append(funcs.get((m.group(1), addend), f"{m.group(1)}+{addend}"))
    return targets


def init_violations(
    readelf_sections: str, readelf_relocs: str, symtab: str, *, cuda: bool
) -> list[Violation]:
    """Any initializer or finalizer section; for CUDA, nvcc's own registration entry alone
    is accepted."""
    table = sections(readelf_sections)
    found = sorted(
        name for name, (kind, _) in table.items()
        if name.startswith(INIT_SECTIONS) or kind in INIT_TYPES
    )  # fmt: skip
    if not found:
        return []
    if cuda and found == [".init_array"]:
        targets = init_targets(readelf_relocs, symtab)
        entries = table[".init_array"][1] // 8
        if targets and len(targets) == entries and all(map(CUDA_REGISTRATION.match, targets)):
            return []
    return [cheat("init_section", "code that runs before or after main: " + ", ".join(found))]


def link_violations(
    solution: Iterable[tuple[str, str]], others: Iterable[tuple[str, str]], *, strict: bool
) -> list[Violation]:
    """The solution's defined globals against the program's other objects (``nm -g``
    pairs, defined and undefined). Refused: a symbol another object also defines (weak
    ones included: which copy the linker keeps is not the harness's choice) and, when
    ``strict``, a strong global no other object asks for (only entry points are needed)."""
    others = list(others)
    defined = {n for t, n in others if t not in "Uvw"}
    wanted = {n for t, n in others if t in "Uvw"}
    mine = [(t, n) for t, n in solution if t not in "Uvw" and not SAME_EVERYWHERE.match(n)]
    found = []
    taken = sorted({n for _, n in mine if n in defined})
    if taken:
        found.append(cheat("harness_symbol", "defines what the harness or the reference "
                           f"defines: {_names(taken)}"))  # fmt: skip
    extra = sorted({n for t, n in mine if strict and t in STRONG and n not in wanted | defined})
    if extra:
        found.append(cheat("global_symbol", f"defines globals beyond the entry point: "
                           f"{_names(extra)}"))  # fmt: skip
    return found


def _names(names: list[str]) -> str:
    return ", ".join(names[:6]) + (f" (+{len(names) - 6} more)" if len(names) > 6 else "")
