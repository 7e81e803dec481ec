"""The trusted side of a Python unit: runs each task's own test code against a sample.

Runs inside the sandbox (stdlib only), one process per unit of samples. The sample's code
never runs here: ``vibes_child.py`` runs it in a forked process of its own, and the test
code here calls it through a stub (``candidate``) that sends the arguments as data and
decodes the answer as data (``vibes_wire``). So whatever the sample does -- exit, patch
``assert`` or builtins, replace the checker, print fake success, return an object equal to
everything -- it cannot make this process believe a test passed: a verdict is "passed"
only when the test code returned here, on values only this process built, and nothing
ended the sample's run on the way (a timeout, an exit, a refused call is final even where
the test's own ``except:`` caught it).

Input: ``unit.json`` in the working directory, read and removed before any sample's
process starts (so a sample finds no test, expected value or other sample's code on
disk); stdin: a token only the host knows, which starts every line this process reports
on a private copy of its stdout (fd 1 itself is pointed at stderr, so nothing the test
code prints can break a line). Output: ``<token> <json verdict>`` per sample; none for a
sample whose end depended on its neighbours (killed from outside, this process out of
memory): the host then evaluates it alone.
"""

import builtins
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vibes_plus as plus  # noqa: E402
import vibes_wire as wire  # noqa: E402

sys.path.remove(HERE)

KEEP = 4096
# Names a test may use without importing them (MBPP's tests lean on the program's
# imports): a standard module is imported here, never taken from the sample.
STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) or frozenset(
    ("math", "re", "string", "collections", "itertools", "functools", "heapq", "bisect",
     "operator", "random", "sys", "decimal", "fractions", "statistics", "datetime", "copy",
     "json", "typing", "array", "cmath")
)  # fmt: skip


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
    """The socket to one sample's process. ``fatal`` is the first thing that ended the
    sample's run (timeout, exit, refusal, an answer that is not data): the verdict
    whatever the test did with the exception afterwards."""

    def __init__(self, sock, end_by):
        self.sock = sock
        self.end_by = end_by  # the run's deadline
        self.deadline = end_by  # the current call's (an EvalPlus input has its own)
        self.fatal = None
        self.first_exc = None  # the first exception the sample raised, for the detail
        self.calls = 0

    def end(self, exc):
        if self.fatal is None:
            self.fatal = exc
        return exc

    def limit(self, seconds):
        """Give what follows ``seconds`` at most (within the run's deadline), enforced by
        the socket's timeout and by SIGALRM for the test code's own time."""
        self.deadline = min(self.end_by, time.monotonic() + seconds)
        signal.setitimer(signal.ITIMER_REAL, max(self.deadline - time.monotonic(), 0) + 0.05)

    def request(self, message):
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise self.end(SampleTimeout())
        self.sock.settimeout(remaining)
        try:
            self.sock.sendall(wire.dumps(message))
            reply = wire.recv(self.sock)
        except TimeoutError:
            raise self.end(SampleTimeout()) from None
        except (EOFError, OSError):
            raise self.end(SampleGone()) from None
        except wire.WireError as exc:
            raise self.end(SampleError(f"the sample's answer is not data: {exc}")) from None
        if type(reply) is not dict:
            raise self.end(SampleError("the sample's answer is not data"))
        return reply

    def meta(self, message):
        """An answer about a value: ``["missing"]``, ``["callable", handle?]``, ``["value",
        data]`` decoded, or a list of strings (``output``)."""
        reply = self.request(message)
        if "meta" not in reply:
            return self.value(message, reply)
        meta = reply["meta"]
        if type(meta) is not list or not meta:
            raise self.end(SampleError("the sample's answer is not data"))
        if meta[0] == "value" and len(meta) == 2:
            return ["value", self.value(message, {"ok": meta[1]})]
        if meta[0] == "callable" and (len(meta) == 1 or type(meta[1]) is int):
            return meta
        if meta == ["missing"] or all(type(m) is str for m in meta):
            return meta
        raise self.end(SampleError("the sample's answer is not data"))

    def value(self, message, reply=None):
        """The decoded answer to ``message``, or the sample's exception raised here."""
        self.calls += 1
        reply = self.request(message) if reply is None else reply
        if "ok" in reply:
            try:
                return wire.decode(reply["ok"], self.proxy)
            except (wire.WireError, RecursionError) as exc:
                raise self.end(SampleError(f"the sample's answer is not data: {exc}")) from None
        if reply.get("stop") and message.get("op") == "next":
            raise StopIteration  # the end of an iterator the test is reading
        info = reply.get("exc")
        if reply.get("stop"):
            info = {"type": "StopIteration", "msg": ""}
        if type(info) is not dict:
            raise self.end(SampleError("the sample's answer is not data"))
        raise self.exception(info)

    def exception(self, info):
        name, msg = str(info.get("type", "")), str(info.get("msg", ""))
        if self.first_exc is None:
            self.first_exc = (name, msg)
        if name == "PolicyBlocked":
            return self.end(SamplePolicy(msg))
        if name in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
            return self.end(SampleExit(f"{name}({msg})" if msg else name))
        if info.get("sending"):  # its answer could not be sent: too large
            return self.end(SampleError(f"the sample's answer cannot be sent: {name}: {msg}"))
        cls = getattr(builtins, name, None)
        # StopIteration here would end whatever loop of the test's called the stub (a
        # `map`, `all` over it) as if it were done: the sample's error, never a stop.
        stops = (StopIteration, StopAsyncIteration)
        if (
            info.get("builtin") is True and isinstance(cls, type)
            and issubclass(cls, Exception) and not issubclass(cls, stops)
        ):  # fmt: skip
            with contextlib.suppress(Exception):
                exc = cls(msg)
                exc.vibes_sample = True
                return exc
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
    """A function or object that lives in the sample's process. It never decides a
    comparison: equal only to itself, and membership is tested here on the items it
    yields (the sample never sees what the test looks for)."""

    _OWN = ("_chan", "_name", "_handle", "__name__")

    def __init__(self, chan, name=None, handle=None):
        own = (chan, name, handle, name or "<sample object>")
        for key, value in zip(self._OWN, own):  # noqa: B905 - the same length
            object.__setattr__(self, key, value)

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

    def __setattr__(self, name, value):
        """The test building the sample's objects (MBPP 367, 927: `root.left = Node(2)`)."""
        if name in self._OWN or self._handle is None:
            raise AttributeError(name)
        self._op("setattr", name=name, value=self._chan.encode(value))

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
        return any(item is key or item == key for item in self)

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
    """The test's globals: its own names, the trusted prompt's, the builtins, the standard
    modules; a name found nowhere here is looked up in the sample's module (MBPP tests call
    functions by name)."""

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
        if name in STDLIB:  # the program imported it: the real one, from here
            value = __import__(name)
        else:
            value = Remote(self.chan, name=name) if kind[0] == "callable" else kind[1]
        self[name] = value
        return value


# -- the fork server -------------------------------------------------------------------------


class ForkServerLost(RuntimeError):
    """The fork server stopped answering or ended."""


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
                raise ForkServerLost("the fork server stopped answering")
            self.ctrl.settimeout(left)
            try:
                data = self.ctrl.recv(1 << 16)
            except TimeoutError:
                continue
            except OSError as exc:
                raise ForkServerLost(f"the fork server is gone: {exc}") from None
            if not data:
                raise ForkServerLost("the fork server ended")
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


def sweep(folder):
    """Remove whatever a sample left in the work dir (the fork server removes its own
    folder): the next sample starts with the disk as the first one did."""
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)


# -- one sample ------------------------------------------------------------------------------

CURRENT = []  # the channel of the sample running now, for the alarm


def on_alarm(signum, frame):
    chan = CURRENT[-1] if CURRENT else None
    raise chan.end(SampleTimeout()) if chan else SampleTimeout()


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
        self.sample_names = [str(n) for n in spec.get("sample_names") or ()]
        self._cases = None

    def line(self, lineno):
        lines = self.test_source.splitlines()
        return lines[lineno - 1].strip() if lineno and 0 < lineno <= len(lines) else ""

    def cases(self, phase):
        """EvalPlus: each input of ``phase`` (base, plus) with the canonical solution's
        output and time, computed here (trusted code) once per unit, a phase when first
        needed (a sample that fails the base never waits for the plus outputs)."""
        if self._cases is None:
            ns = {}
            exec(compile(self.plus["canonical"], f"<canonical {self.tid}>", "exec"), ns)
            self._cases = {"fn": ns[self.entry]}
        if phase not in self._cases:
            self._cases[phase] = self._run(self._cases["fn"], phase)
        return self._cases[phase]

    def _run(self, fn, phase):
        import copy

        out = []
        for args in self.plus[phase]:
            args = wire.decode(args)
            copied = copy.deepcopy(args)
            start = time.perf_counter()
            value = fn(*copied)
            spent = time.perf_counter() - start
            exp = plus.expected_value(self.plus["dataset"], self.entry, value)
            out.append((args, exp, spent, transfer_time(args, exp)))
        return out


def transfer_time(args, exp):
    """What moving these arguments and an answer like the expected one between the two
    processes takes here, with margin: EvalPlus calls in-process, so its limit is for the
    computation alone (HumanEval/130's answers are 12 MB of JSON)."""
    import copy

    start = time.perf_counter()
    try:
        copy.deepcopy(args)
        wire.decode(json.loads(json.dumps(wire.encode([args, exp]))))
    except Exception:  # not data: the sample's answer could not be either
        return 0.0
    return 3 * (time.perf_counter() - start)


def judge(task, chan, code):
    """Run the sample's code in its process and the task's test here; raises Verdict."""
    load(chan, code)
    g = Globals(chan)
    g["__name__"] = "__vibes_test__"
    exec(task.prompt, g)
    for name in [task.entry, *task.sample_names]:
        if name:
            g[name] = Remote(chan, name=name)
    exec(task.setup, g)
    try:
        exec(task.test, g)
    except AssertionError as exc:
        line = task.line(test_line(exc, task.test_file))
        text = f"assertion failed: {line}" if line else "assertion failed"
        raise Verdict("failed", text) from None


def load(chan, code):
    try:
        chan.value({"op": "load", "code": code})
    except SampleError as exc:
        raise Verdict("failed", f"while loading: {exc}") from None
    except SyntaxError as exc:
        raise Verdict("compile_error", f"SyntaxError: {exc}") from None


def judge_plus(task, phase, chan, code):
    """EvalPlus: the sample's outputs on one phase's inputs, each within its own limit
    (EvalPlus's: from the canonical solution's time), judged as EvalPlus judges them."""
    import copy

    load(chan, code)
    candidate = Remote(chan, name=task.entry)
    cases = task.cases(phase)
    limits, _ = plus.time_limits([c[2] for c in cases], *task.plus["time"])
    atol = float(task.plus.get("atol") or 0)
    for n, ((args, exp, _, transfer), limit) in enumerate(zip(cases, limits)):  # noqa: B905
        chan.limit(limit + transfer)
        out = candidate(*copy.deepcopy(args))
        try:
            ok, atol = plus.judge(task.plus["dataset"], task.entry, args, out, exp, atol)
        except Exception:  # EvalPlus: an oracle that raises on this output fails it
            ok = False
        if not ok:
            raise Verdict("failed", f"{phase} input {n}: expected {exp!r:.200}, got {out!r:.200}")


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
    if isinstance(exc, ForkServerLost):
        return "crash", f"the sample stopped the fork server ({exc})"
    if isinstance(exc, MemoryError):
        return "memory", "MemoryError"
    if isinstance(exc, RecursionError) and chan.first_exc is None:
        return "failed", f"RecursionError: {exc}"
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return "failed", text[:500]


def neighbour_dependent(exc, ended):
    """Whether a run's end may have come from the unit rather than the sample: its
    process killed by a signal we did not send (the cgroup's OOM killer), or this
    process out of memory. Such a sample is evaluated alone instead."""
    if isinstance(exc, SampleGone):
        return ended.get("signal") == signal.SIGKILL
    if isinstance(exc, ForkServerLost):  # seccomp keeps batched samples off it
        return True
    return isinstance(exc, MemoryError) and not getattr(exc, "vibes_sample", False)


class Run:
    """One process of the sample: what ended it, its output, how its process ended."""

    def __init__(self, zyg, sample, unit, budget_s):
        self.zyg, self.sample, self.unit, self.budget_s = zyg, sample, unit, budget_s
        self.start = time.monotonic()
        self.out = self.err = ""
        self.ended = {}

    def __call__(self, work):
        """Run ``work(chan)`` against a fresh process of the sample; returns self with
        ``outcome`` (None: it returned, else what ended it) and ``chan``."""
        sock, pid = self.zyg.spawn(self.sample["id"], self.unit["child_limits"],
                                   self.unit["policy"])  # fmt: skip
        self.chan = chan = Channel(sock, self.start + self.budget_s)
        CURRENT.append(chan)
        try:
            self.outcome = self._work(work, chan)
            self._output(chan)
        finally:
            CURRENT.pop()
            sock.close()
            try:
                self.ended = self.zyg.finish(self.sample["id"], pid)
            except ForkServerLost as exc:  # alone, only the sample's process reaches it
                self.outcome = self.outcome or exc
        return self

    def _work(self, work, chan):
        try:
            try:
                chan.limit(self.budget_s)
                work(chan)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except BaseException as exc:  # whatever the test or the sample did
            return chan.fatal or exc
        return chan.fatal

    def _output(self, chan):
        """The sample's captured prints; asking for them decides nothing."""
        if isinstance(self.outcome, (SampleGone, SampleTimeout)):
            return
        fatal = chan.fatal
        with contextlib.suppress(BaseException):
            chan.deadline = time.monotonic() + 1.0
            self.out, self.err = chan.meta({"op": "output"})[:2]
        chan.fatal = fatal


def run_sample(zyg, tasks, sample, unit):
    """The verdict line of ``sample``; None where it must be evaluated alone."""
    task = tasks[sample["task"]]
    random.seed()  # a neighbour's test cannot have drawn this one's "random" inputs
    if task.plus:
        return run_plus(zyg, task, sample, unit)
    run = Run(zyg, sample, unit, float(unit["timeout_s"]))
    run(lambda chan: judge(task, chan, sample["code"]))
    return verdict(sample, unit, [run])


def run_plus(zyg, task, sample, unit):
    """EvalPlus: the base inputs, then (if they pass) the extra ones in a fresh process,
    as EvalPlus runs them; the sample passes when both do."""
    runs, status = [], {}
    for phase in ("base", "plus"):
        cases = task.cases(phase)  # the solution's own outputs: not the sample's time
        _, budget = plus.time_limits([c[2] for c in cases], *task.plus["time"])
        run = Run(zyg, sample, unit, budget + sum(c[3] for c in cases))
        runs.append(run(lambda chan, p=phase: judge_plus(task, p, chan, sample["code"])))
        status[phase] = "pass" if run.outcome is None else "fail"
        if run.outcome is not None:
            break
    line = verdict(sample, unit, runs)
    if line is not None:
        line["evalplus"] = status
    return line


def verdict(sample, unit, runs):
    last = runs[-1]
    reason, detail = "passed", ""
    if last.outcome is not None:
        if len(unit["samples"]) > 1 and neighbour_dependent(last.outcome, last.ended):
            return None
        reason, detail = classify(last.outcome, last.chan, last.ended)
    return {
        "id": sample["id"], "passed": reason == "passed", "reason": reason,
        "detail": str(detail)[:1000], "wall_s": time.monotonic() - runs[0].start,
        "calls": sum(r.chan.calls for r in runs), "stdout": str(last.out)[:KEEP],
        "stderr": str(last.err)[:KEEP],
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


def private_stdout():
    """A copy of stdout for the verdict lines only; fd 1 then goes to stderr, so that
    the test code's prints (of values the sample chose) never reach the host's lines."""
    report = os.fdopen(os.dup(1), "w", encoding="ascii", closefd=True)
    os.dup2(2, 1)
    return report


def main():
    token = sys.stdin.buffer.read().decode().strip()
    import ctypes

    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE: samples cannot read our memory
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # no KeyboardInterrupt for a test to catch
    signal.signal(signal.SIGALRM, on_alarm)
    report = private_stdout()
    unit = take_unit("unit.json")
    tasks = {tid: Task(tid, spec) for tid, spec in unit["tasks"].items()}
    zyg = Zygote(unit["python"], os.getcwd())
    sweep(os.getcwd())  # our own files too: both processes have read what they need
    if unit.get("require_seccomp") and not zyg.seccomp:
        print(
            f"{token} " + json.dumps({"fatal": "no seccomp in this sandbox"}),
            file=report,
            flush=True,
        )
        return
    for sample in unit["samples"]:
        line = run_sample(zyg, tasks, sample, unit)
        sweep(os.getcwd())
        if line is not None:
            print(f"{token} " + json.dumps(line), file=report, flush=True)  # ASCII: safe


if __name__ == "__main__":
    main()
