"""Where and how an instance runs: its image (``images``), its install/test spec, eval
script and log parser (``specs``), and the official log folders (``logs``)."""
