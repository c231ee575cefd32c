"""`evalkit sweep`: the relevance gate re-applied to a saved run at many values, and the largest
gate each category can afford (evalkit.views.sweep)."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.cli.args import unit_float
from evalkit.cli.exit_codes import EXIT_OK
from evalkit.views.console import render_sweep
from evalkit.views.frames import load_run
from evalkit.views.sweep import DEFAULT_SWEEP_VALUES, DEFAULT_TOLERANCE, recommend_gates

SCOPES = ("overall", "category", "scenario")


def _gate_values(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers from 0 to 1, got {text!r}"
        ) from None
    if not values or not all(0.0 <= v <= 1.0 for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers from 0 to 1, got {text!r}")
    return values


def register(sweep: argparse.ArgumentParser) -> None:
    """Add `evalkit sweep`."""
    sweep.description = (
        "Read a JSON report written by `evalkit run` (gated pass on) and re-apply the relevance "
        "gate to its recorded candidates at each value — no search, identical to running the gated pass "
        "at that value. Prints recall, precision, MRR, hit rate, rows kept and dropped and relevant rows "
        "lost from the top-k per value, then per category the largest gate whose recall loss stays "
        "within the tolerance. Exit 0, or 2 when the report cannot be swept."
    )
    sweep.add_argument(
        "report", nargs="?", type=Path, default=Path("reports/report.json"),
        help="JSON report of `evalkit run` (default reports/report.json)",
    )  # fmt: skip
    sweep.add_argument(
        "--values", type=_gate_values, default=DEFAULT_SWEEP_VALUES, metavar="X,Y,...",
        help="gate values to try, comma-separated in [0, 1] (default 0, 0.05, ..., 1)",
    )  # fmt: skip
    sweep.add_argument(
        "--tolerance", type=unit_float, default=DEFAULT_TOLERANCE, metavar="DELTA",
        help=f"recall a category may lose to the gate (default {DEFAULT_TOLERANCE})",
    )  # fmt: skip
    sweep.add_argument(
        "--scope", choices=SCOPES, action="append",
        help="which sweep rows to print (repeatable; default overall)",
    )  # fmt: skip
    sweep.set_defaults(handler=sweep_command)


def sweep_command(args: argparse.Namespace) -> int:
    run = load_run(args.report)
    sweep = run.gate_sweep(args.values)
    shown = sweep[sweep["scope"].isin(args.scope or ["overall"])]
    print(render_sweep(run, shown, recommend_gates(sweep, args.tolerance), args.tolerance))
    return EXIT_OK
