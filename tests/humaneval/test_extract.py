from vibes_eval.benchmarks.humaneval.rust.extract import extract

HEADER = "use std::collections::HashMap;\nfn add(a: i32, b: i32) -> i32 {\n"


def test_plain_completion_is_left_alone() -> None:
    assert extract("    a + b\n}\n", HEADER, "add") == "    a + b\n}\n"


def test_fenced_body() -> None:
    text = "Here you go:\n```rust\n    a + b\n}\n```\nHope it helps."
    assert extract(text, HEADER, "add") == "    a + b\n}\n"


def test_repeated_signature_keeps_body_and_helpers_drops_main_and_dup_use() -> None:
    text = (
        "```rust\nuse std::collections::HashMap;\nuse std::cmp::max;\n"
        "fn helper(x: i32) -> i32 { x }\n\n"
        "fn add(a: i32, b: i32) -> i32 {\n    helper(a) + b\n}\n\n"
        'fn main() {\n    println!("{}", add(1, 2));\n}\n```'
    )
    out = extract(text, HEADER, "add")
    assert out.lstrip().startswith("helper(a) + b\n}")
    assert "fn helper" in out and "use std::cmp::max;" in out
    assert "fn main" not in out and "HashMap" not in out


def test_fence_without_language_and_other_blocks() -> None:
    text = "```text\nnot code\n```\n```\n    a * b\n}\n```"
    assert extract(text, HEADER, "add") == "    a * b\n}\n"
