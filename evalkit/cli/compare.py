"""`evalkit compare A.json B.json`: two saved runs query by query, with a paired permutation test
per metric (evalkit.views.compare)."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.cli.args import add_deprecated_flag, int_in
from evalkit.cli.exit_codes import EXIT_OK
from evalkit.harness.uncertainty import DEFAULT_RESAMPLES, DEFAULT_SEED
from evalkit.views.compare import compare_runs
from evalkit.views.console import render_comparison
from evalkit.views.frames import load_run


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `evalkit compare`."""
    compare = commands.add_parser(
        "compare",
        help="compare two saved runs query by query, with a paired permutation test per metric",
        description="Pair the queries of two JSON reports (by scenario and query index) and print per "
        "metric the means of A and B, Δ = B − A and a two-sided paired permutation p-value, the scenarios "
        "whose status flipped and the queries whose metrics or first relevant rank moved. Exit 0, or 2 "
        "when a report cannot be read or the runs share no query.",
    )
    compare.add_argument("a", type=Path, help="JSON report of the first run (before)")
    compare.add_argument("b", type=Path, help="JSON report of the second run (after)")
    compare.add_argument(
        "--pass", dest="pass_name", choices=("ungated", "gated"), default="ungated",
        help="which pass of both runs to compare: the measurement (ungated, default) or the pass under "
        "the relevance gate (gated)",
    )  # fmt: skip
    add_deprecated_flag(compare, "--gated", replacement="--pass gated", dest="pass_name", const="gated")
    compare.add_argument(
        "--resamples", type=int_in(100, 1_000_000), default=DEFAULT_RESAMPLES, metavar="N",
        help=f"permutations of the paired test (default {DEFAULT_RESAMPLES}; exact when there are fewer)",
    )  # fmt: skip
    compare.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"random seed of the test (default {DEFAULT_SEED})"
    )
    compare.set_defaults(handler=compare_command)


def compare_command(args: argparse.Namespace) -> int:
    comparison = compare_runs(
        load_run(args.a),
        load_run(args.b),
        pass_name=args.pass_name,
        resamples=args.resamples,
        seed=args.seed,
        names=(str(args.a), str(args.b)),
    )
    print(render_comparison(comparison))
    return EXIT_OK
