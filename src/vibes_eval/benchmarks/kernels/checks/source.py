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


def splice_lines(src: str) -> str:
    """Translation phase 2: a backslash-newline joins lines (so `// a \\` comments out the
    next line too). Each splice's newline moves to the end of the joined line, keeping
    line numbers roughly right."""
    out, pending = [], 0
    for line in src.split("\n"):
        if line.endswith("\\"):
            out.append(line[:-1])
            pending += 1
            continue
        out.append(line + "\n" * (pending + 1))
        pending = 0
    return "".join(out)[:-1] if out else ""


def strip_source(src: str, *, keep_strings: bool = False) -> str:
    """The source without comments, `#if 0` blocks, and (unless ``keep_strings``) string
    and character literal contents; newlines are kept."""
    text = splice_lines(src)
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            end = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, end))
            i = end
        elif c == "R" and text.startswith('R"', i) and not _ident_before(text, i):
            m = re.match(r'R"([^ ()\\\t\n]{0,16})\(', text[i:])
            if m is None:
                out.append(c)
                i += 1
                continue
            close = ")" + m.group(1) + '"'
            j = text.find(close, i + m.end())
            end = n if j < 0 else j + len(close)
            body = text[i:end]
            out.append(body if keep_strings else '""' + "\n" * body.count("\n"))
            i = end
        elif c == '"' or (c == "'" and not _digit_separator(text, i)):
            j = _literal_end(text, i, c)
            out.append(text[i:j] if keep_strings else c + c)
            i = j
        else:
            out.append(c)
            i += 1
    return _drop_if0("".join(out))


def _ident_before(text: str, i: int) -> bool:
    return (
        i > 0
        and (text[i - 1].isalnum() or text[i - 1] == "_")
        and not (
            text[i - 1] in "uUL8" and i > 1 and not (text[i - 2].isalnum() or text[i - 2] == "_")
        )
    )


def _digit_separator(text: str, i: int) -> bool:
    """C++14 `1'000'000`: a quote inside a number is not a character literal."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_.'"):
        j -= 1
    return j < i and text[j].isdigit()


def _literal_end(text: str, i: int, quote: str) -> int:
    j = i + 1
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == quote or ch == "\n":
            return j + 1
        j += 1
    return len(text)


_IF0 = re.compile(r"^[ \t]*#[ \t]*if[ \t]+0\b.*$", re.M)
_COND = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|endif|else|elif)\b", re.M)


def _drop_if0(text: str) -> str:
    """Blank out `#if 0 ... #else/#endif` blocks (dead code the compiler never sees)."""
    while (m := _IF0.search(text)) is not None:
        depth, end = 1, len(text)
        for c in _COND.finditer(text, m.end()):
            word = c.group(1)
            if word.startswith("if"):
                depth += 1
            elif word == "endif":
                depth -= 1
            elif depth == 1:  # #else / #elif of our #if 0: the rest is live
                depth = 0
            if depth == 0:
                end = c.start() if word != "endif" else c.end()
                break
        dead = text[m.start() : end]
        text = text[: m.start()] + "\n" * dead.count("\n") + text[end:]
    return text


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
    bare = strip_source(source)
    with_strings = strip_source(source, keep_strings=True)
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
    code = strip_source(source, keep_strings=True)
    return {PurePosixPath(m).name for m in re.findall(r'#\s*include\s*"([^"]+)"', code)}


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
