"""Evidence and telemetry: evidence records of delivered texts and their keyed hash, metrics, traces, a task traced through the log."""
