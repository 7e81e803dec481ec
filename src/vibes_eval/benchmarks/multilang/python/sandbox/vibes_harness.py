"""The trusted side of a Python unit: runs each task's own test code against a sample.

Runs inside the sandbox (stdlib only), one process per unit of samples. The sample's code
never runs here: ``vibes_child.py`` runs it in a forked process of its own, and the test
code here calls it through a stub (``candidate``) that sends the arguments as data and
decodes the answer as data (``vibes_wire``). So whatever the sample does -- exit, patch
``assert`` or builtins, replace the checker, print fake success, return an object equal to
everything -- it cannot make this process believe a test passed: a verdict is "passed"
only when the test code returned here, on values only this process built.

Input: ``unit.json`` in the working directory, read and removed before any sample's
process starts (so a sample finds no test, expected value or other sample's code on
disk); stdin: a token only the host knows, which starts every line this process reports
(samples have no way to this process's output, but a forged line would lack it anyway).
Output: ``<token> <json verdict>`` per sample.
"""

import builtins
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vibes_wire as wire  # noqa: E402

sys.path.remove(HERE)

KEEP = 4096


class SampleTimeout(BaseException):
    """The sample ran past its time (raised here by a timer or a read that waits too
    long); a BaseException so that no test's ``except Exception`` swallows it."""


class SampleGone(BaseException):
    """The sample's process ended while the test was talking to it."""


class SampleExit(BaseException):
    """The sample raised SystemExit (or KeyboardInterrupt) in a call."""


class SamplePolicy(BaseException):
    """The sample called something the policy refuses."""


class SampleError(Exception):
    """An exception of a type this side does not know (the sample's own class)."""


class Unsendable(Exception):
    """The test passed something that is not data to the sample."""


# -- talking to the sample's process --------------------------------------------------------


class Channel:
    def __init__(self, sock, deadline):
        self.sock = sock
        self.deadline = deadline
        self.first_exc = None  # the first exception the sample raised, for the detail
        self.calls = 0

    def request(self, message):
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise SampleTimeout()
        self.sock.settimeout(remaining)
        try:
            self.sock.sendall(wire.dumps(message))
            reply = wire.recv(self.sock)
        except TimeoutError:
            raise SampleTimeout() from None
        except (EOFError, OSError):
            raise SampleGone() from None
        except wire.WireError as exc:
            raise SampleError(f"the sample's answer is not data: {exc}") from None
        if type(reply) is not dict:
            raise SampleError("the sample's answer is not data")
        return reply

    def meta(self, message):
        """An answer about a value: ``["missing"]``, ``["callable", handle?]``, ``["value",
        data]`` decoded, or a list of strings (``output``)."""
        reply = self.request(message)
        if "meta" not in reply:
            return self.value(message, reply)
        meta = reply["meta"]
        if type(meta) is not list or not meta:
            raise SampleError("the sample's answer is not data")
        if meta[0] == "value" and len(meta) == 2:
            return ["value", self.value(message, {"ok": meta[1]})]
        if meta[0] == "callable" and (len(meta) == 1 or type(meta[1]) is int):
            return meta
        if meta == ["missing"] or all(type(m) is str for m in meta):
            return meta
        raise SampleError("the sample's answer is not data")

    def value(self, message, reply=None):
        """The decoded answer to ``message``, or the sample's exception raised here."""
        self.calls += 1
        reply = self.request(message) if reply is None else reply
        if "ok" in reply:
            try:
                return wire.decode(reply["ok"], self.proxy)
            except (wire.WireError, RecursionError) as exc:
                raise SampleError(f"the sample's answer is not data: {exc}") from None
        if reply.get("stop"):
            raise StopIteration
        info = reply.get("exc")
        if type(info) is not dict:
            raise SampleError("the sample's answer is not data")
        raise self.exception(info)

    def exception(self, info):
        name, msg = str(info.get("type", "")), str(info.get("msg", ""))
        if self.first_exc is None:
            self.first_exc = (name, msg)
        if name == "PolicyBlocked":
            return SamplePolicy(msg)
        if name in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
            return SampleExit(f"{name}({msg})" if msg else name)
        cls = getattr(builtins, name, None)
        if info.get("builtin") is True and isinstance(cls, type) and issubclass(cls, Exception):
            try:
                return cls(msg)
            except Exception:
                pass
        return SampleError(f"{name}: {msg}")

    def proxy(self, number):
        return Remote(self, handle=number)

    def encode(self, value):
        def handle(v):
            if isinstance(v, Remote) and v._chan is self and v._handle is not None:
                return v._handle
            raise Unsendable(f"a {type(v).__name__} cannot be passed to the sample")

        return wire.encode(value, handle)


class Remote:
    """A function or object that lives in the sample's process."""

    def __init__(self, chan, name=None, handle=None):
        self._chan = chan
        self._name = name
        self._handle = handle
        self.__name__ = name or "<sample object>"

    def _target(self):
        return {"name": self._name} if self._handle is None else {"h": self._handle}

    def _op(self, op, **extra):
        return self._chan.value({"op": op, **self._target(), **extra})

    def __call__(self, *args, **kwargs):
        enc = self._chan.encode
        return self._op(
            "call", args=[enc(a) for a in args], kwargs=[[k, enc(v)] for k, v in kwargs.items()]
        )

    def __getattr__(self, name):
        if name.startswith("__") or self._handle is None:
            raise AttributeError(name)
        kind = self._chan.meta({"op": "attr", **self._target(), "name": name})
        return Remote(self._chan, handle=kind[1]) if kind[0] == "callable" else kind[1]

    def __iter__(self):
        it = self._op("iter")
        return it if isinstance(it, Remote) else iter(it)

    def __next__(self):
        return self._op("next")

    def __len__(self):
        return self._op("len")

    def __bool__(self):
        return bool(self._op("bool")) if self._handle is not None else True

    def __contains__(self, key):
        return bool(self._op("contains", key=self._chan.encode(key)))

    def __getitem__(self, key):
        return self._op("item", key=self._chan.encode(key))

    def __repr__(self):
        if self._handle is None:
            return f"<sample function {self._name}>"
        text = self._op("repr")
        return text if type(text) is str else "<sample object>"

    __str__ = __repr__

    def __eq__(self, other):  # never equal to data: an object cannot claim equality
        return self is other

    def __hash__(self):
        return id(self)


class Globals(dict):
    """The test's globals: its own names, the trusted prompt's, the builtins; a name
    found nowhere here is looked up in the sample's module (MBPP tests call functions by
    name)."""

    def __init__(self, chan):
        super().__init__()
        self.chan = chan

    def __missing__(self, name):
        if name.startswith("__"):
            raise KeyError(name)
        if hasattr(builtins, name):
            return getattr(builtins, name)
        kind = self.chan.meta({"op": "get", "name": name})
        if kind[0] == "missing":
            raise KeyError(name)
        value = Remote(self.chan, name=name) if kind[0] == "callable" else kind[1]
        self[name] = value
        return value


# -- the fork server -------------------------------------------------------------------------


class Zygote:
    def __init__(self, python, workdir):
        here, there = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
        # the same string hashes (set orders) batched as alone; no other PYTHON* variable
        env.update(PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
        self.proc = subprocess.Popen(
            [python, "-s", "-c", wire.NO_SCRIPT_DIR, os.path.join(HERE, "vibes_child.py"),
             str(there.fileno())],
            pass_fds=[there.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=env, cwd=workdir,
        )  # fmt: skip
        there.close()
        self.ctrl = here
        self.pending = []
        ready = self.wait(lambda m: m["op"] == "ready", 30)
        self.seccomp = bool(ready["seccomp"])

    def wait(self, match, timeout):
        """The next control message ``match`` accepts; others are kept for later."""
        for n, msg in enumerate(self.pending):
            if match(msg):
                return self.pending.pop(n)
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise RuntimeError("the fork server stopped answering")
            self.ctrl.settimeout(left)
            try:
                data = self.ctrl.recv(1 << 16)
            except TimeoutError:
                continue
            if not data:
                raise RuntimeError("the fork server ended")
            msg = json.loads(data)
            if match(msg):
                return msg
            self.pending.append(msg)

    def spawn(self, ident, limits, policy):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        msg = {"op": "spawn", "id": ident, "dir": os.getcwd(), "limits": limits,
               "policy": policy}  # fmt: skip
        socket.send_fds(self.ctrl, [json.dumps(msg).encode()], [theirs.fileno()])
        theirs.close()
        reply = self.wait(lambda m: m.get("id") == ident and m["op"] != "exited", 30)
        if reply["op"] != "spawned":
            mine.close()
            raise RuntimeError(f"cannot start a process for the sample: {reply.get('error')}")
        return mine, reply["pid"]

    def finish(self, ident, pid):
        """Kill the sample's process; how it had ended (or that we killed it)."""
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        return self.wait(lambda m: m.get("id") == ident and m["op"] == "exited", 30)


# -- one sample ------------------------------------------------------------------------------


def on_alarm(signum, frame):
    raise SampleTimeout()


class Verdict(Exception):
    def __init__(self, reason, detail=""):
        super().__init__(reason)
        self.reason, self.detail = reason, detail


def test_line(exc, filename):
    """The line of the test code an exception came from."""
    for frame, lineno in reversed(list(traceback.walk_tb(exc.__traceback__))):
        if frame.f_code.co_filename == filename:
            return lineno
    return None


class Task:
    def __init__(self, tid, spec):
        self.tid = tid
        self.entry = spec.get("entry_point") or None
        self.prompt = compile(spec.get("prompt") or "", f"<prompt {tid}>", "exec")
        self.setup = compile(spec.get("setup") or "", f"<setup {tid}>", "exec")
        self.test_file = f"<test {tid}>"
        self.test_source = spec.get("test") or ""
        self.test = compile(self.test_source, self.test_file, "exec")
        self.plus = spec.get("plus")
        self._expected = None

    def line(self, lineno):
        lines = self.test_source.splitlines()
        return lines[lineno - 1].strip() if lineno and 0 < lineno <= len(lines) else ""

    def expected(self):
        """EvalPlus-style inputs with the outputs of the task's own solution, computed
        here (trusted code) once per unit."""
        if self._expected is None:
            ns = {}
            exec(compile(self.plus["canonical"], f"<canonical {self.tid}>", "exec"), ns)
            fn = ns[self.entry]
            import copy

            self._expected = []
            for args in self.plus["inputs"]:
                args = wire.decode(args)
                self._expected.append((args, fn(*copy.deepcopy(args))))
        return self._expected


def close_enough(out, exp, atol):
    if isinstance(exp, float) or isinstance(out, float):
        if type(out) not in (int, float) or type(exp) not in (int, float):
            return False
        import math

        if math.isnan(exp):
            return isinstance(out, float) and math.isnan(out)
        return math.isclose(out, exp, rel_tol=1e-7, abs_tol=max(atol, 1e-6))
    if isinstance(exp, (list, tuple)) and type(out) is type(exp):
        return len(out) == len(exp) and all(close_enough(o, e, atol) for o, e in zip(out, exp))  # noqa: B905
    return type(out) is type(exp) and out == exp


def run_plus(task, candidate):
    for n, (args, exp) in enumerate(task.expected()):
        import copy

        out = candidate(*copy.deepcopy(args))
        if not close_enough(out, exp, float(task.plus.get("atol") or 0)):
            raise Verdict("failed", f"extra test {n}: expected {exp!r:.200}, got {out!r:.200}")


def judge(task, chan, code):
    """Run the sample's code in its process and the task's test here; raises Verdict."""
    try:
        chan.value({"op": "load", "code": code})
    except SampleError as exc:
        raise Verdict("failed", f"while loading: {exc}") from None
    except SyntaxError as exc:
        raise Verdict("compile_error", f"SyntaxError: {exc}") from None
    except (IndentationError, TabError) as exc:  # pragma: no cover - SyntaxError subclasses
        raise Verdict("compile_error", f"{type(exc).__name__}: {exc}") from None
    g = Globals(chan)
    g["__name__"] = "__vibes_test__"
    exec(task.prompt, g)
    if task.entry:
        g[task.entry] = Remote(chan, name=task.entry)
    exec(task.setup, g)
    try:
        exec(task.test, g)
    except AssertionError as exc:
        line = task.line(test_line(exc, task.test_file))
        text = f"assertion failed: {line}" if line else "assertion failed"
        raise Verdict("failed", text) from None
    if task.plus and task.entry:
        run_plus(task, g[task.entry])


def classify(exc, chan, ended):
    """The reason and detail of a run that ended in ``exc``; ``ended``: how the sample's
    process ended, from the fork server."""
    if isinstance(exc, Verdict):
        return exc.reason, exc.detail
    if isinstance(exc, SampleTimeout):
        return "timeout", "ran past its time limit"
    if isinstance(exc, SamplePolicy):
        return "blocked_policy", f"refused by the policy: {exc}"
    if isinstance(exc, SampleExit):
        return "early_exit", f"the sample raised {exc}"
    if isinstance(exc, SampleGone):
        sig = ended.get("signal")
        if sig == signal.SIGXCPU:
            return "timeout", "ran past its CPU time limit"
        if sig == signal.SIGXFSZ:
            return "disk_limit", "wrote a file past the size limit"
        if sig is not None:
            return "crash", f"the sample's process was killed by signal {sig}"
        return "early_exit", f"the sample's process exited with code {ended.get('code')}"
    if isinstance(exc, MemoryError):
        return "memory", "MemoryError"
    if isinstance(exc, RecursionError) and chan.first_exc is None:
        return "failed", f"RecursionError: {exc}"
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return "failed", text[:500]


def run_sample(zyg, tasks, sample, unit):
    task = tasks[sample["task"]]
    timeout = float(unit["timeout_s"])
    if task.plus:
        task.expected()  # the solution's own outputs: not the sample's time
    start = time.monotonic()
    sock, pid = zyg.spawn(sample["id"], unit["child_limits"], unit["policy"])
    chan = Channel(sock, start + timeout)
    out = err = ""
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout + 0.05)
    try:
        try:
            judge(task, chan, sample["code"])
            reason, detail = "passed", ""
        except BaseException as exc:  # whatever the test or the sample did
            reason, detail = None, exc
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        gone = isinstance(detail, (SampleGone, SampleTimeout))
        if reason == "passed" or not gone:
            try:
                chan.deadline = time.monotonic() + 1.0
                out, err = chan.meta({"op": "output"})[:2]
            except BaseException:
                pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sock.close()
        ended = zyg.finish(sample["id"], pid)
    if reason is None:
        reason, detail = classify(detail, chan, ended)
    return {
        "id": sample["id"], "passed": reason == "passed", "reason": reason,
        "detail": str(detail)[:1000], "wall_s": time.monotonic() - start,
        "calls": chan.calls, "stdout": str(out)[:KEEP], "stderr": str(err)[:KEEP],
    }  # fmt: skip


def take_unit(path):
    """The unit file's content, the file removed before any sample's process exists: the
    tests, the expected values, the canonical solutions and every sample's code then live
    only in this process's memory, which samples cannot read (it is not dumpable). A file
    that cannot be removed stops the unit (its samples get no verdict: an infra error)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, encoding="utf-8") as fh:
        unit = json.load(fh)
    os.unlink(path)
    if os.path.lexists(path):
        raise RuntimeError(f"{path} is still there")
    return unit


def main():
    token = sys.stdin.buffer.read().decode().strip()
    import ctypes

    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE: samples cannot read our memory
    unit = take_unit("unit.json")
    tasks = {tid: Task(tid, spec) for tid, spec in unit["tasks"].items()}
    zyg = Zygote(unit["python"], os.getcwd())
    if unit.get("require_seccomp") and not zyg.seccomp:
        print(f"{token} " + json.dumps({"fatal": "no seccomp in this sandbox"}), flush=True)
        return
    for sample in unit["samples"]:
        verdict = run_sample(zyg, tasks, sample, unit)
        print(f"{token} " + json.dumps(verdict), flush=True)  # ASCII: any output is safe


if __name__ == "__main__":
    main()
