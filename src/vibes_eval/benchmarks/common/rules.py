"""The one policy rules engine: named regular expressions over code whose comments and
literal contents a lexer has blanked, each hit a ``Violation`` with its line.

The rules are a fast courtesy that turns obvious misuse away before anything is built;
they are never what a verdict rests on (the harness keeps every verdict out of the
sample's reach whether they run or not)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Violation:
    """One rule a sample broke: ``category`` groups rules (filesystem, process, early
    exit...), ``rule`` is the readable name, ``line`` is 1-based within the sample (0 when
    it is not tied to a line), ``detail`` says more where there is more to say."""

    category: str
    rule: str
    line: int = 0
    detail: str = ""

    def __str__(self) -> str:
        where = f" (completion line {self.line})" if self.line else ""
        more = f": {self.detail}" if self.detail else ""
        return f"{self.category}: {self.rule}{more}{where}"

    def text(self) -> str:
        """``rule: detail`` (the kernels' ``anti_cheat: <rule>: <detail>`` form)."""
        return f"{self.rule}: {self.detail}" if self.detail else self.rule


@dataclass(frozen=True)
class Rule:
    category: str
    rule: str
    pattern: re.Pattern[str]

    @classmethod
    def of(cls, category: str, rule: str, regex: str, flags: int = 0) -> Rule:
        return cls(category, rule, re.compile(regex, flags))


class RuleSet:
    """Rules checked in order; the first hit (by rule order, then position) is reported."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.rules = list(rules)

    @classmethod
    def of(cls, table: Iterable[tuple[str, str, str]], flags: int = 0) -> RuleSet:
        """From ``(category, rule, regex)`` rows."""
        return cls(Rule.of(c, r, rx, flags) for c, r, rx in table)

    def first(self, code: str) -> Violation | None:
        for rule in self.rules:
            hit = rule.pattern.search(code)
            if hit is not None:
                return Violation(rule.category, rule.rule, line_of(code, hit.start()))
        return None

    def all(self, code: str) -> list[Violation]:
        found = []
        for rule in self.rules:
            for hit in rule.pattern.finditer(code):
                found.append(Violation(rule.category, rule.rule, line_of(code, hit.start())))
        return found


def line_of(text: str, offset: int) -> int:
    """The 1-based line holding ``offset``."""
    return text.count("\n", 0, offset) + 1
