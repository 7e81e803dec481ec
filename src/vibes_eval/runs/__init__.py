"""What a run means, on top of the store (``vibes_eval.store``, which only persists events):
its identity and resume rules (``identity``), whether its process still lives
(``liveness``), recording one evaluation (``recording``), and what `results`, `export` and
`compare` compute from the projections (``summary``, ``compare``). See docs/store.md."""
