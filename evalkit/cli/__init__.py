"""The `evalkit` command: a thin wrapper over the library, one module per subcommand.

Each subcommand module has `register(commands)`, which adds its parser and sets `handler`
(a function of the parsed args returning the exit code; see `evalkit.cli.exit_codes`).
Any EvalkitError, and any OSError (an output that cannot be written), becomes exit 2 with the
message on stderr (and an EvalkitError's notes, such as a second failure told beside it, one
line each after it); so does an exception group whose only leaf is an EvalkitError (what an
adapter's error becomes when it is raised inside a task group or an anyio portal, the usual way
to wrap an async client): its one line, not the group's traceback. A memory system's failure (a
MemorySystemError: whatever a system raised, in any method) is one of them: one line naming the
system, the method, the scenario, the query and the fix. With `EVALKIT_TRACEBACK=1`
(`evalkit.errors.TRACEBACK_ENV`) the traceback is printed above the line (for a system's failure,
the traceback of the system's own exception, also from a worker). Any other exception is a bug in
evalkit: its traceback, then one line saying so, and exit 2 too: exit 1 means regressions and
nothing else. Ctrl-C exits 130 and SIGTERM 143, after temporary stores are removed
(`evalkit.cli.signals`). This module imports nothing heavy: the subcommands (and pandas,
papermill...) load inside `main`, after the signal handling is in place, so a Ctrl-C while they
load prints one line, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from evalkit.cli.exit_codes import EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USAGE
from evalkit.cli.signals import Terminated, sigterm_raises
from evalkit.errors import EvalkitError, show_tracebacks, sole_evalkit_error


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
            if not isinstance(group, ExceptionGroup):  # a Ctrl-C or an exit inside
                raise
            return _internal_error(group)
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
    except Exception as exc:
        return _internal_error(exc)


def _print_error(exc: EvalkitError) -> None:
    """ "evalkit: error: …" on stderr, then one "evalkit: note: …" line per note on `exc` (a second
    failure told beside it, e.g. an earlier drop that failed too); under `EVALKIT_TRACEBACK=1`,
    the traceback first (a MemorySystemError's: the system's own exception's, `origin`)."""
    if show_tracebacks():
        origin = getattr(exc, "origin", "")
        print(
            origin.rstrip("\n") if origin else "".join(traceback.format_exception(exc)).rstrip("\n"),
            file=sys.stderr,
        )
    print(f"evalkit: error: {exc}", file=sys.stderr)
    for note in getattr(exc, "__notes__", ()):
        print(f"evalkit: note: {note}", file=sys.stderr)


def _internal_error(exc: Exception) -> int:
    """An exception evalkit did not mean to raise (a bug): its traceback, one line saying so, exit 2."""
    traceback.print_exception(exc, file=sys.stderr)
    print(
        f"evalkit: internal error: {type(exc).__name__}: {exc}; this is a bug in evalkit, please report it "
        "with the traceback above",
        file=sys.stderr,
    )
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
