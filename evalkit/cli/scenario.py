"""`evalkit scenario from-trace ID --traces FILE…`: turn a production search read from
OpenTelemetry traces (a trace's failing searches, or one query id `<trace id>/<span id>`) into a
scenario file of the built-in format (`evalkit.suites.trace_scenarios`). Exit 0 = written, 2 =
bad input or usage (nothing written)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.cli.exit_codes import EXIT_OK
from evalkit.suites.trace_scenarios import DEFAULT_CATEGORY, write_trace_scenario


def register(parser: argparse.ArgumentParser) -> None:
    """Add `evalkit scenario` and its `from-trace` subcommand."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION", help="from-trace")
    from_trace = actions.add_parser(
        "from-trace",
        allow_abbrev=False,
        help="turn a failing production search into a regression scenario",
        description="Write OUT/scenarios/<name>.yaml: the records the search returned and those it should "
        "have returned as thoughts, the query, its labels, and forbid for records deleted before it. ID is a "
        "trace id (its failing searches) or a query id <trace id>/<span id> (that search). Needs "
        "--with-content (the scenario holds the query and record texts). Exit 0 = written, 2 = bad input.",
    )
    from_trace.add_argument("ident", metavar="ID", help="trace id, or query id <trace id>/<span id>")
    from_trace.add_argument(
        "--traces", type=Path, nargs="+", required=True, metavar="FILE", help="OTLP JSON trace files"
    )
    from_trace.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="suite directory (new or existing)"
    )
    from_trace.add_argument(
        "--labels", type=Path, metavar="FILE", help="label file, as for `evalkit import traces`"
    )
    from_trace.add_argument("--no-rules", action="store_true", help="no labels from later operations")
    from_trace.add_argument(
        "--with-content", action="store_true", help="copy the query and record texts (required)"
    )
    from_trace.add_argument("--name", metavar="NAME", help="scenario name (default trace-<trace id prefix>)")
    from_trace.add_argument(
        "--category", default=DEFAULT_CATEGORY, metavar="NAME",
        help=f"scenario category (default {DEFAULT_CATEGORY}; must be one of the suite's)",
    )  # fmt: skip
    from_trace.set_defaults(handler=from_trace_command)


def from_trace_command(args: argparse.Namespace) -> int:
    path, built = write_trace_scenario(
        args.traces,
        args.ident,
        args.out,
        labels=args.labels,
        rules=not args.no_rules,
        with_content=args.with_content,
        name=args.name,
        category=args.category,
    )
    for warning in built.warnings:
        print(f"evalkit: warning: {warning}", file=sys.stderr)
    print(f"wrote {path} ({len(built.query_ids)} queries; holds user text: yes)")
    print(f"run it: evalkit run --datasets {args.out}")
    return EXIT_OK
