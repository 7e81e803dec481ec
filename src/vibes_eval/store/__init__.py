"""The event-sourced result store: every evaluation is an append-only stream of events;
run tables and the result cache are projections of it. What a run means (identity, resume,
summaries, comparisons) lives in ``vibes_eval.runs``, on top of it. See docs/store.md."""
