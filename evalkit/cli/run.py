"""`evalkit run`: run the scenario suite, print the summary, write the JSON report."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.api import DEFAULT_DATASETS, DEFAULT_THRESHOLDS, run_eval
from evalkit.cli.args import int_in, unit_float
from evalkit.cli.exit_codes import EXIT_OK, EXIT_REGRESSIONS
from evalkit.console import render_report
from evalkit.errors import UsageError
from evalkit.thresholds import baseline_entry, update_thresholds


def register(commands: argparse._SubParsersAction) -> None:
    """Add `evalkit run`."""
    run = commands.add_parser(
        "run",
        help="run the scenario suite, print the summary, write the JSON report",
        description="Run the labelled scenario suite against the reference memory store (or --real "
        "with a sentence-transformers model), score it, gate it on the recorded baselines and write "
        "the JSON report. Exit 0 = no regressions, 1 = regressions, 2 = bad input or usage.",
    )
    run.add_argument(
        "--top-k", type=int_in(1, 1000), default=5, metavar="N", help="results per query (default 5)"
    )
    run.add_argument(
        "--out", type=Path, default=Path("reports/report.json"), metavar="PATH",
        help="JSON report path (default reports/report.json)",
    )  # fmt: skip
    run.add_argument(
        "--update-baseline", action="store_true",
        help="record this run as the baseline of the current mode in the thresholds file and exit 0",
    )  # fmt: skip
    run.add_argument(
        "--no-gated", action="store_true", help="skip the report-only pass under the relevance gate"
    )
    run.add_argument(
        "--datasets", type=Path, default=DEFAULT_DATASETS, metavar="DIR",
        help="scenario directory (default datasets/)",
    )  # fmt: skip
    run.add_argument(
        "--thresholds", type=Path, default=DEFAULT_THRESHOLDS, metavar="PATH",
        help="baselines and thresholds file (default datasets/thresholds.json)",
    )  # fmt: skip
    run.add_argument(
        "--scenario", action="append", metavar="NAME",
        help="run only this scenario (repeatable); assertions gate, metrics are not compared",
    )  # fmt: skip
    run.add_argument(
        "--min-relevance", type=unit_float, metavar="X",
        help="gate of the gated pass (default: the service default, 0.4)",
    )  # fmt: skip
    run.add_argument("--real", action="store_true", help="use a real sentence-transformers embedder")
    run.add_argument(
        "--model", metavar="NAME_OR_PATH",
        help="with --real: sentence-transformers model (default: packaged all-MiniLM-L6-v2)",
    )  # fmt: skip
    cache = run.add_mutually_exclusive_group()
    cache.add_argument(
        "--cache", type=Path, metavar="PATH",
        help="with --real: embedding cache file (default: $EVALKIT_EMBED_CACHE or the user cache dir)",
    )  # fmt: skip
    cache.add_argument("--no-cache", action="store_true", help="with --real: do not use the embedding cache")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bars")
    run.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    if args.model and not args.real:
        raise UsageError("--model needs --real")
    if (args.cache or args.no_cache) and not args.real:
        raise UsageError("--cache/--no-cache need --real")
    if args.update_baseline and args.scenario:
        raise UsageError("--update-baseline records the whole suite; drop --scenario")
    mode = "real" if args.real else "deterministic"
    run = run_eval(
        mode=mode,
        top_k=args.top_k,
        gated=not args.no_gated,
        datasets=args.datasets,
        thresholds=args.thresholds,
        scenarios=args.scenario,
        min_relevance=args.min_relevance,
        model=args.model,
        cache=False if args.no_cache else args.cache,
        progress=args.progress,
    )
    run.save(args.out)
    print(render_report(run.report))
    print(f"report: {args.out}")
    if args.update_baseline:
        path = update_thresholds(args.thresholds, mode, baseline_entry(run.report, args.top_k))
        print(f"baseline for mode {mode!r} recorded in {path}")
        return EXIT_OK
    return EXIT_OK if run.ok else EXIT_REGRESSIONS
