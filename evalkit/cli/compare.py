"""`evalkit compare A.json B.json [MORE.json ...]`: saved runs query by query — A and B with a
paired permutation test per metric, their ranking changes, then every run side by side against a
baseline run with Holm-corrected paired t-tests (evalkit.views.compare, .ranking_diff,
.compare_many)."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.cli.args import int_in
from evalkit.cli.exit_codes import EXIT_OK
from evalkit.errors import UsageError
from evalkit.harness.uncertainty import DEFAULT_RESAMPLES, DEFAULT_SEED
from evalkit.views.compare import compare_runs
from evalkit.views.compare_many import compare_many
from evalkit.views.console import render_comparison, render_many, render_ranking_diff
from evalkit.views.frames import load_run
from evalkit.views.ranking_diff import ranking_diff


def register(compare: argparse.ArgumentParser) -> None:
    """Add `evalkit compare`."""
    compare.description = (
        "Pair the queries of JSON reports (by scenario and query number). For the first two "
        "runs A and B (each named by its file and identity: system, mode, top_k, gate, suite, commit): per "
        "metric the means, Δ = B − A and a two-sided paired permutation p-value, the scenarios whose status "
        "flipped, the queries whose metrics or first relevant rank moved, and each query's ranking change "
        "(ids entered, left, moved; largest first). Then every run side by side, overall and per category, "
        "against the --baseline run with paired t-tests Holm-corrected over each run's tests. Exit 0, or 2 "
        "when a report cannot be read or the runs share no query."
    )
    compare.add_argument("a", type=Path, help="JSON report of the first run (before)")
    compare.add_argument("b", type=Path, help="JSON report of the second run (after)")
    compare.add_argument(
        "more", type=Path, nargs="*", metavar="MORE", help="more JSON reports to set side by side"
    )
    compare.add_argument(
        "--baseline", type=int, default=1, metavar="N",
        help="which run (1 = A, 2 = B, ...) the side-by-side table tests the others against (default 1)",
    )  # fmt: skip
    compare.add_argument(
        "--changes", type=int_in(0, 1_000_000), default=20, metavar="N",
        help="how many ranking changes to print, largest first (default 20)",
    )  # fmt: skip
    compare.add_argument(
        "--pass", dest="pass_name", choices=("ungated", "gated"), default="ungated",
        help="which pass of both runs to compare: the measurement (ungated, default) or the pass under "
        "the relevance gate (gated)",
    )  # fmt: skip
    compare.add_argument(
        "--resamples", type=int_in(100, 1_000_000), default=DEFAULT_RESAMPLES, metavar="N",
        help=f"permutations of the paired test (default {DEFAULT_RESAMPLES}; exact when there are fewer)",
    )  # fmt: skip
    compare.add_argument(
        "--seed",
        type=int_in(0, 2**32 - 1),
        default=DEFAULT_SEED,
        help=f"random seed of the test, 0 to 2^32-1 (default {DEFAULT_SEED})",
    )
    compare.set_defaults(handler=compare_command)


def compare_command(args: argparse.Namespace) -> int:
    paths = [args.a, args.b, *args.more]
    if not 1 <= args.baseline <= len(paths):
        raise UsageError(f"--baseline {args.baseline} is not one of the {len(paths)} runs (1..{len(paths)})")
    runs = [load_run(path) for path in paths]
    comparison = compare_runs(
        runs[0],
        runs[1],
        pass_name=args.pass_name,
        resamples=args.resamples,
        seed=args.seed,
        names=(str(args.a), str(args.b)),
    )
    print(render_comparison(comparison))
    print()
    print(render_ranking_diff(ranking_diff(runs[0], runs[1], pass_name=args.pass_name), limit=args.changes))
    print()
    print(render_many(compare_many(runs, baseline=args.baseline - 1, pass_name=args.pass_name)))
    return EXIT_OK
