"""Benchmarks: each knows its tasks, how one sample runs, and how it is scored."""
