"""Jobs every benchmark needs, written once: reading sample files (``samples``), the
policy rules engine (``rules``), building verdicts (``verdicts``) and the C-family lexer
(``clex``). The cross-process file lock is ``core.filelock`` (runners use it too)."""
