"""Python: the trusted tests in one process, each sample in a forked process of its own."""
