"""One sample of a kernel task, from source to timings: static checks, hardware gate, the
task's build (``make test``), the solution compiled on its own for the symbol checks, then
timing runs in a session that holds the device (CUDA: a GPU held exclusively; CPU: a
machine-wide lock, so two timing runs never share the cores, even from two evaluations).

Builds run without a device, so on a machine with one GPU many samples build in parallel
while their timing runs take turns; on a machine without a GPU a CUDA sample still gets
its compile verdict and its symbol check before it is classified ``no_device``.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shlex
import shutil
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from vibes_eval.benchmarks.common.rules import Violation
from vibes_eval.benchmarks.kernels.checks import cheat, objects, symbols
from vibes_eval.benchmarks.kernels.checks import source as anticheat
from vibes_eval.benchmarks.kernels.config import KernelsConfig
from vibes_eval.benchmarks.kernels.measure import hardware
from vibes_eval.benchmarks.kernels.measure.hardware import Gate
from vibes_eval.benchmarks.kernels.measure.timing import ChannelReport, parse_channel
from vibes_eval.benchmarks.kernels.prompting import HEADER_SUFFIXES, is_expert
from vibes_eval.benchmarks.kernels.tasks import KernelTask
from vibes_eval.core.errors import DeviceUnavailable, RunnerError
from vibes_eval.core.filelock import locked
from vibes_eval.core.runner import DeviceNeed, SandboxPolicy, Session, SessionSpec, TaskRunner
from vibes_eval.core.types import ExecutionResult, Limits, Sample
from vibes_eval.paths import cache_dir
from vibes_eval.runners.local import DEFAULT_PATH

# Early verdicts (besides the core reasons).
ANTI_CHEAT = "anti_cheat"
ARCH_UNSUPPORTED = "arch_unsupported"
NO_DEVICE = "no_device"
UNSUPPORTED = "unsupported_backend"

IMPLEMENTED = frozenset({"class1_make", "cpu_make"})
APART = ".vibes_apart"
SOLUTION_OBJECT = "solution.o"  # what a task's Makefile builds the solution's unit into
MAKEFILES = frozenset({"Makefile", "makefile", "GNUmakefile"})
MAX_PRODUCTS_BYTES = 512 << 20
CPU_TIMING = threading.Lock()  # one CPU timing run at a time in this process

# What a CUDA program prints when there is no usable GPU or no code for it.
NO_DEVICE_SIGNS = ("driver version is insufficient", "no cuda-capable device",
                   "cudaerrornodevice", "all cuda-capable devices are busy",
                   "cudaerrorinsufficientdriver", "cuda driver is a stub")  # fmt: skip
ARCH_SIGNS = (
    "no kernel image is available",
    "invalid device function",
    "unsupported gpu architecture",
    "is not defined for option 'gpu-architecture'",
)


@dataclass
class RunObs:
    """One timing run of the built harness."""

    nonce: str
    result: ExecutionResult
    channel: ChannelReport | None = None  # None: the harness does not speak the channel
    channel_missing: bool = False  # it should have written one and did not


@dataclass
class Apart:
    """The solution compiled on its own, and what its object showed."""

    found: list[Violation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    broken: ExecutionResult | None = None  # it did not compile (a compile_error)
    obj: bytes | None = None  # the checked solution.o, which the build links as it is
    symbols: list[tuple[str, str]] = field(default_factory=list)  # its defined globals


@dataclass
class KernelRun:
    """What ``run_task`` observed, for ``evaluate``."""

    outcome: str = ""  # an early verdict; "" when the runs decide
    detail: str = ""
    gate: Gate | None = None
    build: ExecutionResult | None = None
    compiled: bool | None = None  # None: no build attempted
    runs: list[RunObs] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    build_s: float = 0.0
    run_s: float = 0.0
    reference_only: bool = False  # the solution is the task's own expert: no model code ran


@dataclass(frozen=True)
class Toolchain:
    """Compilers found on this machine, and where sandboxes must let them be read."""

    cxx: str
    nvcc: str
    path: str  # PATH for commands in sessions
    readonly: tuple[str, ...]

    @classmethod
    def detect(cls) -> Toolchain:
        cxx = shutil.which("g++") or shutil.which("c++") or "g++"
        nvcc = shutil.which("nvcc") or ""
        dirs = [str(Path(nvcc).parent)] if nvcc else []
        readonly = []
        if nvcc:
            real = Path(nvcc).resolve()
            readonly.append(str(real.parent.parent))  # the toolkit (a wrapper may point there)
            lib = symbols.cudart_static()
            if lib:
                readonly.append(str(Path(lib).parent.parent))
        path = ":".join(dict.fromkeys([*dirs, *DEFAULT_PATH.split(":")]))
        return cls(cxx, nvcc, path, tuple(dict.fromkeys(readonly)))


class Pipeline:
    def __init__(self, config: KernelsConfig, toolchain: Toolchain) -> None:
        self.config = config
        self.tools = toolchain
        self._ref_builds: dict[tuple[str, str], str | None] = {}  # (task, arch) -> error
        self._lock = threading.Lock()

    # -- the whole way ------------------------------------------------------------------

    def run(self, task: KernelTask, sample: Sample, runner: TaskRunner) -> KernelRun:
        """Raises: RunnerError for infrastructure failures (an infra_error verdict)."""
        out = KernelRun()
        found = self.static_violations(task, sample.completion)
        if found:
            return self._early(out, ANTI_CHEAT, found[0].text(), found)
        if task.backend not in IMPLEMENTED:
            return self._early(out, UNSUPPORTED, f"backend {task.backend} is not supported yet")
        out.gate = hardware.gate(task)
        if out.gate.status == ARCH_UNSUPPORTED:
            return self._early(out, ARCH_UNSUPPORTED, out.gate.detail)
        files = task.read_files()
        expert = files.get(_expert_file(task))
        out.reference_only = expert is not None and expert == sample.completion.encode()
        files[task.solution_file] = sample.completion.encode()
        spec = SessionSpec(label=_label(task), files=files, policy=self.policy(task))
        with runner.session(spec) as session:
            self._build_and_check(task, sample.completion, runner, session, out)
            if out.outcome:
                return out
            if not task.needs_gpu:
                with cpu_timing():
                    self._time(task, runner, session, out)
                return out
            if out.gate.status == NO_DEVICE:
                return self._early(out, NO_DEVICE, out.gate.detail)
            products = self._products(runner, session, set(files))
        self._time_on_gpu(task, runner, {**files, **products}, out)
        return out

    @staticmethod
    def _early(out: KernelRun, outcome: str, detail: str,
               found: list[Violation] | None = None) -> KernelRun:  # fmt: skip
        out.outcome, out.detail = outcome, detail
        if found and len(found) > 1:
            out.notes.append("also: " + "; ".join(v.text() for v in found[1:]))
        return out

    # -- static checks --------------------------------------------------------------------

    def static_violations(self, task: KernelTask, source: str) -> list[Violation]:
        if not self.config.enforce_policy:
            return []
        ac = task.spec.anti_cheat
        allowed = anticheat.local_includes(task.original_solution()) | {task.solution_file}
        found = anticheat.check_source(
            source,
            blocked=ac.blocked_patterns,
            required=ac.required_patterns,
            cuda=task.needs_gpu,
            task_files=task.file_names,
            allowed_files=allowed,
            min_code_lines=self.config.min_code_lines,
        )
        bare = anticheat.strip_source(source)
        if not task.needs_gpu and re.search(r"\b(asm|__asm__|__asm)\b", bare):
            found.append(cheat("inline_asm", "inline assembly in a CPU kernel"))
        return found

    # -- sessions -------------------------------------------------------------------------

    def policy(self, task: KernelTask) -> SandboxPolicy:
        paths = [task.root, *self.tools.readonly]
        return SandboxPolicy(readonly_paths=tuple(Path(p) for p in dict.fromkeys(paths)))

    def env(self, task: KernelTask) -> dict[str, str]:
        root = Path(task.root)
        env = {"PATH": self.tools.path, "KH_ROOT": str(root)}
        sources = root / "reference_sources"
        if sources.is_dir():  # CUDAHercules's libraries, by the names its Makefiles use
            env.update(CUTLASS_DIR=str(sources / "cutlass"), TK_DIR=str(sources / "ThunderKittens"),
                       DEEPGEMM_DIR=str(sources / "deep_gemm"))  # fmt: skip
        env.update(task.spec.runner.env)
        return env

    def limits(self, task: KernelTask) -> Limits:
        base = self.config.limits
        return base.model_copy(
            update={"timeout_s": task.spec.runner.timeout_sec * self.config.timeout_scale}
        )

    # -- build ----------------------------------------------------------------------------

    def _build_and_check(
        self, task: KernelTask, source: str, runner: TaskRunner, session: Session, out: KernelRun
    ) -> None:
        gate = out.gate
        assert gate is not None
        start = time.monotonic()
        retarget = gate.arch_vars if task.group in ("general", "other") else {}
        if task.needs_gpu and gate.status == "ok" and task.group in ("general", "other"):
            error = self._ref_build(task, runner, session, retarget)
            if error is not None:
                out.build_s = time.monotonic() - start
                self._early(out, ARCH_UNSUPPORTED, f"the reference does not build for "
                            f"sm_{gate.sm}: {error}")  # fmt: skip
                return
        apart = Apart()
        if self.config.symbol_check:
            apart = self.check_apart(task, runner, gate, source, retarget)
            out.notes += apart.notes
        if apart.broken is not None:  # the solution's own unit does not compile
            out.build, out.compiled, out.build_s = apart.broken, False, time.monotonic() - start
            self._early(out, "compile_error", first_error(apart.broken))
            return
        if apart.found:
            out.build_s = time.monotonic() - start
            self._early(out, ANTI_CHEAT, apart.found[0].text(), apart.found)
            return
        self._build(task, runner, session, out, retarget, apart)
        out.build_s = time.monotonic() - start

    def _build(self, task: KernelTask, runner: TaskRunner, session: Session, out: KernelRun,
               retarget: dict[str, str], apart: Apart) -> None:  # fmt: skip
        """The task's build; with a checked object, that object is linked as it is (make
        is told not to remake it) and checked against the rest of the program."""
        command = _make(task.spec.build.cmd, retarget)
        if apart.obj is not None:
            runner.write_files(session, {SOLUTION_OBJECT: apart.obj})
            command += ["-o", SOLUTION_OBJECT]
        out.build = runner.execute(session, command, self.limits(task), env=self.env(task))
        out.compiled = out.build.ok
        if not out.build.ok:
            self._early(out, "compile_error", first_error(out.build))
            return
        if apart.obj is None:
            return
        if runner.read_file(session, SOLUTION_OBJECT) != apart.obj:
            raise RunnerError("the task's build remade solution.o: not the object checked")
        found = objects.link_violations(apart.symbols, self._others(task, runner, session),
                                        strict=not task.needs_gpu)  # fmt: skip
        if found:
            self._early(out, ANTI_CHEAT, found[0].text(), found)

    def _others(self, task: KernelTask, runner: TaskRunner,
                session: Session) -> list[tuple[str, str]]:  # fmt: skip
        """``nm -g`` of every object of the build but the solution's."""
        script = (f"find . -name '*.o' ! -path './{SOLUTION_OBJECT}' ! -path './{APART}/*' "
                  "-exec nm -g {} +")  # fmt: skip
        listing = runner.execute(session, ["sh", "-c", script], self.limits(task),
                                 env=self.env(task))  # fmt: skip
        if not listing.ok:
            raise RunnerError(f"nm failed on the build's objects: {listing.stderr[-200:]}")
        return symbols.parse_nm(listing.stdout)

    def _ref_build(
        self, task: KernelTask, runner: TaskRunner, session: Session, arch: dict[str, str]
    ) -> str | None:
        """The task's own reference built for this GPU (`make ref`), once per task: None
        when it builds (or the build command is not make)."""
        if not task.spec.build.cmd.strip().startswith("make"):
            return None
        key = (task.fingerprint(), arch.get("ARCH", ""))
        with self._lock:
            if key in self._ref_builds:
                return self._ref_builds[key]
        result = runner.execute(session, _make("make ref", arch), self.limits(task),
                                env=self.env(task))  # fmt: skip
        error = None if result.ok else first_error(result)
        with self._lock:
            self._ref_builds[key] = error
        return error

    # -- the solution on its own ---------------------------------------------------------

    def check_apart(self, task: KernelTask, runner: TaskRunner, gate: Gate, source: str,
                    retarget: dict[str, str]) -> Apart:  # fmt: skip
        """Compile the solution once, in a session that holds only what it is built from
        (its file, its unit, the Makefile, the task's headers but the expert's; no build
        products), and check that object: what it uses and defines, its instructions and
        sections. Where the task has its own unit and a Makefile rule for solution.o, that
        object is the one the build links (``Apart.obj``)."""
        spec = SessionSpec(label=_label(task), files=_clean_files(task, source),
                           policy=self.policy(task))  # fmt: skip
        with runner.session(spec) as session:
            return self._check_in(task, runner, session, gate, source, retarget)

    def _check_in(self, task: KernelTask, runner: TaskRunner, session: Session, gate: Gate,
                  source: str, retarget: dict[str, str]) -> Apart:  # fmt: skip
        tu = self._apart_unit(task, runner, session)
        pinned = self._pinnable(task, runner, session, tu, retarget)
        obj = SOLUTION_OBJECT if pinned else f"{APART}/solution.o"
        cmd = _make(f"make {obj}", retarget) if pinned else self._apart_cmd(task, gate, tu, obj)
        compiled = runner.execute(session, cmd, self.limits(task), env=self.env(task))
        if not compiled.ok:
            if pinned:
                return Apart(broken=compiled)
            if tu.startswith(APART):  # no TU of the task's own: does its naive one compile?
                return Apart(notes=["symbol check skipped: the solution does not compile on "
                                    "its own (nor may the task's)"])  # fmt: skip
            return Apart(found=[cheat("apart", "does not compile on its own: " +
                                      first_error(compiled))])  # fmt: skip
        apart = self._object_checks(task, runner, session, gate, tu, obj, source)
        if pinned:
            apart.obj = runner.read_file(session, obj)
        elif task.channel:
            apart.notes.append("the object checked is not the one linked (no solution.o rule)")
        return apart

    def _pinnable(self, task: KernelTask, runner: TaskRunner, session: Session, tu: str,
                  retarget: dict[str, str]) -> bool:  # fmt: skip
        """Whether the task's own Makefile builds the solution's unit into solution.o."""
        if tu.startswith(APART) or not task.spec.build.cmd.strip().startswith("make"):
            return False
        dry = runner.execute(session, _make(f"make -n {SOLUTION_OBJECT}", retarget),
                             self.limits(task), env=self.env(task))  # fmt: skip
        return dry.ok and tu in dry.stdout

    def _apart_cmd(self, task: KernelTask, gate: Gate, tu: str, obj: str) -> list[str]:
        if task.needs_gpu:
            return [self.tools.nvcc or "nvcc", "-std=c++17", "-I.", f"-arch=sm_{gate.sm}",
                    "-keep", "-keep-dir", APART, "-c", tu, "-o", obj]  # fmt: skip
        return [self.tools.cxx, "-std=c++17", "-O2", "-march=native", "-fopenmp", "-I.",
                "-c", tu, "-o", obj]  # fmt: skip

    def _object_checks(self, task: KernelTask, runner: TaskRunner, session: Session,
                       gate: Gate, tu: str, obj: str, source: str) -> Apart:  # fmt: skip
        """What the object uses and defines, its instructions and sections."""
        cuda = task.needs_gpu
        limits, env = self.limits(task), self.env(task)
        undefined = runner.execute(session, ["nm", "-u", obj], limits, env=env)
        defined = runner.execute(session, ["nm", "-g", "--defined-only", obj], limits, env=env)
        if not (undefined.ok and defined.ok):
            raise RunnerError(f"nm failed on the solution's object: {undefined.stderr[-200:]}")
        extra = list(self.config.extra_allowed_symbols)
        needed = [n for _, n in symbols.parse_nm(undefined.stdout)]
        if (
            cuda
            and "exit" in needed
            and self._exit_only_in_device_stubs(runner, session, obj, limits, env, source)
        ):
            extra.append("exit")
        mine = symbols.parse_nm(defined.stdout)
        # Interposition first: the most specific (a replaced clock also calls the real one).
        found = symbols.defined_violations([n for t, n in mine if t not in "Uvw"], cuda=cuda)
        found += symbols.undefined_violations(needed, cuda=cuda, extra=extra)
        found += self._instructions(runner, session, obj, limits, env)
        found += self._sections(runner, session, obj, limits, env, cuda)
        if cuda:
            found += self._device(task, runner, session, gate, tu, obj)
        return Apart(found=found, symbols=mine)

    def _sections(self, runner: TaskRunner, session: Session, obj: str, limits: Limits,
                  env: Mapping[str, str], cuda: bool) -> list[Violation]:  # fmt: skip
        """No initializer or finalizer sections (work before or after main)."""
        out = [runner.execute(session, [*tool, obj], limits, env=env)
               for tool in (["readelf", "-SW"], ["readelf", "-rW"], ["objdump", "-t"])]  # fmt: skip
        if not all(r.ok for r in out):
            raise RunnerError(f"readelf failed on the solution's object: {out[0].stderr[-200:]}")
        return objects.init_violations(*(r.stdout for r in out), cuda=cuda)

    def _device(self, task: KernelTask, runner: TaskRunner, session: Session, gate: Gate,
                tu: str, obj: str) -> list[Violation]:  # fmt: skip
        """Device code's calls, from the PTX nvcc keeps (a second compile, for that alone,
        when the object came from the task's Makefile)."""
        limits, env = self.limits(task), self.env(task)
        if not obj.startswith(APART):
            runner.execute(session, self._apart_cmd(task, gate, tu, f"{APART}/ptx.o"), limits,
                           env=env)  # fmt: skip
        ptx = runner.execute(
            session, ["sh", "-c", f"cat {APART}/*.ptx 2>/dev/null | grep -E '\\.extern'"],
            limits, env=env,
        )  # fmt: skip
        return symbols.device_violations(ptx.stdout)

    def _apart_unit(self, task: KernelTask, runner: TaskRunner, session: Session) -> str:
        """The translation unit that holds the solution alone: the task's own
        (`solution_tu.cu` / `solution_tu.cpp`), else one that includes the solution file."""
        suffix = ".cu" if task.needs_gpu else ".cpp"
        own = f"solution_tu{suffix}"
        if own in task.file_names:
            return own
        unit = f"{APART}/apart{suffix}"
        include = PurePosixPath(task.solution_file).as_posix()
        runner.write_files(session, {unit: f'#include "{include}"\n'})
        return unit

    @staticmethod
    def _exit_only_in_device_stubs(
        runner: TaskRunner,
        session: Session,
        obj: str,
        limits: Limits,
        env: Mapping[str, str],
        source: str,
    ) -> bool:
        """nvcc gives every non-inline `__device__` function a host stub whose body is a
        call to exit (it can never run on the host). True when every call to exit in the
        object sits in such a stub: the function calling it is declared `__device__` (and
        not `__host__`) in the solution."""
        pattern = "^[0-9a-f]+ <|R_X86_64_[A-Z0-9_]+[[:space:]]+exit([-+@]|$)"
        script = f"objdump -drC --no-show-raw-insn {shlex.quote(obj)} | grep -E '{pattern}'"
        listing = runner.execute(session, ["sh", "-c", script], limits, env=env).stdout
        callers, current = set(), ""
        for line in listing.splitlines():
            head = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
            if head:
                current = head.group(1)
            elif "exit" in line:
                callers.add(current)
        bare = anticheat.strip_source(source)
        return bool(callers) and all(_device_only(name, bare) for name in callers)

    @staticmethod
    def _instructions(
        runner: TaskRunner, session: Session, obj: str, limits: Limits, env: Mapping[str, str]
    ) -> list[Violation]:
        """System call instructions in the solution's host code (inline assembly)."""
        script = (f"objdump -d --no-show-raw-insn {shlex.quote(obj)} | "
                  "grep -E '\\s(syscall|sysenter)\\b|\\sint\\s+\\$0x80' | head -3")  # fmt: skip
        result = runner.execute(session, ["sh", "-c", script], limits, env=env)
        lines = [" ".join(x.split()[1:]) for x in result.stdout.splitlines() if x.strip()]
        if lines:
            return [cheat("syscall_instruction", "system call instruction in host code: " +
                              "; ".join(lines))]  # fmt: skip
        return []

    # -- products and timing -------------------------------------------------------------

    @staticmethod
    def _products(runner: TaskRunner, session: Session, written: set[str]) -> dict[str, bytes]:
        """Files the build made, to carry into the session that holds the GPU."""
        listing = runner.execute(
            session, ["find", ".", "-type", "f", "-not", "-path", f"./{APART}/*"],
            Limits(timeout_s=30),
        )  # fmt: skip
        products: dict[str, bytes] = {}
        total = 0
        for line in listing.stdout.splitlines():
            rel = line.removeprefix("./")
            if not rel or rel in written or rel.startswith(("tmp/", ".kh-")):
                continue
            data = runner.read_file(session, rel)
            total += len(data)
            if total > MAX_PRODUCTS_BYTES:
                raise RunnerError("the build's outputs exceed 512 MiB")
            products[rel] = data
        return products

    def _time_on_gpu(
        self, task: KernelTask, runner: TaskRunner, files: dict[str, bytes], out: KernelRun
    ) -> None:
        spec = SessionSpec(label=_label(task), files=files, policy=self.policy(task),
                           device=DeviceNeed())  # fmt: skip
        try:
            with runner.session(spec) as session:
                runner.execute(session, ["chmod", "-R", "u+x", "."], Limits(timeout_s=30))
                self._time(task, runner, session, out)
        except DeviceUnavailable as exc:  # raised by the session's start
            self._early(out, NO_DEVICE, str(exc))

    def _time(self, task: KernelTask, runner: TaskRunner, session: Session,
              out: KernelRun) -> None:  # fmt: skip
        """``repeats`` runs of the harness, each with a fresh nonce and results file; stops
        at the first run that does not pass."""
        start = time.monotonic()
        command = shlex.split(task.spec.execute.cmd)
        if not task.needs_gpu:
            command = self._pinned(command)
        for _ in range(max(1, self.config.repeats)):
            obs = self._one_run(task, runner, session, command)
            out.runs.append(obs)
            if not run_passed(task, obs):
                break
        out.run_s = time.monotonic() - start

    def _pinned(self, command: list[str]) -> list[str]:
        """A CPU task's run on ``cpu_threads`` CPUs, whatever threads the solution starts
        (OpenMP sizes its team by the CPUs it may use, and the kernel cannot leave them)."""
        taskset = shutil.which("taskset")
        if taskset is None:
            raise RunnerError("taskset (util-linux) is needed to pin CPU timing runs")
        cpus = sorted(os.sched_getaffinity(0))[: self.config.cpu_threads]
        return [taskset, "-c", ",".join(map(str, cpus)), *command]

    def _one_run(self, task: KernelTask, runner: TaskRunner, session: Session,
                 command: list[str]) -> RunObs:  # fmt: skip
        nonce = secrets.token_hex(16)
        name = f".kh-{secrets.token_hex(12)}"
        tol = task.spec.correctness.tolerances
        env = {
            **self.env(task),
            "KH_RESULTS": str(session.path / name),
            "KH_NONCE": nonce,
            "KH_ATOL": repr(tol.atol),
            "KH_RTOL": repr(tol.rtol),
            "OMP_NUM_THREADS": str(self.config.cpu_threads),
        }
        if self.config.trials is not None:
            env["KH_TRIALS"] = str(self.config.trials)
        if self.config.warmup is not None:
            env["KH_WARMUP"] = str(self.config.warmup)
        result = runner.execute(session, command, self.limits(task), env=env)
        obs = RunObs(nonce, result)
        if task.channel:
            try:
                text = runner.read_file(session, name).decode("utf-8", "replace")
                obs.channel = parse_channel(text, nonce)
            except FileNotFoundError:
                obs.channel_missing = True
        return obs


@contextlib.contextmanager
def cpu_timing() -> Iterator[None]:
    """One CPU timing run at a time on this machine, across evaluations: every run is
    pinned to the same first ``cpu_threads`` CPUs, and another run on them would slow
    whichever side it overlaps (a reference time about to be cached included)."""
    with CPU_TIMING, locked(cache_dir() / "kernels" / "cpu_timing.lock"):
        yield


def run_passed(task: KernelTask, obs: RunObs) -> bool:
    """Whether one run validated (exit code, success regex, and the channel's verdict)."""
    r = obs.result
    if r.exit_code != task.spec.execute.success.exit_code or r.signal is not None:
        return False
    regex = task.spec.execute.success.stdout_regex
    if regex and not re.search(regex, r.stdout, re.M):
        return False
    if task.channel:
        ch = obs.channel
        return ch is not None and ch.ended and ch.passed and not ch.cheat_rule
    return True


def _device_only(function: str, bare: str) -> bool:
    """Whether the solution declares ``function`` (objdump's demangled name) `__device__`
    and never `__host__`."""
    base = re.sub(r"\([^()]*\)\s*(const)?\s*$", "", function).strip()
    while base.endswith(">"):  # template arguments, possibly nested
        depth, cut = 0, 0
        for i in range(len(base) - 1, -1, -1):
            depth += {">": 1, "<": -1}.get(base[i], 0)
            if depth == 0:
                cut = i
                break
        base = base[:cut].rstrip()
    name = re.split(r"::|\s", base)[-1]
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return False
    prefixes = [m.group(1) for m in re.finditer(rf"([^;{{}}]*)\b{name}\s*\(", bare)]
    declared = [p for p in prefixes if "__device__" in p or "__host__" in p]
    return bool(declared) and all("__device__" in p and "__host__" not in p for p in declared)


def _expert_file(task: KernelTask) -> str:
    """The expert's counterpart of the solution file (reference.h for solution.h)."""
    suffix = PurePosixPath(task.solution_file).suffix
    found = [f for f in task.file_names if is_expert(f) and PurePosixPath(f).suffix == suffix]
    return found[0] if len(found) == 1 else ""


def _clean_files(task: KernelTask, source: str) -> dict[str, bytes]:
    """What the solution is built from, and nothing it could probe to tell the check from
    the build: the Makefile and its includes, its unit, the task's headers (never the
    expert's, never build products)."""
    keep = {
        rel: data
        for rel, data in task.read_files().items()
        if not is_expert(rel)
        and (rel.endswith((*HEADER_SUFFIXES, ".mk")) or PurePosixPath(rel).name in MAKEFILES
             or PurePosixPath(rel).stem == "solution_tu")
    }  # fmt: skip
    keep[task.solution_file] = source.encode()
    keep[f"{APART}/.keep"] = b""
    return keep


def _make(cmd: str, variables: Mapping[str, str]) -> list[str]:
    argv = shlex.split(cmd)
    if argv and PurePosixPath(argv[0]).name == "make":
        argv += [f"{k}={v}" for k, v in variables.items()]
    return argv


def _label(task: KernelTask) -> str:
    return task.task_id.rsplit("/", 1)[-1]


def first_error(result: ExecutionResult, limit: int = 300) -> str:
    """The first line that says `error`, else the last line of output."""
    text = result.stderr + "\n" + result.stdout
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in lines:
        if "error" in line.lower():
            return line[:limit]
    if result.termination != "exited":
        return f"{result.termination}" + (f": {lines[-1][:limit]}" if lines else "")
    return lines[-1][:limit] if lines else f"exit code {result.exit_code}"
