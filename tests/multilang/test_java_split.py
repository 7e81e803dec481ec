"""Java's split (``languages/split_java.py``) without a JVM: the entry header read from
the trusted prompt, which signatures the wire carries, the stub, MultiPL-E's tests without
their `main`, and failure details; every Java task of the shared datasets gets a test
program. Real runs: ``test_compiled.py``, ``test_java_canonical.py`` and
``tests/security/forgery/test_java.py``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.components import need
from tests.conftest import SHARED
from tests.multilang import langs as L
from vibes_eval.benchmarks.multilang.languages import split_java as sj
from vibes_eval.benchmarks.multilang.languages.programs import Java
from vibes_eval.benchmarks.multilang.tasks import CodeTask, load_tasks

DATASETS = Path(os.environ.get("VIBES_TEST_SHARED", SHARED)) / "datasets"
JAVA_FILES = [DATASETS / "humaneval-x" / "humaneval_java.jsonl.gz",
              DATASETS / "multipl-e" / "humaneval-java.jsonl"]  # fmt: skip


def test_header_is_read_from_the_prompt_ignoring_comments() -> None:
    prompt = (
        "class Solution {\n    /** a class and a { brace; in a comment */\n"
        "    public int helper(int x) { return x; }\n"
        "    public Optional<String> stringToMd5(String text, final List<Map<String, Integer>> m)"
        " throws NoSuchAlgorithmException {\n"
    )
    h = sj.header(prompt)
    assert h == sj.Header("Solution", "stringToMd5", "Optional<String>",
                          [("String", "text"), ("List<Map<String, Integer>>", "m")], False)  # fmt: skip
    assert sj.header("class Problem {\n    public static long f(long n) {\n").static  # type: ignore[union-attr]
    assert sj.header("class A {\n    public <T> T f(T x) {\n") is None  # generic: not carried
    assert sj.header("class A {\n    int f(int x) { return x; }\n") is None  # nothing open


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("List<Optional<Integer>>", True), ("Map<Object, Object>", True), ("int[]", True),
        ("Pair<Optional<Long>, Optional<Long>>", True), ("HashMap<String,Long>", True),
        ("List<? extends Number>", False), ("List<? super Integer>", False),
        ("Function<Integer, Integer>", False), ("Stream<String>", False), ("java.util.List", True),
    ],
)  # fmt: skip
def test_which_types_the_wire_carries(text: str, ok: bool) -> None:
    try:
        carried = sj.carried(sj.parse_type(text))
    except ValueError:
        carried = False
    assert carried is ok


def test_a_task_the_wire_cannot_carry_runs_in_process() -> None:
    row = CodeTask(task_id="Java/9", source="x", language="java", format="humaneval-x",
                   prompt="class Solution {\n    public Runnable f(int x) {\n", test="")  # fmt: skip
    assert Java().test_program(row) is None


def test_stub_calls_the_candidate_with_its_own_method() -> None:
    h = sj.header(L.JAVA["prompt"])
    assert h is not None
    assert sj.stub(h) == (
        "        return (List<Integer>) vibes.Stub.call(new Object() {}.getClass()"
        ".getEnclosingMethod(), new Object[] {xs, k});\n"
    )


def test_multiple_tests_lose_only_their_main() -> None:
    tests = L.JAVA_MULTIPLE["tests"]
    assert sj.without_main(tests) == "    }\n    \n\n}\n"


def test_failure_detail_names_the_exception_and_the_tests_line() -> None:
    err = (
        'noise\nException in thread "main" java.lang.AssertionError\n'
        "\tat Main.main(Main.java:31)\n\tat VibesTestMain.main(VibesTestMain.java:4)\n"
    )
    assert (
        sj.failure_detail(err)
        == 'Exception in thread "main" java.lang.AssertionError (Main.java:31)'
    )
    raised = (
        'Exception in thread "main" vibes.CandidateRaised: java.lang.IllegalStateException: x\n'
    )
    assert sj.failure_detail(raised) == raised.strip()
    assert sj.failure_detail("nothing\n") is None


@pytest.mark.needs_tool("javac")
@pytest.mark.parametrize("path", JAVA_FILES, ids=["humaneval-x", "multipl-e"])
def test_every_java_task_of_the_datasets_is_on_the_split(path: Path) -> None:
    need("shared", None if path.exists() else f"{path} is absent")
    tasks = load_tasks(path, "java")
    lang = Java()
    assert [t for t, p in tasks.items() if sj.entry(p) is None] == []
    for problem in tasks.values():
        program = lang.test_program(problem)
        assert program is not None and "vibes.Stub.call" in program.files["Main.java"]


def test_the_entry_method_of_a_nested_class_is_not_read() -> None:
    prompt = "class Solution {\n    static class Node { int v; }\n    public int f(int x) {\n"
    assert sj.header(prompt) is not None  # Node is closed: Solution encloses f
    assert sj.header("class A {\n    static class B {\n        public int f(int x) {\n") is None
