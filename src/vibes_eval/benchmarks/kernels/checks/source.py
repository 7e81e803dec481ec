"""Static anti-cheat on a solution's source: patterns matched after comments (and, for
most rules, string contents) are stripped, a minimum of real code, and no reaching for the
task's own files (the expert reference sits next to the harness).

These rules are the first, cheap layer. What patterns cannot see is caught later: the
solution is compiled on its own and its symbols are checked (``symbols.py``), and the
harness reports through a channel the solution cannot write (``run.py``).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from vibes_eval.benchmarks.common import clex
from vibes_eval.benchmarks.common.rules import Rule, RuleSet, Violation, line_of
from vibes_eval.benchmarks.kernels.checks import cheat

SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".cuh", ".cu", ".c", ".cc", ".cpp", ".cxx", ".inc",
                   ".inl", ".o", ".a", ".so", ".ptx", ".cubin", ".py")  # fmt: skip

# `__global__`, then attribute-like tokens (`__launch_bounds__(256, 2)`, `static`, macros
# with arguments, one level of nested parentheses), then `void`.
_ARGS = r"(?:\s*\((?:[^()]|\([^()]*\))*\))?"
KERNEL_RE = rf"__global__(?:\s+[A-Za-z_][A-Za-z0-9_]*{_ARGS})*?\s+void\b"
LAUNCH_RE = r"<<<.*?>>>|\bcudaLaunch(?:Cooperative)?Kernel(?:Ex)?(?:C)?\s*\("

# (rule, regex, why) checked on code without comments or string contents, ignoring case.
GLOBAL_BLOCKED: tuple[tuple[str, str, str], ...] = (
    ("library", r"#\s*include\s*[<\"](cutlass|cute)/", "includes CUTLASS/CuTe"),
    ("library", r"\bcutlass::(gemm|conv|epilogue|reduction|layout|arch)\b", "uses CUTLASS"),
    (
        "library",
        r"#\s*include\s*[<\"](cublas|cudnn|cufft|cusparse|cusolver|curand)",
        "includes a CUDA math library",
    ),
    (
        "library",
        r"\b(cublas|cudnn|cufft|cusparse|cusolver)[A-Z]\w*\s*\(",
        "calls a CUDA math library",
    ),
    (
        "library",
        r"#\s*include\s*[<\"](flash_attn|flash_fwd|flash_bwd|ln_fwd_kernels|"
        r"ln_bwd_kernels)",
        "includes flash-attention sources",
    ),
    (
        "library",
        r"#\s*include\s*[<\"](mkl|cblas|openblas|Eigen/|eigen3|fftw3|dnnl|oneapi)",
        "includes a CPU math library",
    ),
    ("library", r"\b(cblas_|LAPACKE_|fftw_|fftwf_|mkl_)\w*\s*\(", "calls a CPU math library"),
    ("framework", r"\b(torch|at|c10)::", "uses the PyTorch C++ API"),
    ("try_catch", r"\btry\s*\{", "try/catch (swallows failures)"),
    (
        "static_constructor",
        r"__attribute__\s*\(\(\s*(constructor|destructor)|"
        r"\[\[\s*gnu::(constructor|destructor)",
        "code that runs before or after main",
    ),
    ("syscall", r"\bsyscall\s*\(|\b__NR_\w+|\bSYS_\w+\b", "raw system calls"),
)
# The table as rules: each rule's category is the kernel rule it reports (library, ...),
# its name says why.
BLOCKED_RULES = RuleSet(Rule.of(rule, why, regex, re.IGNORECASE)
                        for rule, regex, why in GLOBAL_BLOCKED)  # fmt: skip


def strip_source(src: str, *, keep_strings: bool = False) -> str:
    """The source without comments, `#if 0` blocks, and (unless ``keep_strings``) string
    and character literal contents, read by the shared lexer (``common.clex``: line
    splices, raw strings, digit separators, digraphs); line numbers are kept.

    Raises: clex.LexError where the source cannot be read with certainty.
    """
    return clex.strip(src, "cuda", keep_strings=keep_strings)


def kernel_pattern(pattern: str) -> str:
    """A task's `__global__\\s+void` becomes the attribute-aware form."""
    return pattern.replace(r"__global__\s+void", KERNEL_RE)


def code_lines(bare: str) -> int:
    """Non-empty lines once comments are gone (CUDAHercules's count: braces count)."""
    return sum(1 for line in bare.splitlines() if line.strip())


def check_source(
    source: str,
    *,
    blocked: list[str],
    required: list[str],
    cuda: bool,
    task_files: list[str],
    allowed_files: set[str],
    min_code_lines: int,
) -> list[Violation]:
    """Every static rule the source breaks (empty: none).

    ``blocked``/``required``: the task's own regexes; ``cuda``: also require a
    ``__global__`` kernel and a launch; ``task_files``: the task folder's files, which a
    solution must not name (the reference and harness live there) unless listed in
    ``allowed_files``.
    """
    try:
        bare = strip_source(source)
        with_strings = strip_source(source, keep_strings=True)
    except clex.LexError as exc:  # fail closed: what cannot be read is not checked clean
        return [cheat("unreadable", f"the lexer cannot read it with certainty: {exc}")]
    found = _hits(BLOCKED_RULES, bare)
    own = RuleSet(Rule.of("blocked_pattern", repr(p), p, re.IGNORECASE) for p in blocked)
    found += _hits(own, bare)
    wanted = [(p, kernel_pattern(p)) for p in required]
    if cuda:
        wanted += [("a __global__ void kernel", KERNEL_RE), ("a kernel launch", LAUNCH_RE)]
    for label, pattern in wanted:
        if not re.search(pattern, bare, re.S if "<<<" in pattern else 0):
            found.append(cheat("required_pattern", f"missing {label}"))
    for name in _named_task_files(with_strings, task_files, allowed_files):
        found.append(cheat("task_file", f"names the task's own file {name!r}"))
    lines = code_lines(bare)
    if lines < min_code_lines:
        found.append(cheat("min_code", f"{lines} lines of code, fewer than {min_code_lines}"))
    return found


def _hits(rules: RuleSet, bare: str) -> list[Violation]:
    """The first hit of every rule, as ``<category>: <rule> (<the matched code>)``."""
    found = []
    for rule in rules.rules:
        m = rule.pattern.search(bare)
        if m:
            detail = f"{rule.rule} ({_snippet(m.group(0))})"
            found.append(cheat(rule.category, detail, line_of(bare, m.start())))
    return found


def _named_task_files(code: str, task_files: list[str], allowed: set[str]) -> list[str]:
    names = {PurePosixPath(f).name for f in task_files if f.endswith(SOURCE_SUFFIXES)}
    names -= allowed
    return sorted(n for n in names if re.search(rf"(?<![\w.]){re.escape(n)}(?![\w])", code))


def local_includes(source: str) -> set[str]:
    """File names a source includes with quotes (the task's naive solution may name some
    of its folder's files; a model's solution may name those too)."""
    try:
        code = strip_source(source, keep_strings=True)
    except clex.LexError:
        return set()  # nothing is allowed by name: the static check refuses the source
    return {PurePosixPath(m).name for m in re.findall(r'#\s*include\s*"([^"]+)"', code)}


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
