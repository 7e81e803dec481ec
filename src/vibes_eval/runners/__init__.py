"""Runners: where untrusted commands execute (local process, OS sandbox, Docker, ...)."""
