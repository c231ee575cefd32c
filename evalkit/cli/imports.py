"""`evalkit import traces FILE…`: read OpenTelemetry traces (OTLP JSON) and write a run file, a
scenario suite with the labels and a query log that `evalkit score` reads
(`evalkit.suites.trace_import`). Exit 0 = written (warnings on stderr), 2 = bad input or usage
(nothing written)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.cli.exit_codes import EXIT_OK
from evalkit.suites.trace_import import RUN_FILE, import_traces


def register(parser: argparse.ArgumentParser) -> None:
    """Add `evalkit import` and its `traces` subcommand."""
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND", help="what to import: traces")
    traces = kinds.add_parser(
        "traces",
        allow_abbrev=False,
        help="OTLP JSON traces: gen_ai memory/retrieval spans and OpenInference RETRIEVER spans",
        description="Read OTLP JSON trace files (an ExportTraceServiceRequest, or JSON Lines of them as "
        "the file exporter writes) and write OUT/run.jsonl, OUT/queries.json (the query log), "
        "OUT/suite.yaml and OUT/scenarios/ (one labelled and one unlabelled scenario per memory store). "
        "Then: evalkit score --run OUT/run.jsonl --suite builtin --datasets OUT. "
        "Exit 0 = written, 2 = bad input (nothing written).",
    )
    traces.add_argument("files", type=Path, nargs="+", metavar="FILE", help="OTLP JSON trace files")
    traces.add_argument("--out", type=Path, required=True, metavar="DIR", help="directory to write into")
    traces.add_argument(
        "--labels", type=Path, metavar="FILE",
        help="label file: JSONL {\"query_id\", \"relevant\"} or TREC qrels; it always wins over the rules",
    )  # fmt: skip
    traces.add_argument(
        "--no-rules", action="store_true",
        help="do not label from later operations (deleted record → forbid, updated record → stale)",
    )  # fmt: skip
    traces.add_argument(
        "--with-content", action="store_true",
        help="copy query and record texts into the written files (default: ids, scores and times only)",
    )  # fmt: skip
    traces.set_defaults(handler=import_traces_command)


def import_traces_command(args: argparse.Namespace) -> int:
    result = import_traces(
        args.files, args.out, labels=args.labels, rules=not args.no_rules, with_content=args.with_content
    )
    for warning in result.warnings:
        print(f"evalkit: warning: {warning}", file=sys.stderr)
    print(result.summary())
    for path in result.files:
        print(f"wrote {path}")
    print(f"score it: evalkit score --run {args.out / RUN_FILE} --suite builtin --datasets {args.out}")
    return EXIT_OK
