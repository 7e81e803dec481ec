"""What the solution's object may define besides the calls it makes (``symbols``): no
global symbol the rest of the program could bind to except the task's entry points (a
definition the harness or the reference also has, even a weak one, could take theirs over
at link time).

The functions here read the text of ``nm -g``; the run gathers it (``run.Pipeline``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from vibes_eval.benchmarks.common.rules import Violation
from vibes_eval.benchmarks.kernels.checks import cheat

STRONG = frozenset("TDBRGSCi")  # nm's letters for strong definitions (u: unique, W/V: weak)
SAME_EVERYWHERE = re.compile(r"^DW\.ref\.")  # the personality pointer every C++ object has


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
