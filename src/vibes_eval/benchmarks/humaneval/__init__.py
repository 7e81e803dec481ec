"""HumanEval-Rust: ``benchmark`` wires ``config``, ``tasks``, ``samples``, ``run``,
``judge`` and ``prompting``; what is Rust's own (the lexer, the scan, the policy and risk
rules, the toolchain, the crates, the test harness, batching) lives in ``rust/``."""
