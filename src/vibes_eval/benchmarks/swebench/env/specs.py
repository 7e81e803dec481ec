"""How an instance is installed and tested: its spec (per repository and version), its
eval script, and the parser of its test log.

Specs come from a file of the user's (``--set specs=FILE``: ``{repo: {version: spec}}``
with the official keys ``python``, ``packages``, ``pip_packages``, ``pre_install``,
``install``, ``eval_commands``, ``test_cmd``, plus ``apt_packages`` and ``log_parser``), then
from the official package (``swebench`` 4.1's ``MAP_REPO_VERSION_TO_SPECS``). A 5.x row that
carries ``eval_script`` runs that script as given.

The eval script follows the official one step by step (swebench 4.1's
``make_eval_script_list``); the test steps then run as their own command (see
``run.split_script``).
"""

from __future__ import annotations

import functools
import importlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from vibes_eval.benchmarks.swebench.env.services import SERVICES, with_services
from vibes_eval.benchmarks.swebench.tasks import SweInstance
from vibes_eval.core.errors import UserError

START = ">>>>> Start Test Output"
END = ">>>>> End Test Output"
APPLY_FAILED = ">>>>> Patch Apply Failed"
APPLIED = ">>>>> Applied Patch"
NON_TEST_EXTS = (
    ".json",
    ".png",
    "csv",
    ".txt",
    ".md",
    ".jpg",
    ".jpeg",
    ".pkl",
    ".yml",
    ".yaml",
    ".toml",
)
REPO_DIR = "/testbed"
ENV_NAME = "testbed"
_HEREDOC = "EOF_114329324912"
_DIFF_GIT = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.M)

Spec = dict[str, Any]

# Official spec keys and the shape each must have; a wrong one is a TypeError deep in the
# eval script's making, so it is refused when the file is read.
_STR = (str,)
_SCALAR = (str, int, float)
SPEC_FIELDS: dict[str, tuple[str, tuple[type, ...]]] = {
    "python": ("a version", _SCALAR),
    "packages": ("a string", _STR),
    "install": ("a string", _STR),
    "test_cmd": ("a string", _STR),
    "log_parser": ("a string", _STR),
    "pip_packages": ("a list of strings", (list,)),
    "apt_packages": ("a list of strings", (list,)),
    "pre_install": ("a list of strings", (list,)),
    "eval_commands": ("a list of strings", (list,)),
    "vibes_services": ("a list of strings", (list,)),  # ours: env/services.py
    "vibes_pins": ("a list of strings", (list,)),  # ours: env/services.py
}
Parser = Callable[[str, Any], dict[str, str]]


@functools.cache
def official() -> Any | None:
    """``swebench.harness.constants`` when the optional extra is installed, else None."""
    try:
        return importlib.import_module("swebench.harness.constants")
    except Exception:  # ImportError, or one of its many dependencies failing to import
        return None


def swebench_version() -> str:
    try:
        from importlib.metadata import version

        return version("swebench")
    except Exception:
        return "absent"


def read_specs(path: str | None) -> dict[str, dict[str, Spec]]:
    """A specs file: ``{repo: {version: spec}}`` (YAML or JSON).

    Raises:
        UserError: missing or malformed file, or a spec field of the wrong shape (file,
            line, ``repo.version.field``).
    """
    if not path:
        return {}
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", path=p, field="specs") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise UserError("invalid YAML", path=p, line=mark.line + 1 if mark else None) from None
    if not isinstance(data, dict) or not all(
        isinstance(v, dict) and all(isinstance(s, dict) for s in v.values()) for v in data.values()
    ):
        raise UserError("expected {repo: {version: {install: ..., test_cmd: ...}}}", path=p)
    specs = {
        repo: {str(ver): dict(spec) for ver, spec in by_ver.items()}
        for repo, by_ver in data.items()
    }
    _check_specs(specs, text, p)
    return specs


def _spec_problem(spec: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, message) of the first field of ``spec`` with the wrong shape, else None."""
    if "test_cmd" not in spec:
        return "test_cmd", "missing"
    for name, (what, types) in SPEC_FIELDS.items():
        if name not in spec:
            continue
        value = spec[name]
        ok = isinstance(value, types) and not isinstance(value, bool)
        if ok and isinstance(value, list):
            ok = all(isinstance(v, str) for v in value)
        if not ok:
            return name, f"expected {what}, got {type(value).__name__}"
    unknown = [s for s in spec.get("vibes_services", []) if s not in SERVICES]
    if unknown:
        return "vibes_services", f"unknown service {unknown[0]!r} (known: {', '.join(SERVICES)})"
    return None


def _key_line(root: Any, keys: Sequence[str]) -> int | None:
    """The 1-based line of the key path ``keys`` in a composed YAML document."""
    node, line = root, None
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            return line
        match = next(((k, v) for k, v in node.value if str(k.value) == key), None)
        if match is None:
            return line
        line = match[0].start_mark.line + 1
        node = match[1]
    return line


def _check_specs(data: Mapping[str, Mapping[str, Spec]], text: str, path: Path) -> None:
    """Raises: UserError naming the file, line and field of the first malformed spec."""
    for repo, by_ver in data.items():
        for ver, spec in by_ver.items():
            problem = _spec_problem(spec)
            if problem is None:
                continue
            field, message = problem
            try:
                root = yaml.compose(text)
            except yaml.YAMLError:
                root = None
            line = _key_line(root, [str(repo), str(ver), field])
            raise UserError(message, path=path, line=line, field=f"{repo}.{ver}.{field}")


def spec_for(inst: SweInstance, user: Mapping[str, Mapping[str, Spec]]) -> Spec | None:
    """The instance's spec: the user's, else the official one, else None."""
    spec = user.get(inst.repo, {}).get(inst.version)
    if spec is not None:
        return with_services(inst.repo, dict(spec))
    constants = official()
    table = getattr(constants, "MAP_REPO_VERSION_TO_SPECS", None) if constants else None
    if table and inst.version in table.get(inst.repo, {}):
        return with_services(inst.repo, dict(table[inst.repo][inst.version]))
    return None


def missing_spec(inst: SweInstance) -> str:
    how = (
        "install the extra: pip install 'vibes-eval[swebench]'"
        if official() is None
        else "give one with --set specs=FILE"
    )
    return (
        f"no install/test spec for {inst.repo} {inst.version} and the row carries no "
        f"eval_script: {how}"
    )


# -- patches ------------------------------------------------------------------------------


def patch_paths(patch: str) -> list[str]:
    """Every path a diff touches (old and new names), in order."""
    out: list[str] = []
    for a, b in _DIFF_GIT.findall(patch):
        for p in (a, b):
            if p not in out:
                out.append(p)
    for m in re.finditer(r"^(?:---|\+\+\+) (?:[ab]/)?(\S+)", patch, re.M):
        if m.group(1) != "/dev/null" and m.group(1) not in out:
            out.append(m.group(1))
    return out


def modified_files(patch: str) -> list[str]:
    """Files the patch changes that exist before it (not the ones it creates), as the
    official reset step lists them."""
    out = []
    for block in re.split(r"(?=^diff --git )", patch, flags=re.M):
        m = _DIFF_GIT.match(block)
        if m is None:
            continue
        src = re.search(r"^--- (\S+)", block, re.M)
        if src is not None and src.group(1) == "/dev/null":
            continue
        if m.group(1) not in out:
            out.append(m.group(1))
    return out


def test_directives(inst: SweInstance) -> list[str]:
    """The test files the test patch touches, as arguments of the test command (Django:
    dotted module names)."""
    found = [b for _, b in _DIFF_GIT.findall(inst.test_patch)]
    directives = [d for d in dict.fromkeys(found) if not d.endswith(NON_TEST_EXTS)]
    if inst.repo == "django/django":
        out = []
        for d in directives:
            d = d[: -len(".py")] if d.endswith(".py") else d
            d = d[len("tests/") :] if d.startswith("tests/") else d
            out.append(d.replace("/", "."))
        return out
    return directives


# -- the eval script -----------------------------------------------------------------------


def eval_script_lines(inst: SweInstance, spec: Spec) -> list[str]:
    """The official eval steps for ``inst`` (without the ``#!`` / ``set`` header)."""
    base = inst.base_commit
    reset = f"git checkout {base} {' '.join(modified_files(inst.test_patch))}"
    apply_tests = f"git apply -v - <<'{_HEREDOC}'\n{inst.test_patch}\n{_HEREDOC}"
    test = " ".join([spec["test_cmd"], *test_directives(inst)])
    activate = ["source /opt/miniconda3/bin/activate", f"conda activate {ENV_NAME}"]
    lines = [*activate, f"cd {REPO_DIR}", *spec.get("eval_commands", [])]
    lines += [
        f"git config --global --add safe.directory {REPO_DIR}",
        f"cd {REPO_DIR}",
        "git status",
        "git show",
        f"git -c core.fileMode=false diff {base}",
        *activate,
    ]
    if "install" in spec:
        lines.append(spec["install"])
    return [*lines, reset, apply_tests, f": '{START}'", test, f": '{END}'", reset]


def eval_script(inst: SweInstance, spec: Spec | None) -> str:
    """The instance's eval script: the row's own (5.x), else made from its spec.

    Raises:
        UserError: neither is available.
    """
    if inst.eval_script:
        return inst.eval_script
    if spec is None:
        raise UserError(missing_spec(inst))
    return "\n".join(["#!/bin/bash", "set -uxo pipefail", *eval_script_lines(inst, spec)]) + "\n"


# -- test log parsers ----------------------------------------------------------------------

_STATUSES = ("FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL")
_SKIP_COUNT = re.compile(r"^\[\d+\]$")


def parse_pytest(log: str, _spec: Any = None) -> dict[str, str]:
    """``pytest -rA``: a line starting with a status names a test in its next word (the
    official parser's reading, blanks in parametrized ids included)."""
    found: dict[str, str] = {}
    for line in log.split("\n"):
        if not line.startswith(_STATUSES):
            continue
        if line.startswith("FAILED"):
            line = line.replace(" - ", " ")
        words = line.split()
        if len(words) <= 1:
            continue
        if words[0] == "SKIPPED" and _SKIP_COUNT.match(words[1]):
            continue  # "SKIPPED [2] file:line: reason" names no test
        found[words[1]] = words[0]
    return found


def parser_name(inst: SweInstance, spec: Spec | None) -> str:
    if inst.log_parser:
        return inst.log_parser
    if spec and spec.get("log_parser"):
        return str(spec["log_parser"])
    table = _official_repo_parsers()
    if inst.repo in table:
        return table[inst.repo].__name__
    return "parse_log_pytest"


def _official_repo_parsers() -> dict[str, Any]:
    try:
        module = importlib.import_module("swebench.harness.log_parsers")
    except Exception:
        return {}
    return dict(getattr(module, "MAP_REPO_TO_PARSER", {}))


@functools.cache
def parser(name: str) -> Parser:
    """The official parser ``name`` (from the optional extra); ``parse_log_pytest`` also
    without it.

    Raises:
        UserError: the parser is unknown, or needs the extra.
    """
    try:
        module = importlib.import_module("swebench.harness.log_parsers")
    except Exception:
        module = None
    if module is not None:
        registry = dict(getattr(module, "PARSER_REGISTRY", {}))  # 5.x
        for sub in ("python", "javascript", "java", "go", "rust", "c", "php", "ruby"):  # 4.x
            try:
                registry.update(
                    {
                        k: v
                        for k, v in vars(
                            importlib.import_module(f"swebench.harness.log_parsers.{sub}")
                        ).items()
                        if k.startswith("parse_log")
                    }
                )
            except Exception:
                continue
        if name in registry:
            return registry[name]  # type: ignore[no-any-return]
    if name == "parse_log_pytest":
        return parse_pytest
    if module is None:
        raise UserError(f"log parser {name}: install the extra: pip install 'vibes-eval[swebench]'")
    raise UserError(f"unknown log parser {name!r}")


def spec_summary(spec: Spec | None) -> str:
    return json.dumps(spec, sort_keys=True) if spec else ""
