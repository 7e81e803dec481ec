"""The multi-language filter reads code with the shared lexer (``common.clex``), so no
literal form hides a call from it (issue 24, items 1-4: the forms a red team used), and
what the lexer cannot read is checked as raw text rather than guessed at. The filter is a
courtesy: these tests say what it refuses, not that verdicts depend on it."""

from __future__ import annotations

import pytest

from vibes_eval.benchmarks.multilang.languages import policy


@pytest.mark.parametrize(
    ("language", "code"),
    [
        ("cpp", "int x = 1'000; int y = getchar_unlocked();\n"),  # digit separator
        ("cpp", 'auto s = R"("\\)"; static int y = (exit)(0);\n'),  # raw string, (exit)
        ("cpp", "#include </usr/include/unistd.h>\nint f() { return 0; }\n"),  # header path
        ("cpp", '#include "../../../usr/include/unistd.h"\nint f() { return 0; }\n'),
        ("cpp", "int f() { size_t n = fwrite(0, 1, 1, stdin); return 0; }\n"),
        ("cpp", "#define VJ(a, b) a##b\nstatic int t = VJ(_Ex, it)(0);\n"),  # token pasting
        ("cpp", "#define Q std::c ## in\n"),
        ("js", "const s = `${process.exit(0)}`;\n"),  # template substitution is code
        ("js", 'const r = /"/; process.exit(0);\n'),  # a quote inside a regex literal
        ("js", 'const f = (() => 0)["constructor"]("return 1");\n'),  # name by string
        ("java", "static { \\u0053ystem.\\u0069n.read(); }\n"),  # unicode escapes
        ("java", "// \\u000a static { Runtime.getRuntime().halt(0); }\n"),  # escape ends //
        ("java", 'String t = """\n  a\n  """; static { System.exit(0); }\n'),  # text block
        ("go", "x := `a`; os.Exit(0)\n"),  # raw string
        ("go", "    return 0\n}\nconst true = 1 == 1\nconst false = true\n"),  # A5
        ("java", "        return 0;\n    }\n}\nclass Arrays { }\nclass X {\n"),  # A4
    ],
)
def test_code_hidden_by_a_literal_form_is_still_read(language: str, code: str) -> None:
    assert policy.check(language, code) is not None


@pytest.mark.parametrize(
    ("language", "code"),
    [
        ("cpp", "int f(int a) { return a * 1'000 + 'x'; }\n"),
        ("js", 'function f(a) { return `${a} and "b"`.length + /a"b/.source.length; }\n'),
        ("java", 'int f(int a) { String s = "System.exit(0)"; return a + s.length(); }\n'),
        ("go", "return len(`os.Exit(0)`) + a\n"),
    ],
)
def test_the_same_words_inside_literals_pass(language: str, code: str) -> None:
    assert policy.check(language, code) is None


def test_unreadable_code_is_checked_as_raw_text_not_guessed() -> None:
    # an unterminated template: the lexer refuses it; the raw text names process: refused
    assert policy.check("js", "const s = `${process.exit(0)}\n") is not None
    # broken code that names nothing refused goes on (the compiler reports it)
    assert policy.check("js", "function f(a) { return `a\n") is None
