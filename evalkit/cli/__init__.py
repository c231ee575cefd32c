"""The `evalkit` command: a thin wrapper over the library, one module per subcommand.

Each subcommand module has `register(commands)`, which adds its parser and sets `handler`
(a function of the parsed args returning the exit code; see `evalkit.cli.exit_codes`).
Any EvalkitError, and any OSError (an output that cannot be written), becomes exit 2 with the
message on stderr. Ctrl-C exits 130 and SIGTERM 143, after temporary stores are removed
(`evalkit.cli.signals`). This module imports nothing heavy: the subcommands (and pandas,
papermill...) load inside `main`, after the signal handling is in place, so a Ctrl-C while they
load prints one line, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from evalkit.cli.exit_codes import EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USAGE
from evalkit.cli.signals import Terminated, sigterm_raises
from evalkit.errors import EvalkitError


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (also used to document the CLI)."""
    from evalkit.cli import (
        bench,
        compare,
        config,
        export,
        history,
        imports,
        init,
        mutants,
        report,
        run,
        scenario,
        score,
        serve,
        sweep,
    )

    parser = argparse.ArgumentParser(
        prog="evalkit", description="Measure how well an agent's long-term memory retrieves what it should."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = (run, report, bench, mutants, score, export, serve, sweep, compare, history, config, init)
    for module in (*modules, imports, scenario):
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `evalkit` script; returns the exit code."""
    try:
        with sigterm_raises():
            args = build_parser().parse_args(argv)
            return int(args.handler(args))
    except EvalkitError as exc:
        print(f"evalkit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"evalkit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("evalkit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print("evalkit: terminated (SIGTERM)", file=sys.stderr)
        return EXIT_TERMINATED


if __name__ == "__main__":
    sys.exit(main())
