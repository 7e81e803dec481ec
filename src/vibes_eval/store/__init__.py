"""The event-sourced result store: every evaluation is an append-only stream of events;
run tables, metrics and comparisons are projections of it. See docs/store.md."""
