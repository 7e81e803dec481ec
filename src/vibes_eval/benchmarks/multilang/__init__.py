"""Functional correctness beyond Rust: Python, C++, Go, JavaScript, Java and the
MultiPL-E languages."""
