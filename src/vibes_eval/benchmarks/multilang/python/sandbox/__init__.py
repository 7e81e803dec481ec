"""Files copied into the sandbox and run there (stdlib only, no imports from vibes_eval)."""
