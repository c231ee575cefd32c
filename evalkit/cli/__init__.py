"""The `evalkit` command: a thin wrapper over the library, one module per subcommand.

Each subcommand module has `register(commands)`, which adds its parser and sets `handler`
(a function of the parsed args returning the exit code; see `evalkit.cli.exit_codes`).
Any EvalkitError, and any OSError (an output that cannot be written), becomes exit 2 with the
message on stderr (and an EvalkitError's notes, such as a second failure told beside it, one
line each after it); so does an exception group whose only leaf is an EvalkitError (what an
adapter's error becomes when it is raised inside a task group or an anyio portal, the usual way
to wrap an async client): its one line, not the group's traceback. A group holding anything else
propagates as it is. Ctrl-C exits 130 and SIGTERM 143, after temporary stores are removed
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
        baseline,
        bench,
        compare,
        config,
        export,
        history,
        imports,
        init,
        lint,
        mcp,
        mutants,
        notebooks,
        report,
        run,
        scenario,
        score,
        serve,
        summary,
        sweep,
    )
    from evalkit.harness.provenance import evalkit_version

    parser = argparse.ArgumentParser(
        prog="evalkit", description="Measure how well an agent's long-term memory retrieves what it should."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {evalkit_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = (
        run,
        baseline,
        report,
        summary,
        lint,
        bench,
        mutants,
        score,
        export,
        serve,
        sweep,
        compare,
        history,
        config,
    )
    for module in (*modules, init, notebooks, imports, scenario, mcp):
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `evalkit` script; returns the exit code."""
    try:
        with sigterm_raises():
            args = build_parser().parse_args(argv)
            return int(args.handler(args))
    except EvalkitError as exc:
        _print_error(exc)
        return EXIT_USAGE
    except BaseExceptionGroup as group:
        error = sole_evalkit_error(group)
        if error is None:
            raise
        _print_error(error)
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


def _print_error(exc: EvalkitError) -> None:
    """ "evalkit: error: …" on stderr, then one "evalkit: note: …" line per note on `exc` (a second
    failure told beside it, e.g. an earlier drop that failed too)."""
    print(f"evalkit: error: {exc}", file=sys.stderr)
    for note in getattr(exc, "__notes__", ()):
        print(f"evalkit: note: {note}", file=sys.stderr)


def sole_evalkit_error(group: BaseExceptionGroup[BaseException]) -> EvalkitError | None:
    """The EvalkitError that is the only leaf of `group` (nested groups are looked through), else
    None: a group with two errors, or with anything but an EvalkitError, is not reduced."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        current = pending.pop()
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        else:
            leaves.append(current)
    return leaves[0] if len(leaves) == 1 and isinstance(leaves[0], EvalkitError) else None


if __name__ == "__main__":
    sys.exit(main())
