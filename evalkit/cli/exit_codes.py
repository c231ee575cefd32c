"""Exit codes of every evalkit command."""

EXIT_OK = 0
"""No regressions."""
EXIT_REGRESSIONS = 1
"""The run has regressions (or a notebook's final assertion failed)."""
EXIT_USAGE = 2
"""Bad input or usage: any EvalkitError or argparse error (a memory system's failure included), an
output that cannot be written, or an error evalkit did not mean to raise (a bug: its traceback is
printed). Never 1: that is only regressions."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (SIGINT, 128 + 2); temporary stores were removed."""
EXIT_TERMINATED = 143
"""SIGTERM (128 + 15, how CI cancels a job); temporary stores were removed."""
