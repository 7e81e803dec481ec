"""Kernel benchmarks from CUDAHercules-style task.yaml files: build a model's kernel, validate
it against an expert reference, time both in one run, and score speed and fast_p."""
