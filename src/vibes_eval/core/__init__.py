"""Benchmark-agnostic types, protocols, metrics and the evaluation engine."""
