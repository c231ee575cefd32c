"""The `evalkit` command: a thin wrapper over the library, one module per subcommand
(`COMMANDS`), each with `register(parser)`.

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
(`evalkit.cli.signals`).

Start-up: `COMMANDS` names every subcommand, its module and its one-line help, so `--help`,
`--version` and a usage error import no subcommand module, and a command imports its own module
only (`parse_args`); a module imports what its parser needs at the top and what its handler needs
inside the handler, so `config`, `lint` and `init` never load pandas, matplotlib, scipy, torch or
the HTTP and MCP stacks. Everything loads inside `main`, after the signal handling is in place, so
a Ctrl-C while it loads prints one line, never a traceback.

Garbage collection: a command runs with the cyclic collector's thresholds raised
(`COMMAND_GC_THRESHOLD`, `fewer_collections`), restored when it returns. A run holds every
scenario's results until its report is written, and with Python's defaults each full collection
walks all of them again: a quarter of a 1,500-scenario `evalkit run`'s time. Cycles are still
collected, only less often; the library itself (`run_eval` in a notebook) leaves the settings
alone.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import importlib
import sys
import traceback
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager

from evalkit.cli.exit_codes import EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USAGE
from evalkit.cli.signals import Terminated, sigterm_raises
from evalkit.errors import EvalkitError, show_tracebacks, sole_evalkit_error
from evalkit.packaged import evalkit_version

COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "run the scenario suite, print the summary, write the JSON report"),
    "baseline": ("baseline", "record a saved run as a baseline (evalkit baseline record [REPORT])"),
    "report": ("report", "run a report notebook (papermill) and write the executed notebook and its HTML"),
    "summary": (
        "summary",
        "print a saved run as Markdown: verdict, regressions, biggest drops, suite strength",
    ),
    "lint": ("lint", "find the queries of a suite that cannot fail (and how to fix each)"),
    "bench": ("bench", "run a public benchmark (BEIR directory, LoCoMo file) and write the JSON report"),
    "mutants": ("mutants", "prove the gate catches real search bugs: run the suite once per injected fault"),
    "score": ("score", "score a TREC or JSONL run file produced elsewhere against a suite or benchmark"),
    "export": ("export", "write a report's run and qrels as TREC files"),
    "serve": (
        "serve",
        "serve the reference store over evalkit's HTTP contract (or MCP over stdio with --mcp), or "
        "an OpenAI-compatible embeddings endpoint (--embeddings)",
    ),
    "sweep": (
        "sweep",
        "re-apply the relevance gate to a saved run at many values and recommend one per category",
    ),
    "compare": (
        "compare",
        "compare saved runs query by query: paired tests, ranking changes, N runs side by side",
    ),
    "compare-systems": (
        "compare_systems",
        "run several systems over one suite and set them side by side: one table, one HTML page",
    ),
    "history": ("history", "print the run history: overall metrics of every run appended by `evalkit run`"),
    "config": ("config", "print the resolved project settings and where each came from"),
    "init": (
        "init",
        "scaffold an evaluation project: settings, an example scenario, baselines, a CI workflow",
    ),
    "notebooks": ("notebooks", "copy the report notebooks into a folder, to open and run them in JupyterLab"),
    "import": ("imports", "import production data (OpenTelemetry traces) to score with `evalkit score`"),
    "scenario": ("scenario", "write scenario files (from production traces)"),
    "mcp": ("mcp", "look at an MCP memory server: its tools, and a draft mapping for --system mcp:FILE"),
}
"""Each subcommand → (its module under `evalkit.cli`, its one-line help), in the order `evalkit
--help` lists them. A module's `register(parser)` gives the command's parser (named and listed
here) its description, arguments and `handler` (a function of the parsed args returning the exit
code; see `evalkit.cli.exit_codes`)."""


def build_parser(registered: Collection[str] = tuple(COMMANDS)) -> argparse.ArgumentParser:
    """The argument parser with every command listed; the commands in `registered` (default: all,
    to document the CLI) get their arguments from their modules, which are imported here. The
    others stay empty and without `-h`: they are there to be listed and recognised."""
    parser = argparse.ArgumentParser(
        prog="evalkit",
        allow_abbrev=False,
        description="Measure how well an agent's long-term memory retrieves what it should.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show program's version number and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, summary) in COMMANDS.items():
        if name in registered:
            command = commands.add_parser(name, help=summary, allow_abbrev=False)
            importlib.import_module(f"evalkit.cli.{module}").register(command)
        else:
            commands.add_parser(name, help=summary, add_help=False, allow_abbrev=False)
    return parser


class _Version(argparse.Action):
    """`--version`: argparse's version action with the version read when the flag is given, not
    each time a parser is built (reading it loads importlib.metadata, which no other command needs)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"{parser.prog} {evalkit_version()}")
        parser.exit()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse `argv` (default: the command line) importing only the module of the command it names.

    Two steps: the parser with no command registered finds the command (and handles `--help`,
    `--version`, a missing or unknown command: it prints and exits), then the parser with that
    command registered parses everything, so the outcome is the full parser's."""
    command = build_parser(registered=()).parse_known_args(argv)[0].command
    parser = build_parser(registered=(command,))
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        refuse_unknown(parser, args, unknown)
    return args


COMMAND_GC_THRESHOLD = (10_000, 10, 10)
"""The collector's thresholds while a command runs (Python's are 700, 10, 10): a young collection
every 10,000 allocations instead of 700, so the full collections that walk a run's results come
about a fifteenth as often (a 1,500-scenario run: one instead of thirteen)."""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """The block with `COMMAND_GC_THRESHOLD`, the thresholds before it restored after it."""
    before = gc.get_threshold()
    gc.set_threshold(*COMMAND_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `evalkit` script; returns the exit code."""
    try:
        with sigterm_raises(), fewer_collections():
            args = parse_args(argv)
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


RENAMED: dict[str, str] = {
    "--real": "--embedder real",
    "--model": "--embedder real:MODEL",
    "--no-cache": "--cache none",
    "--no-gated-pass": "--gated-pass off",
    "--no-gated": "--gated-pass off",
    "--min-relevance": "--gated-pass MIN_RELEVANCE",
    "--no-history": "--history none",
    "--perturb-curve": "--perturb KIND=N,N,…",
    "--fail-on-escaped": "--mutants fail",
    "--address": "--executor ray://ADDRESS",
    "--update-baseline": "`evalkit baseline record` after the run",
    "--update-gated-baseline": "`evalkit baseline record --gated` after the run",
}
"""Flags of the unreleased 0.1.0 drafts that are gone (no aliases, CHANGELOG.md) → what says the
same now; `refuse_unknown` names it where the command has it."""


def refuse_unknown(parser: argparse.ArgumentParser, args: argparse.Namespace, unknown: list[str]) -> None:
    """Exit 2 for arguments no parser took, with the usage of the (sub)command they were given to
    and, for a flag close to one of its flags, "did you mean --flag?" (for a removed flag, what
    replaced it: `RENAMED`)."""
    command = parser
    while True:
        subparsers = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        chosen = getattr(args, subparsers[0].dest, None) if subparsers else None
        if chosen is None or chosen not in subparsers[0].choices:
            break
        command = subparsers[0].choices[chosen]
    flags = [flag for action in command._actions for flag in action.option_strings if flag.startswith("--")]
    hints = []
    for word in (w.split("=", 1)[0] for w in unknown if w.startswith("-")):
        replacement = RENAMED.get(word, "")
        if replacement.split(" ")[0] in flags or (replacement.startswith("`") and "run" in command.prog):
            hints.append(f"{word} is now {replacement}")
        elif close := difflib.get_close_matches(word, flags, n=1, cutoff=0.75):
            hints.append(f"{word}: did you mean {close[0]}?")
    message = f"unrecognized arguments: {' '.join(unknown)}"
    command.error(message + ("; " + "; ".join(hints) if hints else ""))


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
