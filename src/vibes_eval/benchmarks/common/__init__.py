"""Jobs every benchmark needs, written once: reading sample files (``samples``), the
policy rules engine (``rules``), building verdicts (``verdicts``), a cross-process file
lock (``filelock``) and the C-family lexer (``clex``)."""
