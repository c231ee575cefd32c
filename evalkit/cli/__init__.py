"""The `evalkit` command: a thin wrapper over the library, one module per subcommand.

Each subcommand module has `register(commands)`, which adds its parser and sets `handler`
(a function of the parsed args returning the exit code; see `evalkit.cli.exit_codes`).
Any EvalkitError becomes exit 2 with the message on stderr; Ctrl-C exits 130 after
temporary stores are removed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from evalkit.cli import bench, config, init, mutants, report, run
from evalkit.cli.exit_codes import EXIT_INTERRUPTED, EXIT_USAGE
from evalkit.errors import EvalkitError


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (also used to document the CLI)."""
    parser = argparse.ArgumentParser(
        prog="evalkit", description="Measure how well an agent's long-term memory retrieves what it should."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (run, report, bench, mutants, config, init):
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `evalkit` script; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except EvalkitError as exc:
        print(f"evalkit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("evalkit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
