"""The static policy filter of the compiled and scripted languages: what a completion may
not use, because it could end the test early, read the harness's token, tamper with the
test or reach outside (processes, files, signals, symbol tricks).

As for Rust, this is what keeps a sample from forging a pass *inside* the test's own
process (the sandbox contains everything else): a pass needs the token the harness hands
the program only after the test's `main` returned, and reading it takes one of the
refused calls. Patterns match code with comments and literals blanked out by the shared
lexer (``common.clex``), which reads every literal form of C++, Java, JavaScript/TypeScript
and Go; what it cannot read with certainty is refused (fail closed). Header names are
checked as the compiler will resolve them (an absolute path or a climb out of the folder
is refused whatever the name).

The filter is a courtesy that turns obvious misuse away early; verdicts must not depend on
it (the harness keeps what decides a verdict out of the sample's reach).
"""

from __future__ import annotations

import posixpath
import re

from vibes_eval.benchmarks.common import clex
from vibes_eval.benchmarks.common.rules import RuleSet, Violation


def strip_c_like(code: str, *, backtick: bool = False, hash_comments: bool = False) -> str:
    """``code`` with comments and string/char literals replaced by spaces, every offset
    kept: C, C++, Java, JavaScript, Go (``backtick``: JS template and Go raw strings), and
    ``#`` comments for scripting languages.

    A layout helper, not a boundary: it finds braces and names in prompts and in answers
    where an offset must map back to the text (``clex`` may move columns: it decodes Java
    escapes). The policy reads C-family code with ``clex``; this reads only the scripting
    languages' code for it."""
    out = list(code)
    i, n = 0, len(code)

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = code[i]
        two = code[i : i + 2]
        if (two == "//" and not hash_comments) or (hash_comments and c == "#"):
            end = code.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif two == "/*" and not hash_comments:
            end = code.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif c in "\"'" or (backtick and c == "`"):
            j = i + 1
            while j < n and code[j] != c:
                if code[j] == "\\" and c != "`":
                    j += 1
                elif code[j] == "\n" and c != "`":
                    break
                j += 1
            blank(i + 1, j)
            i = j + 1
        else:
            i += 1
    return "".join(out)


Rule = tuple[str, str, str]  # category, readable rule, regex (``RuleSet.of`` rows)

_EXIT = ("early exit", "exit/abort/atexit")
CPP: list[Rule] = [
    # bare names: `(exit)(0)` and `auto f = exit;` call them without `exit(`
    (*_EXIT, r"\b(exit|_exit|_Exit|quick_exit|at_quick_exit|atexit|abort|terminate)\b"),
    ("process", "system/fork/exec/spawn/kill",
     r"\b(system|popen|fork|vfork|exec[lv]p?e?|posix_spawnp?|kill|killpg|raise|syscall|ptrace"
     r"|dlopen|dlsym)\s*\("),
    ("input", "stdin and files",
     # prefixes: getchar_unlocked, fgets_unlocked, fread_unlocked, scanf_s...
     r"\b(cin|wcin|stdin|v?f?scanf|getchar|gets|fgets|fgetc|getc|fread|fopen|freopen|fdopen"
     r"|ifstream|ofstream|fstream|filebuf|opendir|environ|getline|getdelim)\w*"
     r"|\b(read|pread|readv|open|openat|creat|dup|dup2|dup3|mmap|ioctl|fcntl)\s*\("),
    ("symbols", "extern/asm/attributes/pragmas",
     r"\bextern\b|\basm\b|__asm|__attribute__|\[\[\s*gnu\s*::|#\s*pragma"),
    # a macro can paste any name together (`a##b` is `std::cin` or `asm`): no rule above
    # could read what it expands to (red team A3, A7)
    ("symbols", "token pasting / macro definitions", r"##|#\s*define\b|#\s*undef\s+(?!NDEBUG\b)"),
    ("symbols", "namespace std / explicit specialization",
     r"\bnamespace\s+(std|__gnu_cxx|__cxxabiv1)\b|\btemplate\s*<\s*>"),
    ("signals", "signals and jumps",
     r"\b(signal|sigaction|setjmp|longjmp|sigsetjmp|siglongjmp|set_terminate)\b"),
    ("threads", "threads", r"\bstd\s*::\s*(thread|jthread|async)\b|\bpthread_\w+"),
    ("headers", "system headers",
     r"#\s*include\s*[<\"](unistd|fcntl|sys/|signal|csignal|setjmp|csetjmp|dlfcn|thread|"
     r"pthread|fstream|filesystem|spawn)"),
]  # fmt: skip

JAVA: list[Rule] = [
    (*_EXIT, r"\bSystem\s*\.\s*exit\b|\bRuntime\b|\bhalt\s*\("),
    ("process", "processes", r"\bProcessBuilder\b|\bProcessHandle\b|\bexec\s*\("),
    ("input", "stdin and files",
     r"\bSystem\s*\.\s*(in|console|setIn|setOut|setErr)\b|\bFileDescriptor\b|\bjava\s*\.\s*nio\b"
     r"|\b(File|FileInputStream|FileReader|RandomAccessFile|Files|Paths|Scanner)\b"),
    ("reflection", "reflection and class loading",
     r"\bjava\s*\.\s*lang\s*\.\s*(reflect|invoke)\b|\bsetAccessible\b|\bgetDeclared\w*|"
     r"\bClassLoader\b|\bMethodHandles?\b|\bUnsafe\b|\bClass\s*\.\s*forName\b"),
    ("threads", "threads", r"\bThread\b|\bExecutor\w*|\bshutdown\w*Hook"),
    ("test tampering", "redefines equals/hashCode/compareTo/toString",
     r"\b(boolean\s+equals|int\s+hashCode|int\s+compareTo|String\s+toString)\s*\("),
    ("test tampering", "a class named like the harness", r"\bclass\s+(Main|VibesRun)\b"),
    # a type of the sample's own beats an on-demand import of the test (red team A4)
    ("test tampering", "a type named like one the test imports",
     r"\b(class|interface|enum|record)\s+(Arrays|List|ArrayList|LinkedList|Map|HashMap|"
     r"TreeMap|Set|HashSet|TreeSet|Collections|Objects|Optional|Math|String|StringBuilder|"
     r"Integer|Long|Double|Float|Boolean|Character|Object|System|Stream|Collectors|"
     r"Iterator|Comparator|Character|Number|Double)\b"),
]  # fmt: skip

JS: list[Rule] = [
    ("early exit", "process", r"\bprocess\b"),
    ("modules", "require/import", r"\brequire\b|\bimport\b|\bmodule\b|\bexports\b"),
    ("globals", "the global object and code from strings",
     r"\bglobalThis\b|\bglobal\b|\bwindow\b|\beval\b|\bFunction\b|\bconstructor\b|\bthis\b"
     r"|\bReflect\b|\bProxy\b|\b__proto__\b|\bprototype\b|\bdefineProperty\b|\bSymbol\b"),
    ("test tampering", "console, toJSON, valueOf, the harness's names",
     r"\bconsole\s*\.\s*assert\b|\bconsole\s*=|\btoJSON\b|\bvalueOf\b|\b__vibes"),
    ("timers", "timers and async work",
     r"\b(setTimeout|setInterval|setImmediate|queueMicrotask)\b"),
]  # fmt: skip

GO: list[Rule] = [
    (*_EXIT, r"\bos\s*\.\s*Exit\b|\bruntime\s*\.\s*Goexit\b|\bsyscall\b|\bunsafe\b"),
    ("input", "stdin and files", r"\bos\s*\.\s*(Stdin|Open\w*|Create|ReadFile|NewFile)\b"),
    ("process", "processes", r"\bos\s*/\s*exec\b|\"os/exec\"|\bexec\s*\.\s*Command\b"),
    ("test tampering", "testing internals", r"\btesting\s*\.\s*(M|MainStart)\b|\bfunc\s+Test"
     r"|\bfunc\s+init\s*\(|\bfunc\s+TestMain\b"),
    ("symbols", "linkname", r"go:linkname|\bcgo\b|\"C\""),
    # the sample shares the test's package: `const true = 1 == 1; const false = true`
    # turns every assertion around (red team A5)
    ("test tampering", "redefines a predeclared name",
     # the names tests use; a helper `min`/`max` of the sample's own stays allowed
     r"\b(const|var|type|func)\s*\(?\s*(true|false|nil|iota|len|append|panic|string|int|"
     r"bool|error)\b"),
]  # fmt: skip

# Scripting languages of MultiPL-E: exits, stdin, processes (best effort).
SCRIPT: dict[str, list[Rule]] = {
    "perl": [(*_EXIT, r"\b(exit|die|exec|system|fork|kill|open|STDIN|eval|require|use)\b|`")],
    "bash": [(*_EXIT, r"\b(exit|exec|kill|trap|read|source|eval)\b|/dev/|\$\(|`|<")],
    "lua": [(*_EXIT, r"\bos\s*\.|\bio\s*\.|\b(load|loadstring|dofile|require|debug)\b")],
    "ruby": [(*_EXIT, r"\b(exit|exit!|abort|at_exit|exec|system|fork|spawn|STDIN|gets|"
                      r"open|eval|require|Process|Kernel|ObjectSpace)\b|`|\$stdin")],
    "php": [(*_EXIT, r"\b(exit|die|exec|system|shell_exec|passthru|proc_open|popen|fopen|"
                     r"file_get_contents|eval|register_shutdown_function|STDIN)\b|`")],
    "r": [(*_EXIT, r"\b(q|quit|system|system2|readLines|file|stdin|eval|parse|on\.exit|"
                   r"Sys\.\w+|source)\s*\(")],
    "julia": [(*_EXIT, r"\b(exit|run|read|readline|open|stdin|eval|ccall|atexit|include)\b")],
    "ts": JS,
}  # fmt: skip

RULES: dict[str, list[Rule]] = {"cpp": CPP, "java": JAVA, "js": JS, "go": GO, **SCRIPT}
_COMPILED: dict[str, RuleSet] = {lang: RuleSet.of(rules) for lang, rules in RULES.items()}
_HASH_COMMENTS = {"perl", "bash", "ruby", "r", "julia"}


_SYSTEM_HEADER = re.compile(
    r"^(unistd|fcntl|sys/.*|signal|csignal|setjmp|csetjmp|dlfcn|thread|pthread|fstream|"
    r"filesystem|spawn|stdio_ext|syscall|link|elf|asm/.*|linux/.*|bits/.*)(\.h)?$"
)


# JavaScript reaches any property by a computed name, so these names are refused even
# inside strings (red team A2); a split name ("con" + "structor") still gets past: the
# filter is a courtesy, the harness must hold without it.
_JS_NAMES_ANYWHERE = RuleSet.of([
    ("globals", "names of the global object or code from strings, even in a string",
     r"constructor|__proto__|prototype|globalThis|process|require|Function|eval|mainModule"),
])  # fmt: skip


# The one module a JavaScript completion may load: HumanEval-X's environment installs
# js-md5 (JavaScript/162's canonical solution requires it); the candidate gets a stand-in
# (``wire/js/js-md5``). Blanked before the rules read the code, nothing else with it.
_JS_MD5 = re.compile(r"""\brequire\s*\(\s*(['"])js-md5\1\s*\)""")


def _allowed_js(code: str) -> str:
    return _JS_MD5.sub(lambda m: " " * len(m.group(0)), code)


def strip_for(language: str, code: str) -> str:
    """Code with comments and literal contents blanked.

    Raises: clex.LexError (C-family languages) where the source cannot be read with
    certainty.
    """
    if language in clex.LANGUAGES:
        return clex.strip(code, language)
    if language in _HASH_COMMENTS:
        return strip_c_like(code, hash_comments=True)
    return strip_c_like(code, backtick=language in ("js", "ts", "go"))


def _header_violation(code: str) -> Violation | None:
    try:
        names = clex.header_names(code)
    except clex.LexError as exc:
        return Violation("headers", "an include the lexer cannot read", 0, str(exc))
    for name in names:
        normal = posixpath.normpath(name)
        if normal.startswith(("/", "..")) or _SYSTEM_HEADER.match(normal):
            return Violation("headers", "system headers", 0, f"#include {name}")
    return None


def check(language: str, completion: str) -> Violation | None:
    """The first rule ``completion`` breaks (earliest in the text; on one line, the first
    rule listed), or None. A completion the lexer cannot read is checked as raw text."""
    rules = _COMPILED.get(language)
    if rules is None:
        return None
    if language == "js":
        completion = _allowed_js(completion)
    try:
        code = strip_for(language, completion)
    except clex.LexError:
        # Fail closed without guessing: the rules read the raw text, where nothing can
        # hide in a literal or a comment. Broken code that names nothing refused goes on
        # to the compiler, which reports it as before (compile_error).
        code = completion
    found = rules.all(code)
    if language in ("js", "ts"):  # names reached by string: obj["constructor"], "proc" + "ess"
        found += _JS_NAMES_ANYWHERE.all(completion)
    if language == "cpp" and (header := _header_violation(completion)) is not None:
        found.append(header)
    return min(found, key=lambda v: v.line) if found else None
