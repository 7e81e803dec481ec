"""The Docker runner: one locked-down container per session (see ``runner.py``) from an
image built offline here (see ``image.py``)."""
