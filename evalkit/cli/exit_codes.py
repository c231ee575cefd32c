"""Exit codes of every evalkit command."""

EXIT_OK = 0
"""No regressions."""
EXIT_REGRESSIONS = 1
"""The run has regressions (or a notebook's final assertion failed)."""
EXIT_USAGE = 2
"""Bad input or usage: any EvalkitError or argparse error."""
EXIT_INTERRUPTED = 130
"""Ctrl-C; temporary stores were removed."""
