"""What a kernel solution may not do: static rules on its source (``source``) and the
policy on what its object uses and defines (``symbols``)."""

from __future__ import annotations

from vibes_eval.benchmarks.common.rules import Violation

ANTI_CHEAT = "anti_cheat"  # every kernel violation's category: `anti_cheat: <rule>: <detail>`


def cheat(rule: str, detail: str, line: int = 0) -> Violation:
    """A violation of the anti-cheat rule ``rule``."""
    return Violation(ANTI_CHEAT, rule, line, detail)
