"""The harness's own witness inside a pytest run (loaded with ``-p vibes_swe_probe`` from a
read-only directory outside the repository, before any conftest or code under test).

For every test it writes one JSON line to the file named by ``VIBES_PROBE_OUT``, opened
when this plugin loads: the node id, and the outcome read from the raw call information
(the exception a phase raised, or none), not from the report object that hooks, plugins
and monkeypatches can rewrite. It also records whether the function that ran is the one
the test file defines (its code compared with a compile of the file made before any code
of the repository was imported). The harness compares this with the log the official
parser reads and with the exit status. Plain Python 3.5+ and any pytest >= 3: it runs in
whatever environment the instance has.
"""

import ast
import contextlib
import json
import os

import pytest

_OUT = None
_REFERENCE = {}  # (file path, function name) -> [(start lines, names)], read before any import
_open = open


def _names(code):
    """Every name a code object and the code nested in it use."""
    out = set()
    stack = [code]
    while stack:
        c = stack.pop()
        out.update(c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars)
        stack.extend(k for k in c.co_consts if hasattr(k, "co_code"))
    return out


def _reference(path):
    """Per function of a test file, read from its source: the lines its code may start on
    and the names its body uses. Assertion rewriting adds names and keeps these."""
    try:
        with _open(path, "rb") as fh:
            tree = ast.parse(fh.read(), path)
    except Exception:
        return
    real = os.path.realpath(path)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = {node.lineno} | {d.lineno for d in node.decorator_list}
            names = set()
            parts = [*node.body, node.args]
            for sub in (n for part in parts for n in ast.walk(part)):
                if isinstance(sub, ast.Name):
                    names.add(sub.id)
                elif isinstance(sub, ast.Attribute):
                    names.add(sub.attr)
                elif isinstance(sub, ast.arg):
                    names.add(sub.arg)
            entry = _REFERENCE.setdefault((real, node.name), [])
            entry.append((lines, names))


def _write(record):
    if _OUT is None:
        return
    with contextlib.suppress(OSError):
        os.write(_OUT, (json.dumps(record, sort_keys=True) + "\n").encode("utf-8"))


def _start():
    global _OUT
    target = os.environ.get("VIBES_PROBE_OUT")
    if target and _OUT is None:
        _OUT = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    for path in os.environ.get("VIBES_PROBE_FILES", "").split(os.pathsep):
        if path:
            _reference(path)
    _write({"event": "start", "pid": os.getpid()})


_start()


def _raw_outcome(call):
    excinfo = call.excinfo
    if excinfo is None:
        return "passed"
    try:
        skip = pytest.skip.Exception
        xfail = pytest.xfail.Exception
    except AttributeError:
        return "failed"
    if excinfo.errisinstance(xfail):
        return "xfailed"
    if excinfo.errisinstance(skip):
        return "skipped"
    return "failed"


def _function_check(item):
    """same: the function that runs is the one the test file defines; changed: it is
    not (defined elsewhere, or its body swapped); unknown: no reference for it."""
    func = getattr(item, "obj", None)
    func = getattr(func, "__func__", func)
    code = getattr(func, "__code__", None)
    path = str(getattr(item, "fspath", "") or getattr(item, "path", ""))
    name = getattr(item, "originalname", None) or item.name.split("[")[0]
    refs = _REFERENCE.get((os.path.realpath(path), name)) if path else None
    if code is None or not refs:
        return "unknown"
    if os.path.realpath(code.co_filename) != os.path.realpath(path):
        return "changed"
    names = _names(code)
    for lines, used in refs:
        if code.co_firstlineno in lines and used <= names | {name}:
            return "same"
    return "changed"


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    record = {"event": "phase", "nodeid": item.nodeid, "when": call.when, "raw": _raw_outcome(call)}
    if call.when == "call":
        record["function"] = _function_check(item)
        marker = item.get_closest_marker("xfail") if hasattr(item, "get_closest_marker") else None
        record["xfail_marked"] = marker is not None
    _write(record)
    yield


def pytest_sessionfinish(session, exitstatus):
    _write({"event": "finish", "exitstatus": int(exitstatus)})
