"""Make small SWE-bench instances offline: a tiny Python repository with real bugs, as a
git repository with fixed dates (so its commit ids are the same on every machine), each
fix split SWE-bench-style into ``patch`` (the code) and ``test_patch`` (the tests), and
FAIL_TO_PASS / PASS_TO_PASS derived by running the tests before and after the fix.

    python examples/swebench/make_instances.py OUT_DIR

writes OUT_DIR/repos/vibes-toy__calc (the mirror for ``--repos``), OUT_DIR/instances.jsonl,
OUT_DIR/specs.yaml (install and test command of the repository) and
OUT_DIR/predictions/<kind>.jsonl: gold, empty, partial, regressing, malformed, no-op and
forging predictions (see ``PREDICTIONS``). Needs git and pytest on this machine (the tests
of this toy repository are run here to derive FAIL_TO_PASS / PASS_TO_PASS).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = "vibes-toy/calc"
MIRROR_NAME = "vibes-toy__calc"
VERSION = "0.1"
PYTEST_PIN = "pytest==8.3.5"
SPECS = {
    REPO: {
        VERSION: {
            "python": "3.11",
            "pip_packages": [PYTEST_PIN],
            "install": "python -m pip install --no-build-isolation --no-deps -e .",
            "test_cmd": "pytest -rA",
        }
    }
}

# -- the repository ------------------------------------------------------------------------

PYPROJECT = """\
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0.1"

[tool.setuptools]
packages = ["calc"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

TEXT_V1 = '''\
"""Text helpers."""


def normalize(text):
    """Lower-case ``text`` without surrounding or repeated blanks."""
    return text.lower()


def shout(text):
    return normalize(text).upper() + "!"
'''

TEXT_FIXED = TEXT_V1.replace(
    "    return text.lower()\n", '    return " ".join(text.split()).lower()\n'
)

STATS_V1 = '''\
"""Statistics on lists of numbers."""


def mean(xs):
    return sum(xs) / len(xs)


def median(xs):
    s = sorted(xs)
    return s[len(s) // 2]
'''

STATS_FIXED = '''\
"""Statistics on lists of numbers."""


def mean(xs):
    if not xs:
        return 0.0
    return sum(xs) / len(xs)


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n % 2 == 0:
        return (s[n // 2 - 1] + s[n // 2]) / 2
    return s[n // 2]
'''

INIT = (
    '"""A toy package for offline SWE-bench tests."""\n\n'
    "from calc import stats, text  # noqa: F401\n"
)

TEST_TEXT_V1 = """\
from typing import Any

import pytest

from calc.text import normalize, shout


def test_lower():
    assert normalize("ABC") == "abc"


@pytest.mark.parametrize("raw", ["", "x"])
def test_idempotent(raw):
    assert normalize(normalize(raw)) == normalize(raw)


def test_shout():
    assert shout("hey") == "HEY!"


def test_shout_typed(text: Any = "hey") -> None:  # an annotation the body never names
    assert shout(text) == "HEY!"


def test_shout_over_loopback():  # a server of the test's own, as pytest-httpbin starts
    import socket

    with socket.create_server(("127.0.0.1", 0)) as server:
        with socket.create_connection(server.getsockname(), timeout=10) as client:
            peer, _ = server.accept()
            client.sendall(shout("hey").encode())
            assert peer.recv(16) == b"HEY!"
            peer.close()
"""

# The tests of the fix of instance 1: parametrized ids with blanks (which the official
# log parser cuts at the first blank) and one with an empty parameter id.
TEST_TEXT_V2 = (
    TEST_TEXT_V1
    + """

@pytest.mark.parametrize("raw,want", [(" a", "a"), ("b ", "b"), ("a  b", "a b")])
def test_normalize_spaces(raw, want):
    assert normalize(raw) == want


@pytest.mark.parametrize("raw", [""], ids=[""])
def test_blank_only(raw):
    assert normalize("  " + raw) == ""
"""
)

# Instance 2's test patch creates this file.
TEST_STATS = """\
from calc.stats import mean, median


def test_mean_basic():
    assert mean([1, 2, 3]) == 2


def test_median_odd():
    assert median([3, 1, 2]) == 2


def test_mean_empty():
    assert mean([]) == 0.0


def test_median_even():
    assert median([4, 1, 3, 2]) == 2.5
"""

# -- predictions ---------------------------------------------------------------------------

TEXT_PARTIAL = TEXT_V1.replace("    return text.lower()\n", "    return text.strip().lower()\n")
TEXT_REGRESSING = TEXT_V1.replace(
    "    return text.lower()\n", '    return " ".join(text.split())\n'
)

FORGE_CONFTEST = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None


def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 0
"""

FORGE_PLUGIN = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""

# Forgery from inside the code under test: the package the tests import rewrites pytest's
# reports as they are made. No test file or setting is touched.
FORGE_IN_CODE = (
    INIT
    + """

def _forge():
    import sys

    reports = sys.modules.get("_pytest.reports")
    if reports is None:
        return
    original = reports.TestReport.from_item_and_call

    def passed(item, call):
        report = original(item, call)
        report.outcome = "passed"
        report.longrepr = None
        return report

    reports.TestReport.from_item_and_call = staticmethod(passed)


_forge()
"""
)

# The same, spelled so that no name of the test runner appears in the patch.
FORGE_IN_CODE_HIDDEN = (
    INIT
    + """

def _forge():
    import sys

    name = "".join(["_", "py", "test", ".", "rep", "orts"])
    reports = sys.modules.get(name)
    if reports is None:
        return
    cls = getattr(reports, "Test" + "Report")
    original = getattr(cls, "from_item_and_call")

    def passed(item, call):
        report = original(item, call)
        report.outcome = "passed"
        report.longrepr = None
        return report

    setattr(cls, "from_item_and_call", staticmethod(passed))


_forge()
"""
)

# Writes what a passing run looks like past pytest's capture (to its parent's output),
# then ends the process with status 0 before any test runs.
FORGE_EXIT = (
    INIT
    + """

def _leave():
    import os
    import sys

    if "pytest" in sys.modules:
        names = ("normalize_spaces[ a-a]", "normalize_spaces[b -b]",
                 "normalize_spaces[a  b-a b]", "blank_only[]", "lower",
                 "idempotent[]", "idempotent[x]", "shout", "shout_typed",
                 "shout_over_loopback")
        text = "".join(f"PASSED tests/test_text.py::test_{n}\\n" for n in names)
        with open(f"/proc/{os.getppid()}/fd/1", "w") as out:
            out.write(text)
        os._exit(0)


_leave()
"""
)


def git(cwd: Path, *args: str, date: str = "2024-01-01T12:00:00+00:00") -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Toy Author",
        "GIT_AUTHOR_EMAIL": "toy@example.invalid",
        "GIT_COMMITTER_NAME": "Toy Author",
        "GIT_COMMITTER_EMAIL": "toy@example.invalid",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return subprocess.run(
        ["git", "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def commit(repo: Path, files: dict[str, str], message: str, date: str) -> str:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD").strip()


def diff(repo: Path, base: str, files: dict[str, str], paths: list[str]) -> str:
    """The diff that turns ``base`` into ``base`` + ``files``, limited to ``paths``."""
    git(repo, "checkout", "-q", base)
    write(repo, files)
    git(repo, "add", "-A")
    out = git(repo, "diff", "--cached", base, "--", *paths)
    git(repo, "reset", "-q", "--hard", base)
    git(repo, "clean", "-qfdx")
    return out


def statuses(repo: Path, base: str, patches: list[str], test_files: list[str]) -> dict[str, str]:
    """Per-test statuses of ``pytest -rA`` on ``base`` with ``patches`` applied (as the
    official log parser reads them: the first word after the status)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        git(Path(tmp), "clone", "-q", str(repo), str(work))
        git(work, "checkout", "-q", base)
        for patch in patches:
            subprocess.run(["git", "apply", "-"], cwd=work, input=patch, text=True, check=True)
        # In pytest's own order: a shuffling plugin of the caller's venv (pytest-randomly,
        # the dev extra) would reorder FAIL_TO_PASS and make the instances differ per run.
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-rA",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:randomly",
                *test_files,
            ],
            cwd=work,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(work), "PYTHONDONTWRITEBYTECODE": "1"},
        )
    found: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        words = line.replace(" - ", " ").split()
        if len(words) > 1 and words[0] in ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL"):
            found[words[1]] = words[0]
    return found


def derive(repo: Path, base: str, patch: str, test_patch: str, test_files: list[str]):
    before = statuses(repo, base, [test_patch], test_files)
    after = statuses(repo, base, [test_patch, patch], test_files)
    ok = ("PASSED", "XFAIL")
    f2p = [t for t, s in after.items() if s in ok and before.get(t) not in ok]
    p2p = [t for t, s in after.items() if s in ok and before.get(t) in ok]
    return f2p, p2p


def make_repo(root: Path) -> tuple[Path, str, str]:
    repo = root / "repos" / MIRROR_NAME
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    base1 = commit(
        repo,
        {
            "pyproject.toml": PYPROJECT,
            "calc/__init__.py": INIT,
            "calc/text.py": TEXT_V1,
            "calc/stats.py": STATS_V1,
            "tests/test_text.py": TEST_TEXT_V1,
            "README.md": "A toy calculator.\n",
        },
        "calc: text and stats helpers",
        "2024-01-01T12:00:00+00:00",
    )
    # Instance 1's fix lands (code and tests), then the base of instance 2.
    base2 = commit(
        repo,
        {"calc/text.py": TEXT_FIXED, "tests/test_text.py": TEST_TEXT_V2},
        "text: normalize blanks",
        "2024-01-02T12:00:00+00:00",
    )
    # Release tags: an instance image keeps those at or before its base commit.
    git(repo, "tag", "v0.1", base1)
    git(repo, "tag", "v0.2", base2)
    return repo, base1, base2


def instance(n: int, base: str, patch: str, test_patch: str, f2p, p2p, problem: str) -> dict:
    return {
        "repo": REPO,
        "instance_id": f"{MIRROR_NAME}-{n}",
        "base_commit": base,
        "patch": patch,
        "test_patch": test_patch,
        "problem_statement": problem,
        "hints_text": "",
        "created_at": f"2024-01-0{n}T12:00:00Z",
        "version": VERSION,
        "environment_setup_commit": base,
        "FAIL_TO_PASS": json.dumps(f2p),
        "PASS_TO_PASS": json.dumps(p2p),
    }


def make(root: Path) -> dict[str, Path]:
    """Write everything under ``root``; returns the paths by name."""
    root.mkdir(parents=True, exist_ok=True)
    repo, base1, base2 = make_repo(root)
    patch1 = diff(repo, base1, {"calc/text.py": TEXT_FIXED}, ["calc"])
    test1 = diff(repo, base1, {"tests/test_text.py": TEST_TEXT_V2}, ["tests"])
    f2p1, p2p1 = derive(repo, base1, patch1, test1, ["tests/test_text.py"])
    patch2 = diff(repo, base2, {"calc/stats.py": STATS_FIXED}, ["calc"])
    test2 = diff(repo, base2, {"tests/test_stats.py": TEST_STATS}, ["tests"])
    f2p2, p2p2 = derive(repo, base2, patch2, test2, ["tests/test_stats.py"])
    rows = [
        instance(1, base1, patch1, test1, f2p1, p2p1, "normalize() keeps blanks"),
        instance(2, base2, patch2, test2, f2p2, p2p2, "mean([]) raises; median of even lists"),
    ]
    paths = {"repos": root / "repos", "instances": root / "instances.jsonl"}
    paths["instances"].write_text("".join(json.dumps(r) + "\n" for r in rows))
    paths["specs"] = root / "specs.yaml"
    paths["specs"].write_text(json.dumps(SPECS, indent=2) + "\n")  # JSON is YAML

    id1, id2 = rows[0]["instance_id"], rows[1]["instance_id"]

    def code(base: str, files: dict[str, str], paths_: list[str] | None = None) -> str:
        return diff(repo, base, files, paths_ or sorted({p.split("/")[0] for p in files}))

    pyproject_plugin = PYPROJECT.replace(
        'testpaths = ["tests"]', 'testpaths = ["tests"]\naddopts = "-p calc.plugin"'
    )
    forged = {
        "forge_conftest": {"conftest.py": FORGE_CONFTEST},
        "forge_plugin": {"calc/plugin.py": FORGE_PLUGIN, "pyproject.toml": pyproject_plugin},
        "forge_test_edit": {
            "tests/test_text.py": TEST_TEXT_V1.replace(
                "assert normalize", "assert True or normalize"
            )
        },
        "forge_in_code": {"calc/__init__.py": FORGE_IN_CODE},
        "forge_in_code_hidden": {"calc/__init__.py": FORGE_IN_CODE_HIDDEN},
        "forge_exit": {"calc/__init__.py": FORGE_EXIT},
    }
    malformed = patch1.replace("calc/text.py", "calc/txet.py").replace(
        "return text.lower()", "return text.lowr()"
    )
    preds: dict[str, dict[str, str | None]] = {
        "gold": {id1: patch1, id2: patch2},
        "empty": {id1: "", id2: None},
        "partial": {id1: code(base1, {"calc/text.py": TEXT_PARTIAL})},
        "regressing": {id1: code(base1, {"calc/text.py": TEXT_REGRESSING})},
        "malformed": {id1: malformed},
        # adds an unrelated file: applies, fixes nothing
        "noop": {id1: code(base1, {"NOTES.md": "Notes on the calculator.\n"})},
    }
    for kind, files in forged.items():  # each forges the tests of instance 1
        preds[kind] = {id1: code(base1, files, sorted(files))}
    pred_dir = root / "predictions"
    pred_dir.mkdir()
    for kind, by_id in preds.items():
        lines = [
            json.dumps({"instance_id": iid, "model_name_or_path": f"toy/{kind}", "model_patch": p})
            for iid, p in by_id.items()
        ]
        paths[kind] = pred_dir / f"{kind}.jsonl"
        paths[kind].write_text("\n".join(lines) + "\n")
    return paths


PREDICTIONS = (
    "gold",
    "empty",
    "partial",
    "regressing",
    "malformed",
    "noop",
    "forge_conftest",
    "forge_plugin",
    "forge_test_edit",
    "forge_in_code",
    "forge_in_code_hidden",
    "forge_exit",
)

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for name, path in make(Path(sys.argv[1])).items():
        print(f"{name}: {path}")
