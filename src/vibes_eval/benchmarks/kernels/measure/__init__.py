"""Measuring a kernel: whether this machine can run a task (``hardware``) and reading the
timings a run reports (``timing``)."""
