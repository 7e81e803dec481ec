"""stdio-python: a complete vibes-eval benchmark in eight short modules, the template for
a new kind (docs/new-benchmark.md). A task is a description and input/output cases; a
sample is a Python program; it passes when it prints each case's expected output."""
