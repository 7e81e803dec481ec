"""The harness's own witness inside a pytest run (loaded with ``-p vibes_swe_probe`` from a
read-only directory outside the repository, before any conftest or code under test).

For every test it writes one JSON line to the file named by ``VIBES_PROBE_OUT``, opened
when this plugin loads: the node id, and the outcome read from the raw call information
(the exception a phase raised, or none), not from the report object that hooks, plugins
and monkeypatches can rewrite. It also records whether the function that ran is the one
the test file defines (its code compared with a compile of the file made before any code
of the repository was imported). And it wraps each test function for its call, so that
what the function itself did (raised or returned) is written from inside the call: a
runner whose own code is rewritten (pytest's ``_pytest.runner`` clearing the exception
before any hook sees it, ``pytest_pyfunc_call`` swallowing it, a call that never happens)
still leaves the function's own record. The harness compares this with the log the official
parser reads and with the exit status. Plain Python 3.5+ and any pytest >= 3: it runs in
whatever environment the instance has.

It watches the outermost session only: pytest's own tests start pytest runs (in-process or
in a subprocess) whose failures are meant, and must not be charged to the real run. So at
load it takes its settings out of the environment (a nested process finds none and never
loads it), and it records the items of the first configured session alone.
"""

import ast
import contextlib
import functools
import inspect
import json
import os
import shlex

import pytest

_OUT = None
_REFERENCE = {}  # (file path, function name) -> [(start lines, names)], read before any import
_CONFIG = []  # the config of the session the harness started (the first one configured)
_ANNOTATIONS = ("annotation", "returns")  # evaluated outside the function's code, or never
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


def _body_nodes(node):
    """The nodes of a function's body, without annotations (a parameter's type, a local
    variable's: never names its code uses)."""
    stack = list(node.body)
    while stack:
        sub = stack.pop()
        yield sub
        for field, value in ast.iter_fields(sub):
            if field in _ANNOTATIONS:
                continue
            items = value if isinstance(value, list) else [value]
            stack.extend(v for v in items if isinstance(v, ast.AST))


def _arg_names(args):
    """Parameter names (their defaults and annotations are evaluated where the function is
    defined, not in its code)."""
    every = [*getattr(args, "posonlyargs", []), *args.args, *args.kwonlyargs]
    every += [a for a in (args.vararg, args.kwarg) if a is not None]
    return {a.arg for a in every}


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
            names = _arg_names(node.args)
            for sub in _body_nodes(node):
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


def _without_probe(words):
    """``words`` (PYTEST_ADDOPTS) without the option that loads this plugin."""
    out, skip = [], False
    for i, word in enumerate(words):
        if skip:
            skip = False
        elif word == "-p" and words[i + 1 : i + 2] == ["vibes_swe_probe"]:
            skip = True
        elif word != "-pvibes_swe_probe":
            out.append(word)
    return out


def _consume_settings():
    """Take the harness's settings out of the environment (pytest has read them), so that
    pytest runs the tests start, which inherit it, neither load nor feed the probe."""
    target = os.environ.pop("VIBES_PROBE_OUT", "")
    files = os.environ.pop("VIBES_PROBE_FILES", "")
    kept = _without_probe(shlex.split(os.environ.get("PYTEST_ADDOPTS", "")))
    if kept:
        os.environ["PYTEST_ADDOPTS"] = " ".join(shlex.quote(w) for w in kept)
    else:
        os.environ.pop("PYTEST_ADDOPTS", None)
    return target, files


def _start():
    global _OUT
    target, files = _consume_settings()
    if target and _OUT is None:
        _OUT = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    for path in files.split(os.pathsep):
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


def pytest_configure(config):
    if not _CONFIG:
        _CONFIG.append(config)


def _outermost(config):
    """``config`` is the session the harness started, not one a test started in-process."""
    return bool(_CONFIG) and config is _CONFIG[0]


def _classify(exc):
    """The outcome an exception raised by a test function means."""
    for name, outcome in (("skip", "skipped"), ("xfail", "xfailed")):
        kind = getattr(getattr(pytest, name, None), "Exception", None)
        if kind is not None and isinstance(exc, kind):
            return outcome
    return "failed"


def _wrappable(item):
    """A plain test function (not unittest's, not a coroutine: pytest treats those apart,
    and a wrapper would hide what they are)."""
    if not isinstance(item, pytest.Function) or type(item).__name__ == "TestCaseFunction":
        return None
    func = getattr(item, "obj", None)
    if not callable(func) or inspect.iscoroutinefunction(func):
        return None
    if inspect.isasyncgenfunction(func) or inspect.isgeneratorfunction(func):
        return None
    return func


def _witness(item, func):
    """``func`` recording, from inside its own call, whether it raised."""
    marked = getattr(item, "get_closest_marker", None)
    base = {"event": "func", "nodeid": item.nodeid}
    base["xfail_marked"] = marked is not None and marked("xfail") is not None

    @functools.wraps(func)
    def witness(*args, **kwargs):
        try:
            result = func(*args, **kwargs)
        except BaseException as exc:
            _write(dict(base, raw=_classify(exc)))
            raise
        _write(dict(base, raw="passed"))
        return result

    return witness


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_call(item):
    func = _wrappable(item) if _outermost(item.config) else None
    if func is not None:
        try:
            item.obj = _witness(item, func)
            _write({"event": "wrapped", "nodeid": item.nodeid})
        except Exception:  # an old pytest without a settable ``obj``: the phases only
            func = None
    try:
        yield
    finally:
        if func is not None:
            with contextlib.suppress(Exception):
                item.obj = func


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    if _outermost(item.config):
        record = {"event": "phase", "nodeid": item.nodeid, "when": call.when}
        record["raw"] = _raw_outcome(call)
        if call.when == "call":
            record["function"] = _function_check(item)
            closest = getattr(item, "get_closest_marker", None)
            record["xfail_marked"] = closest is not None and closest("xfail") is not None
        _write(record)
    yield


def pytest_sessionfinish(session, exitstatus):
    if _outermost(session.config):
        _write({"event": "finish", "exitstatus": int(exitstatus)})
