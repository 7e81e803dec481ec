"""The harness's witness inside a unittest-based run (Django's ``tests/runtests.py``),
imported at interpreter start-up from a read-only directory on ``PYTHONPATH``, before the
runner or any code of the repository.

It wraps ``unittest.TestCase._callTestMethod`` (Python 3.8+), the one call that runs a
test method, and writes to the file named by ``VIBES_PROBE_OUT`` (opened now, the name
then taken out of the environment) whether the method raised, from inside that call: a
runner rewritten to report failures as passes (``tests/runtests.py``, ``django/test/``,
a result class) leaves the method's own record unchanged. Each test is written under the
ids unittest prints for it (``name (module.Class)``, and ``name (module.Class.name)`` as
Python 3.11 prints it), which is what Django's log parser reads.
"""

import contextlib
import json
import os

_OUT = None
_target = os.environ.pop("VIBES_PROBE_OUT", "")
if _target:
    try:
        _OUT = os.open(_target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    except OSError:
        _OUT = None


def _write(record):
    if _OUT is not None:
        with contextlib.suppress(OSError):
            os.write(_OUT, (json.dumps(record, sort_keys=True) + "\n").encode("utf-8"))


def _install():
    import unittest.case

    case = unittest.case.TestCase
    original = getattr(case, "_callTestMethod", None)
    if original is None:  # Python < 3.8: nothing to wrap
        return

    def _callTestMethod(self, method):
        kind = type(self)
        where = f"{kind.__module__}.{kind.__qualname__}"
        name = self._testMethodName
        expecting = getattr(self, "_expectedFailure", False) or getattr(
            method, "__unittest_expecting_failure__", False
        )
        ids = [f"{name} ({where})", f"{name} ({where}.{name})"]
        base = {"event": "func", "ids": ids, "xfail_marked": bool(expecting)}
        try:
            result = original(self, method)
        except unittest.case.SkipTest:
            _write(dict(base, raw="skipped"))
            raise
        except BaseException:
            _write(dict(base, raw="failed"))
            raise
        _write(dict(base, raw="passed"))
        return result

    case._callTestMethod = _callTestMethod
    _write({"event": "start", "runner": "unittest", "pid": os.getpid()})


if _OUT is not None:
    _install()
