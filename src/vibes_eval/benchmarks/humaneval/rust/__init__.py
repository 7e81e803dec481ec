"""The Rust internals of HumanEval-Rust: the lexer (``rustsrc``) and the reading of a
completion in its program (``scan``), the policy filter and the batching risk rules, the
toolchain and crates, the libtest harness, batched compiles and runs, ``--extract``."""
