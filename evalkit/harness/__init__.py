"""The harness: one run's configuration, the runner, the per-query checks, aggregation, the check
against recorded baselines, provenance and the result records — and `evaluate`, the one evaluation path."""
