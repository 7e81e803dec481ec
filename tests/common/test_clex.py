"""The C-family lexer: every trick a red team used to hide code from the policy rules
(code after it must stay visible to the rule's regex), ordinary code unchanged outside
literals, line counts kept, fragments read, and doubt refused with LexError."""

from __future__ import annotations

import re

import pytest

from vibes_eval.benchmarks.common import clex
from vibes_eval.benchmarks.common.clex import LexError, header_names, strip

SYSTEM = re.compile(r"\bsystem\s*\(")
JAVA_EXIT = re.compile(r"\bSystem\s*\.\s*exit\b")
JS_EXIT = re.compile(r"\bprocess\s*\.\s*exit\b")
GO_EXIT = re.compile(r"\bos\s*\.\s*Exit\b")


def visible(rx: re.Pattern[str], code: str, language: str) -> bool:
    out = strip(code, language)
    assert out.count("\n") == code.count("\n")
    return rx.search(out) is not None


# --- C and C++ -----------------------------------------------------------------------------


def test_cpp_digit_separator_does_not_open_a_char_literal() -> None:
    assert visible(SYSTEM, 'int n = 1\'000; system("ls");\n', "cpp")
    assert visible(SYSTEM, "long n = 0x1'F'0; double d = 1'0.5e+1'0; system(0);\n", "cpp")


def test_cpp_raw_string_with_quote_and_backslash() -> None:
    assert visible(SYSTEM, 'auto s = R"("\\)"; system("ls");\n', "cpp")
    assert visible(SYSTEM, 'auto s = u8R"x(a)" b)x"; system("ls");\n', "cpp")
    # Inside the raw string a fake call is a literal, not code.
    assert not visible(SYSTEM, 'auto s = R"d(system("ls"))d";\n', "cpp")


def test_cpp_splice_extends_line_comment_so_next_line_is_comment() -> None:
    # The compiler reads line 2 as comment: its /* must not swallow the real call on line 3.
    code = '// note \\\n/*\nsystem("ls");\n// */\nint x;\n'
    out = strip(code, "cpp")
    assert SYSTEM.search(out)
    assert out.count("\n") == code.count("\n")
    assert out.splitlines()[2].strip() == 'system("  ");'


def test_cpp_splice_with_trailing_blank_joins_like_gcc() -> None:
    assert not visible(SYSTEM, '// note \\  \nsystem("ls");\n', "cpp")


def test_cpp_splice_inside_identifier_is_joined() -> None:
    code = 'int main() { sys\\\ntem("ls"); }\nint y;\n'
    out = strip(code, "cpp")
    assert SYSTEM.search(out)
    assert out.count("\n") == code.count("\n")
    assert out.splitlines()[2] == "int y;"


def test_cpp_header_names_are_tokens_not_comments_or_strings() -> None:
    code = '#include </usr/include/unistd.h>\n#include <a//b.h>\n#include "x/*y.h"\nint k;\n'
    out = strip(code, "cpp")
    assert "/usr/include/unistd.h" in out and "a//b.h" in out and '"x/*y.h"' in out
    assert out.splitlines()[3] == "int k;"
    assert header_names(code) == ["/usr/include/unistd.h", "a//b.h", "x/*y.h"]


def test_header_names_after_splices_digraphs_and_comments() -> None:
    code = '#inc\\\nlude <unis\\\ntd.h>\n%:include <signal.h>\n# /* c */ include "sys/x.h"\n'
    assert header_names(code) == ["unistd.h", "signal.h", "sys/x.h"]
    assert header_names('// #include <a.h>\nconst char* s = "#include <b.h>";\n') == []


def test_header_names_refuses_computed_include() -> None:
    with pytest.raises(LexError):
        header_names("#define H <unistd.h>\n#include H\n")


def test_cpp_universal_character_name_in_identifier_is_decoded() -> None:
    assert visible(SYSTEM, 'int main() { \\u0073ystem("ls"); }\n', "cpp")
    assert visible(SYSTEM, 'int main() { \\U00000073ystem("ls"); }\n', "cpp")


def test_cpp_trigraph_backslash_is_refused() -> None:
    with pytest.raises(LexError):
        strip('// x ??/\n/*\nsystem("ls");\n// */\n', "cpp")


def test_cpp_if0_block_blanked_but_else_branch_kept() -> None:
    code = '#if 0\nsystem("a");\n#else\nsystem("b");\n#endif\n'
    out = strip(code, "cuda")
    assert out.count("\n") == code.count("\n")
    assert 'system("a")' not in strip(code, "cpp", keep_strings=True)
    assert SYSTEM.search(out.splitlines()[3])


def test_cpp_if0_inside_a_string_does_not_hide_code() -> None:
    code = 'auto s = R"(\n#if 0\n)";\nsystem("ls");\n#endif\n'
    assert SYSTEM.search(strip(code, "cpp", keep_strings=True))
    assert visible(SYSTEM, code, "cpp")


def test_cpp_preprocessor_lines_stay_code_and_macro_strings_blank() -> None:
    code = '#define RUN(x) system(x) /* c */\n#pragma once\nRUN("ls");\n'
    out = strip(code, "cpp")
    assert SYSTEM.search(out) and "#pragma once" in out and "/* c */" not in out


def test_cpp_prefixed_literals_and_user_defined_literals() -> None:
    code = 'auto a = L\'"\'; auto b = u8"\'"; auto c = "x"_sv; system(0);\n'
    assert visible(SYSTEM, code, "cpp")


def test_keep_strings_keeps_contents_but_not_comments() -> None:
    code = 'const char* p = "kernel.cu"; // ref.cu\n'
    out = strip(code, "cpp", keep_strings=True)
    assert "kernel.cu" in out and "ref.cu" not in out
    assert "kernel.cu" not in strip(code, "cpp")


def test_cuda_kernel_source_is_read() -> None:
    code = (
        "#include <cuda_runtime.h>\n"
        "__global__ void __launch_bounds__(256) add(const float* __restrict__ a, float* b) {\n"
        '  int i = blockIdx.x * blockDim.x + threadIdx.x; // "x\n'
        "  b[i] = a[i] + 1'0;\n}\n"
        "void run(float* a, float* b) { add<<<1, 256>>>(a, b); }\n"
    )
    out = strip(code, "cuda")
    assert "add<<<1, 256>>>(a, b)" in out and '"x' not in out


# --- JavaScript and TypeScript -------------------------------------------------------------


def test_js_template_substitution_is_code() -> None:
    assert visible(JS_EXIT, "const s = `a ${process.exit(1)} b`;\n", "js")


def test_js_nested_template_in_substitution() -> None:
    code = "const s = `a ${f(`b ${process.exit(1)} c`)} d`;\n"
    assert visible(JS_EXIT, code, "js")
    assert not visible(JS_EXIT, "const s = `process.exit(1) ${x}`;\n", "js")


def test_js_comment_inside_substitution_is_blanked() -> None:
    code = "const s = `a ${ /* ` */ process.exit(1) } b`;\nconst t = `${x // `\n}`;\n"
    out = strip(code, "js")
    assert JS_EXIT.search(out) and "/*" not in out


def test_js_quote_inside_regex_literal() -> None:
    assert visible(JS_EXIT, 'const r = /"/; process.exit(1); const s = "x";\n', "js")
    assert visible(JS_EXIT, "if (/'/.test(s)) process.exit(1);\n", "js")


def test_js_division_is_not_a_regex() -> None:
    code = 'const q = a / b; process.exit(1); const s = "/";\n'
    assert visible(JS_EXIT, code, "js")


def test_js_escaped_identifier_is_decoded() -> None:
    assert re.search(r"\beval\b", strip("\\u0065val('1');\n", "js"))
    assert re.search(r"\beval\b", strip("\\u{65}val('1');\n", "js"))


def test_js_html_like_comments_are_refused() -> None:
    with pytest.raises(LexError):
        strip("x = 1 <!-- `\nprocess.exit(1)\n// `\n", "js")
    with pytest.raises(LexError):
        strip("x = 1;\n--> `\nprocess.exit(1)\n", "js")


def test_js_jsx_is_refused() -> None:
    with pytest.raises(LexError):
        strip('const e = <a b="process.exit(1)">x</a>;\n', "js")


def test_ts_type_annotations_and_assertions() -> None:
    code = "function f(x: string): number {\n  const y = <number>g(x);\n  return y;\n}\n"
    assert strip(code, "ts") == code
    assert visible(JS_EXIT, "const s: string = `${process.exit(1)}`;\n", "ts")


# --- Java ----------------------------------------------------------------------------------


def test_java_unicode_escape_in_identifier() -> None:
    assert visible(JAVA_EXIT, "\\u0053ystem.exit(0);\n", "java")
    assert visible(JAVA_EXIT, "\\uuu0053ystem.exit(0);\n", "java")


def test_java_unicode_newline_ends_line_comment() -> None:
    code = "int a = 1; // note \\u000a System.exit(0);\nint b;\n"
    out = strip(code, "java")
    assert JAVA_EXIT.search(out.splitlines()[0])
    assert out.count("\n") == code.count("\n")


def test_java_unicode_quote_closes_string() -> None:
    code = 'String s = "a\\u0022; System.exit(0); String t = \\u0022b";\n'
    assert visible(JAVA_EXIT, code, "java")


def test_java_escaped_backslash_is_not_a_unicode_escape() -> None:
    code = 'String s = "\\\\u0022"; System.exit(0);\n'
    assert visible(JAVA_EXIT, code, "java")


def test_java_malformed_unicode_escape_raises() -> None:
    with pytest.raises(LexError):
        strip("// see \\user\nint a;\n", "java")


def test_java_text_block_with_quotes() -> None:
    code = 'String t = """\n  say "hi" and ""\n  """; System.exit(0);\n'
    out = strip(code, "java")
    assert JAVA_EXIT.search(out) and "hi" not in out
    assert not visible(JAVA_EXIT, 'String t = """\n  System.exit(0);\n  """;\n', "java")


def test_java_char_literals() -> None:
    code = "char q = '\"'; char b = '\\''; System.exit(0); String s = \"x\";\n"
    assert visible(JAVA_EXIT, code, "java")


# --- Go ------------------------------------------------------------------------------------


def test_go_raw_string_spanning_lines_with_quotes() -> None:
    code = 'x := `a " b\nc //`\nos.Exit(1)\n'
    out = strip(code, "go")
    assert GO_EXIT.search(out) and "//" not in out
    assert not visible(GO_EXIT, "x := `\nos.Exit(1)\n`\n", "go")


def test_go_rune_and_comments() -> None:
    code = "r := '\"'; q := '\\''; /* \" */ os.Exit(1) // \"\n"
    assert visible(GO_EXIT, code, "go")


# --- every language ------------------------------------------------------------------------

PLAIN = {
    "c": "int add(int a, int b) {\n  return a + b;\n}\n",
    "cpp": "#include <vector>\nstd::vector<int> v(int n) {\n  return std::vector<int>(n);\n}\n",
    "cuda": "__global__ void k(float* a) {\n  a[threadIdx.x] *= 2.0f;\n}\n",
    "java": "class Solution {\n  int add(int a, int b) {\n    return a + b;\n  }\n}\n",
    "js": "const add = (a, b) => {\n  return a / b / 2;\n};\n",
    "ts": "const add = (a: number, b: number): number => {\n  return a + b;\n};\n",
    "go": "package main\n\nfunc add(a int, b int) int {\n\treturn a + b\n}\n",
}


@pytest.mark.parametrize("language", sorted(PLAIN))
def test_ordinary_code_unchanged(language: str) -> None:
    assert strip(PLAIN[language], language) == PLAIN[language]


FRAGMENTS = {
    "c": ["  int s = 0;\n  for (int i = 0; i < n; i++) s += a[i];\n  return s;\n}\n",
          "  return n * 2;\n"],
    "cpp": ["    std::sort(v.begin(), v.end());\n    return v;\n}\n",
            "    if (x > 0) {\n        return \"yes\";\n    }\n    return \"no\";\n"],
    "java": ["        int n = s.length(); // count\n        return n;\n    }\n}\n",
             "        List<Integer> r = new ArrayList<>();\n        return r;\n"],
    "js": ["  let x = a.map((y) => y * 2);\n  return x.length / 2;\n}\n",
           "  if (a) {\n    return `${a}!`;\n  }\n  return /x+/.test(b);\n"],
    "ts": ["  const m: Map<string, number> = new Map();\n  return [...m.keys()].length;\n}\n"],
    "go": ["\tn := len(s)\n\tfor i := 0; i < n; i++ {\n\t\tn += i\n\t}\n\treturn n\n}\n",
           "\treturn strings.Repeat(\"x\", n)\n"],
}  # fmt: skip


@pytest.mark.parametrize(
    ("language", "code"), [(lang, c) for lang, codes in FRAGMENTS.items() for c in codes]
)
def test_fragments_do_not_raise(language: str, code: str) -> None:
    assert strip(code, language).count("\n") == code.count("\n")


UNTERMINATED = [
    ("c", 'char* s = "abc;\nint x;\n'),
    ("cpp", "char c = 'a;\n"),
    ("cpp", "/* never closed\nint x;\n"),
    ("cpp", 'auto s = R"x(abc)";\n'),
    ("cuda", 'auto s = "a\\\n'),
    ("java", 'String s = "abc;\n'),
    ("java", 'String t = """\n  abc\n'),
    ("java", 'String t = """abc""";\n'),
    ("js", 'let s = "abc;\n'),
    ("js", "let s = `abc ${x};\n"),
    ("ts", "let r = /abc;\n"),
    ("go", "x := `abc\n"),
    ("go", 'x := "abc\n'),
]


@pytest.mark.parametrize(("language", "code"), UNTERMINATED)
def test_unterminated_literal_or_comment_raises(language: str, code: str) -> None:
    with pytest.raises(LexError):
        strip(code, language)


@pytest.mark.parametrize("language", ["c", "java", "js"])
def test_bare_carriage_return_is_refused(language: str) -> None:
    with pytest.raises(LexError):
        strip("int a; // x\rint b;\n", language)


def test_crlf_line_endings_are_fine() -> None:
    code = "int a; // x\r\nint b;\r\n"
    assert strip(code, "cpp") == "int a;     \r\nint b;\r\n"


def test_readings_that_disagree_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    # A hand lexer that took code for a comment must be caught by tree-sitter's reading.
    code = 'int main() { system("ls"); return 0; }\n'
    wrong = clex._Reading(comments=[(13, 26)])
    monkeypatch.setattr(clex, "_hand_reading", lambda text, language: wrong)
    with pytest.raises(LexError):
        strip(code, "cpp")


def test_unknown_language_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        strip("x", "cobol")


def test_go_import_paths_and_toolchain_directives_stay_visible() -> None:
    code = (
        'package main\n\nimport (\n\t"os/exec"\n\tf "fmt"\n)\nimport "C"\n\n'
        '//go:linkname now runtime.nanotime\nfunc now() int64 // a "quote\n'
        'var s = "os/exec"\n'
    )
    out = strip(code, "go")
    assert '"os/exec"' in out.splitlines()[3] and '"C"' in out and "go:linkname" in out
    assert "quote" not in out and 'var s = "       "' in out


@pytest.mark.parametrize("keyword", ["yield", "await"])
def test_js_regex_after_yield_or_await_is_refused(keyword: str) -> None:
    # Outside a generator/async function the `/` divides, and the "regex" is code.
    code = f"function* g() {{\n  {keyword} /x; process.exit(1); let y = 1/ + 1;\n}}\n"
    with pytest.raises(LexError):
        strip(code, "js")


def test_c_digit_separator_and_raw_string_are_refused() -> None:
    # Both depend on -std in C (C23 or C17; gnu or iso modes); C++ has them for sure.
    with pytest.raises(LexError):
        strip("#define M(a, b) b\nint x = M(1'x', 0) + '0';\n", "c")
    with pytest.raises(LexError):
        strip('const char* s = R"(a)";\n', "c")
    assert strip('const char* s = R"(a)";\n', "cpp") == 'const char* s = R"   ";\n'


def test_cpp23_delimited_and_named_escapes_in_identifiers() -> None:
    assert visible(SYSTEM, 'int main() { \\u{73}ystem("ls"); }\n', "cpp")
    assert visible(SYSTEM, 'int main() { \\N{LATIN SMALL LETTER S}ystem("ls"); }\n', "cpp")
    with pytest.raises(LexError):
        strip("int \\N{NO SUCH NAME}x;\n", "cpp")


@pytest.mark.parametrize(
    ("language", "code"),
    [
        ("js", 'const s = "héllo→"; // ü\nprocess.exit(`${"ä"}x`);\n'),
        ("java", "String s = \"héllo→\"; // ü\nSystem.exit(0); char c = 'ä';\n"),
        ("go", 's := "héllo→" // ü\nos.Exit(1)\n'),
    ],
)
def test_non_ascii_text_keeps_offsets(language: str, code: str) -> None:
    out = strip(code, language)
    assert out.count("\n") == code.count("\n")
    assert not re.search(r"[^\x00-\x7f]", out)
    assert re.search(r"^(process\.exit|System\.exit|os\.Exit)\(", out.splitlines()[1])


def test_cpp_splice_inside_raw_string_is_refused() -> None:
    # The compiler undoes splices in raw strings: `)x\<newline>"` does not end it there.
    code = 'auto s = R"x(abc)x\\\n"; /* )x"; system("ls"); // */\n'
    with pytest.raises(LexError):
        strip(code, "cpp")


def test_cpp_has_include_argument_is_a_header_name() -> None:
    code = '#if __has_include(<x/*>)\n#endif\nsystem("ls");\n// */\n'
    assert visible(SYSTEM, code, "cpp")
    assert header_names(code) == ["x/*"]


@pytest.mark.parametrize(
    "closing", ["%:endif\n", "#\fendif\n", "#elifdef __cplusplus\n", "#elifndef X\n"]
)
def test_cpp_if0_ends_where_the_preprocessor_ends_it(closing: str) -> None:
    opener = "" if closing.startswith(("#elif",)) else "%:if 1\n"
    code = f'#if 0\n{closing}system("ls");\n{opener}#endif\n'
    assert visible(SYSTEM, code, "cpp")


def test_java_unicode_carriage_return_is_refused() -> None:
    # javac ends a // comment at a decoded CR too; this module counts lines by LF.
    with pytest.raises(LexError):
        strip("int a; // x \\u000d System.exit(0);\n", "java")


def test_js_regex_after_yield_behind_a_long_comment_is_refused() -> None:
    code = f"function* g() {{\n  yield /* {'c' * 500} */ /x; process.exit(1); let y = 1/ + 1;\n}}\n"
    with pytest.raises(LexError):
        strip(code, "js")
    assert strip("function* g() { const a = x.y / 2; yield 1; }\n", "js")


def test_cpp_digraphs_are_spelled_out_for_the_rules() -> None:
    code = '%:include <unistd.h>\n<:<:gnu::constructor:>:> void f() <% %>\nconst char* s = "<:";\n'
    out = strip(code, "cpp", keep_strings=True)
    assert out.splitlines()[0] == "#include <unistd.h>"
    assert re.search(r"\[\[\s*gnu\s*::", out) and "void f() { }" in out and '"<:"' in out
    assert "std::vector<::std::string>" in strip("std::vector<::std::string> v;\n", "cpp")


@pytest.mark.parametrize("language", sorted(clex.LANGUAGES))
def test_empty_and_blank_sources(language: str) -> None:
    assert strip("", language) == ""
    assert strip("\n\n", language) == "\n\n"


@pytest.mark.parametrize("language", ["js", "ts"])
def test_js_slash_after_arrow_function_body_is_refused(language: str) -> None:
    # JS inserts a semicolon after `() => {}` and reads /"/ as a regex; tree-sitter divides.
    with pytest.raises(LexError):
        strip('x = () => {}\n/"/; process.exit(1); //"\n', language)
    # A function expression can be divided: JS and tree-sitter agree.
    assert strip("x = function () {}\n/ 2;\nprocess.exit(1);\n", language)


def test_ts_slash_after_angle_bracket_is_refused() -> None:
    with pytest.raises(LexError):
        strip('let v = a < b > /"/; process.exit(1); //"\n', "ts")
