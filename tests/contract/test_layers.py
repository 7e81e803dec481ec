"""The layering the benchmark contract rests on, read from the source (every import, the
lazy ones inside functions too): benchmarks never reach into generation or the front
ends, the spine never reaches into a benchmark (but for the built-in registry table), and
the packages import each other without cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import vibes_eval

SRC = Path(vibes_eval.__file__).parent
SPINE = ("core", "store", "web", "generation", "scaleout", "runs", "progress")
FRONT_ENDS = ("generation", "cli", "web", "api", "evaluation", "scaleout")


def _package(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            if node.module == "vibes_eval":  # `from vibes_eval import api`
                found.update(f"vibes_eval.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m == "vibes_eval" or m.startswith("vibes_eval.")}


def _modules() -> dict[Path, set[str]]:
    return {p: _imports(p) for p in SRC.rglob("*.py")}


def _target(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_benchmarks_import_no_front_end() -> None:
    bad = [
        f"{p.relative_to(SRC)} imports {m}"
        for p, mods in _modules().items()
        if _package(p) == "benchmarks"
        for m in mods
        if _target(m) in FRONT_ENDS
    ]
    assert not bad, "\n".join(bad)


def test_the_spine_imports_no_benchmark() -> None:
    registry = SRC / "core" / "registry.py"
    bad = [
        f"{p.relative_to(SRC)} imports {m}"
        for p, mods in _modules().items()
        if _package(p) in SPINE and p != registry
        for m in mods
        if _target(m) == "benchmarks"
    ]
    assert not bad, "\n".join(bad)


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for p, mods in _modules().items():
        here = _package(p)
        if p == SRC / "core" / "registry.py":
            continue  # the built-in table names plug-ins by string; it imports none
        graph.setdefault(here, set()).update(
            t for m in mods if (t := _target(m)) and t != here and t != "__init__"
        )
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path, node, nxt]
            if nxt not in state and (found := visit(nxt, [*path, node])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [])):
            return found
    return None


def test_packages_import_each_other_without_cycles() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, " -> ".join(cycle or [])
