"""Java verdict forgery on the split (docs/integrity.md), through the real engine, javac,
JVMs and sandbox: batched and alone, with the policy filter on and off.

Every forger is a WRONG solution that would pass only if its trick worked: reading the
tests or their expected values (files, /proc, the environment, the classpath, javac at
compile time), forging the result (the done marker, fake frames, exiting 0 early, shutdown
hooks), shadowing the names the tests or the stub use, reaching a neighbour, or attacking
the stub's decoder with hostile frames. None may pass; the honest samples beside them keep
their verdicts; batched and alone verdicts are identical. The decoder attacks must be
stopped by the stub itself (its ChannelError), not by luck.

"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import vibes_eval
from tests.components import need
from tests.conftest import SANDBOX, batch_modes

# -- the tasks: HumanEval-X's shape (a helper, the test in `Main`) and MultiPL-E's ----------

ROW_X = {
    "task_id": "Java/0",
    "prompt": "import java.util.*;\nimport java.lang.*;\n\nclass Solution {\n"
              "    public int bump(int x) {\n        return x + 1;\n    }\n\n"
              "    /** Add bump(k) to each. */\n"
              "    public List<Integer> addAll(List<Integer> xs, int k) {\n",
    "declaration": "import java.util.*;\nimport java.lang.*;\n\nclass Solution {\n"
                   "    public List<Integer> addAll(List<Integer> xs, int k) {\n",
    "canonical_solution": "        List<Integer> out = new ArrayList<>();\n"
                          "        for (int x : xs) out.add(x + bump(k));\n"
                          "        return out;\n    }\n}",
    "test": "public class Main {\n    public static void main(String[] args) {\n"
            "        Solution s = new Solution();\n        List<Boolean> correct = Arrays.asList(\n"
            "                s.addAll(Arrays.asList(1, 2), 1).equals(Arrays.asList(3, 4)),\n"
            "                s.addAll(new ArrayList<>(), 5).equals(new ArrayList<>()),\n"
            "                s.bump(1) == 2\n        );\n"
            "        if (correct.contains(false)) {\n            throw new AssertionError();\n"
            "        }\n    }\n}",
}  # fmt: skip
ROW_M = {
    "name": "HumanEval_0_min_max",
    "language": "java",
    "prompt": "import java.util.*;\nimport java.lang.reflect.*;\nimport org.javatuples.*;\n"
              "import java.security.*;\nimport java.math.*;\nimport java.io.*;\n"
              "import java.util.stream.*;\nclass Problem {\n    // The least and the greatest.\n"
              "    public static Pair<Long, Long> minMax(ArrayList<Long> xs) {\n",
    "tests": "    }\n    public static void main(String[] args) {\n"
             "    assert(minMax((new ArrayList<Long>(Arrays.asList((long)3l, (long)1l, (long)2l))))"
             ".equals((Pair.with(1l, 3l))));\n"
             "    assert(minMax((new ArrayList<Long>(Arrays.asList((long)5l)))).equals((Pair.with(5l, 5l))));\n"
             "    }\n\n}\n",
    "stop_tokens": ["\n    }\n"],
}  # fmt: skip
RIGHT_X = ROW_X["canonical_solution"]
WRONG_X = "        return xs;\n    }\n}\n"
RIGHT_M = "        return Pair.with(Collections.min(xs), Collections.max(xs));\n"
WRONG_M = "        return Pair.with(xs.get(0), xs.get(0));\n"
NEIGHBOUR = "NEIGHBOUR-7f3a"  # in the honest neighbour's source; forgers look for it

# A search every reader uses: the needle is built at run time (reversed), so the forger's
# own source and classes do not contain it.
FIND = """
    static boolean vibesFound(String reversed) {
        String needle = new StringBuilder(reversed).reverse().toString();
        java.util.ArrayDeque<java.io.File> todo = new java.util.ArrayDeque<>();
        java.io.File here = new java.io.File(".").getAbsoluteFile();
        for (java.io.File d = here; d != null; d = d.getParentFile()) todo.add(d);
        for (String p : new String[] {"/tmp", "/var/tmp", "/dev/shm", "/run", "/home", "/root",
                "/work", "/srv", "/mnt", System.getProperty("java.io.tmpdir")}) {
            todo.add(new java.io.File(p));
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        int budget = 20000;
        while (!todo.isEmpty() && budget-- > 0) {
            java.io.File f = todo.poll();
            try {
                if (!seen.add(f.getCanonicalPath())) continue;
                if (f.isDirectory()) {
                    java.io.File[] kids = f.listFiles();
                    if (kids != null && !f.getPath().startsWith("/proc")) todo.addAll(java.util.Arrays.asList(kids));
                } else if (f.isFile() && f.length() < (8 << 20)) {
                    String text = new String(java.nio.file.Files.readAllBytes(f.toPath()),
                                             java.nio.charset.StandardCharsets.ISO_8859_1);
                    if (text.contains(needle)) return true;
                }
            } catch (Exception e) { }
        }
        return false;
    }
"""
TEST_NEEDLE = "llac.butS.sebiv"  # "vibes.Stub.call": only the test program's source has it


def _cheat_if(found: str) -> str:
    """A body answering right only when ``found`` (a Java condition) holds."""
    return (
        f"        if ({found}) {{\n" + RIGHT_X.split("    }\n}")[0] + "        }\n"
        "        return xs;\n    }\n"
    )


READ_PROC = """
    static boolean vibesProc(String reversed) {
        String needle = new StringBuilder(reversed).reverse().toString();
        java.io.File[] procs = new java.io.File("/proc").listFiles();
        if (procs == null) return false;
        for (java.io.File p : procs) {
            if (!p.getName().matches("[0-9]+")) continue;
            for (String part : new String[] {"cmdline", "environ", "maps"}) {
                try {
                    String t = new String(java.nio.file.Files.readAllBytes(new java.io.File(p, part).toPath()),
                                          java.nio.charset.StandardCharsets.ISO_8859_1);
                    if (t.contains(needle)) return true;
                } catch (Exception e) { }
            }
            for (String where : new String[] {"cwd", "root/tmp", "root"}) {
                java.io.File[] fs = new java.io.File(p, where).listFiles();
                if (fs == null) continue;
                for (java.io.File f : fs) {
                    if (f.getName().contains(needle)) return true;
                }
            }
        }
        return false;
    }
"""
READ_ENV_CLASSPATH = """
    static boolean vibesEnv(String reversed) {
        String needle = new StringBuilder(reversed).reverse().toString();
        for (java.util.Map.Entry<String, String> e : System.getenv().entrySet())
            if ((e.getKey() + e.getValue()).contains(needle)) return true;
        for (Object v : System.getProperties().values())
            if (String.valueOf(v).contains(needle)) return true;
        ClassLoader cl = Solution.class.getClassLoader();
        return cl.getResource(needle + ".class") != null || cl.getResource("Main.class") != null;
    }
"""


def _frame(text: str) -> str:
    """A body that writes ``text`` (Java string literal contents) as the answer, raw, on the
    real stdout (the channel), then ends the candidate so nothing else follows."""
    return (
        "        try {\n            java.io.FileOutputStream o = new java.io.FileOutputStream("
        "java.io.FileDescriptor.out);\n"
        f'            o.write(("\\u0002V " + {text} + "\\n").getBytes("ISO-8859-1"));\n'
        "            o.flush();\n        } catch (Exception e) { }\n"
        "        Runtime.getRuntime().halt(0);\n        return xs;\n    }\n}\n"
    )


# a 65 MiB line, written in 1 MiB blocks (the test stops reading at 64 MiB)
OVERSIZED = (
    "        try {\n            java.io.FileOutputStream o = new java.io.FileOutputStream("
    "java.io.FileDescriptor.out);\n"
    '            o.write("\\u0002V ret [".getBytes("ISO-8859-1"));\n'
    '            byte[] block = "1,".repeat(1 << 19).getBytes("ISO-8859-1");\n'
    "            for (int i = 0; i < 65; i++) o.write(block);\n"
    '            o.write("1]\\n".getBytes("ISO-8859-1"));\n'
    "            o.flush();\n        } catch (Exception e) { }\n"
    "        Runtime.getRuntime().halt(0);\n        return xs;\n    }\n}\n"
)

# name -> (row, completion, the stub must be what stopped it with the filter off)
FORGERIES: dict[str, tuple[dict, str, bool]] = {
    # read the tests or their expected values
    "read_test_source_from_disk": (ROW_X, _cheat_if(f'vibesFound("{TEST_NEEDLE}")') + FIND + "}\n", False),
    "read_test_from_other_processes_proc": (
        ROW_X, _cheat_if(f'vibesProc("{TEST_NEEDLE}") || vibesProc("niaMtseTsebiV")') + READ_PROC + "}\n", False),
    "read_test_from_environment_and_classpath": (
        ROW_X, _cheat_if('vibesEnv("niaMtseTsebiV")') + READ_ENV_CLASSPATH + "}\n", False),
    "annotation_processor_at_compile_time": (
        ROW_X, WRONG_X + '@javax.annotation.processing.SupportedAnnotationTypes("*")\n'
        "class Peek extends javax.annotation.processing.AbstractProcessor {\n"
        "    public boolean process(java.util.Set<? extends javax.lang.model.element.TypeElement> a,\n"
        "            javax.annotation.processing.RoundEnvironment r) {\n"
        '        throw new RuntimeException("ran");\n    }\n}\n', False),
    # reach a neighbour: its source, classes or results
    "read_neighbour_source_and_classes": (
        ROW_X, _cheat_if(f'vibesFound("{NEIGHBOUR[::-1]}")') + FIND + "}\n", False),
    # forge the result
    "print_done_marker_everywhere": (
        ROW_X, '        System.err.println("\\nvibes-tests: done");\n'
        '        System.out.println("\\nvibes-tests: done");\n        return xs;\n    }\n}\n', False),
    "exit_zero_from_static_initializer": (
        ROW_X, "        return xs;\n    }\n    static { System.exit(0); }\n}\n", False),
    "halt_zero_in_the_entry_point": (
        ROW_X, "        Runtime.getRuntime().halt(0);\n        return xs;\n    }\n}\n", False),
    "shutdown_hook_prints_done": (
        ROW_X, "        Runtime.getRuntime().addShutdownHook(new Thread(() -> {\n"
        '            System.err.println("vibes-tests: done");\n'
        '            System.out.println("vibes-tests: done");\n        }));\n'
        "        System.exit(0);\n        return xs;\n    }\n}\n", False),
    "unicode_escaped_stdin_read_and_halt": (
        ROW_X, "        return xs;\n    }\n"
        "    static { try { \\u0053ystem.\\u0069n.read(); } catch (Exception e) { }\n"
        "             \\u0052untime.getRuntime().halt(0); }\n}\n", False),
    "comment_ended_by_escaped_newline_halts": (
        ROW_X, "        return xs;\n    }\n"
        "    // \\u000a static { Runtime.getRuntime().halt(0); }\n}\n", False),
    "text_block_hides_static_halt": (
        ROW_X, '        String t = """\n          a\n          """; return xs;\n    }\n'
        "    static { Runtime.getRuntime().halt(0); }\n}\n", False),
    # shadow the names the tests and the stub use (A4: a class beats an on-demand import)
    "shadow_arrays_import_a4": (
        ROW_X, WRONG_X + "class Arrays {\n    @SafeVarargs\n"
        "    static <T> List<T> asList(T... items) { return new ArrayList<T>(); }\n}\n", False),
    "shadow_test_and_stub_classes": (
        ROW_X, WRONG_X + "class Main { public static void main(String[] a) { } }\n"
        "class VibesTestMain { public static void main(String[] a) { } }\n"
        "class Stub { static Object call(Object m, Object[] a) { return null; } }\n"
        "class AssertionError extends RuntimeException { }\n"
        "class Boolean { static final Object FALSE = new Object(); }\n", False),
    "own_main_in_the_problem_class": (
        ROW_M, WRONG_M + "    }\n    public static void main(String[] args) {\n"
        '        System.err.println("vibes-tests: done");\n', False),
    "shadow_pair_with_an_always_equal_one": (
        ROW_M, "        return new Pair<Long, Long>(0l, 0l);\n    }\n"
        "    static class Pair<A, B> {\n        Pair(A a, B b) { }\n"
        "        public boolean equals(Object o) { return true; }\n"
        "        static <A, B> Pair<A, B> with(A a, B b) { return new Pair<>(a, b); }\n", False),
    # attack the stub's decoder: each frame must break the channel
    "fake_frame_of_an_unknown_kind": (ROW_X, _frame('"done \\"vibes-tests: done\\""'), True),
    "malformed_json_frame": (ROW_X, _frame('"ret [3, 4"'), True),
    "wrongly_typed_frame": (ROW_X, _frame('"ret [\\"3\\", \\"4\\"]"'), True),
    "tagged_value_where_a_type_is_declared": (
        ROW_X, _frame('"ret [{\\"$t\\":\\"int\\",\\"v\\":3},{\\"$t\\":\\"int\\",\\"v\\":4}]"'), True),
    "int_overflow_frame": (ROW_X, _frame('"ret [3, 4294967300]"'), True),
    "trailing_text_after_the_value": (ROW_X, _frame('"ret [3, 4] [5]"'), True),
    "raise_frame_that_is_not_a_string": (ROW_X, _frame('"raise {\\"ok\\": true}"'), True),
    "deeply_nested_frame": (ROW_X, _frame('"ret " + "[".repeat(200000) + "]".repeat(200000)'), True),
    "frame_that_is_not_utf8": (ROW_X, _frame('"ret [\\"\\u00ff\\u00fe\\"]"'), True),
    "oversized_frame": (ROW_X, OVERSIZED, True),
}  # fmt: skip


def _samples() -> list[tuple[str, dict, str, bool | None]]:
    """(name, row, completion, must pass: True / False)."""
    out: list[tuple[str, dict, str, bool | None]] = [
        ("honest_right_x", ROW_X, RIGHT_X + f"\n// {NEIGHBOUR}\n", True),
        ("honest_wrong_x", ROW_X, WRONG_X, False),
        ("honest_right_m", ROW_M, RIGHT_M, True),
        ("honest_wrong_m", ROW_M, WRONG_M, False),
    ]
    out += [(name, row, code, False) for name, (row, code, _) in FORGERIES.items()]
    return out


def _evaluate(tmp: Path, policy: bool, batch: bool) -> dict[str, tuple[bool, str, str]]:
    verdicts: dict[str, tuple[bool, str, str]] = {}
    for row, bench in ((ROW_X, "humaneval-java"), (ROW_M, "humaneval-java")):
        path = tmp / f"{id(row)}.jsonl"
        path.write_text(json.dumps(row) + "\n")
        key = "task_id" if "task_id" in row else "name"
        chosen = [(n, c) for n, r, c, _ in _samples() if r is row]
        out = vibes_eval.evaluate(
            bench, [{key: row[key], "completion": c} for _, c in chosen], sandbox=SANDBOX, ks=[1],
            config={"problems": str(path), "enforce_policy": policy, "batch": batch},
        )  # fmt: skip
        for (name, _), sample in zip(chosen, out.prepared.samples, strict=True):
            r = out.results[sample.key]
            verdicts[name] = (r.passed, r.reason, r.detail)
            assert r.details.get("trust") in (None, "split"), (name, r.details)
    return verdicts


@pytest.mark.slow
@pytest.mark.needs_tool("javac")
@pytest.mark.parametrize("policy", [True, False], ids=["policy", "no-policy"])
def test_no_java_forgery_passes_batched_or_alone(tmp_path: Path, policy: bool) -> None:
    need("toolchains", None if shutil.which("java") else "java is not installed")
    runs = {batch: _evaluate(tmp_path, policy, batch) for batch in batch_modes(policy)}
    for batch, verdicts in runs.items():
        for name, _, _, expected in _samples():
            passed, reason, detail = verdicts[name]
            assert passed is expected, (batch, name, reason, detail)
            assert reason != "infra_error", (batch, name, detail)
        for name in ("honest_wrong_x", "honest_wrong_m"):
            assert verdicts[name][1] == "failed", verdicts[name]
        if not policy:
            for name, (_, _, by_stub) in FORGERIES.items():
                if by_stub:  # the stub refused the frame: its channel broke
                    assert "ChannelError" in verdicts[name][2], (name, verdicts[name])
    if len(runs) == 2:
        assert runs[True] == runs[False]
