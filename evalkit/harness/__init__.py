"""The harness: one run's configuration, the runner, the per-query checks, aggregation, gating on
recorded baselines, provenance and the result records — and `evaluate`, the one evaluation path."""
