"""`evalkit baseline record [REPORT]`: record a saved run as the baseline of its thresholds file.

Recording is its own command over a saved report, never a side effect of `evalkit run`: run,
read the verdict, then record what was measured. The rules are `evalkit.harness.baselines`'s
(whole, unperturbed suite; repeated runs must agree unless --accept-unstable; never into the
installed package; atomic, locked writes; an entry of another system or suite is replaced only
with --replace).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.cli.args import project_settings, unit_float
from evalkit.cli.exit_codes import EXIT_OK
from evalkit.cli.run import REPORT_NAME
from evalkit.errors import UsageError
from evalkit.harness.baselines import record_baseline, record_gated_baseline, replaced_system
from evalkit.harness.report_file import load_report
from evalkit.harness.results import RunResult
from evalkit.harness.thresholds_file import DEFAULT_GATED_TOLERANCE


def register(baseline: argparse.ArgumentParser) -> None:
    """Add `evalkit baseline` and its `record` subcommand."""
    baseline.description = "Baselines: what later runs are compared with."
    actions = baseline.add_subparsers(
        dest="action", required=True, metavar="ACTION", help="record: record a saved report as a baseline"
    )
    record = actions.add_parser(
        "record",
        allow_abbrev=False,
        help="record a saved report's run as the baseline of its mode and top_k",
        description="Record the run saved in REPORT (default <reports>/report.json: evalkit.toml's "
        "reports folder, else ./reports) as the baseline of its system, mode and top_k in the thresholds "
        "file the run was checked against (or --thresholds PATH), with the scenarios each scope averaged "
        "and the suite's fingerprint; every other entry is kept. The run must be of the whole suite, "
        "unperturbed. Exit 0 when recorded, 2 when refused (nothing is written).",
    )
    record.add_argument(
        "report", type=Path, nargs="?", metavar="REPORT",
        help=f"the JSON report of `evalkit run` (default <reports>/{REPORT_NAME})",
    )  # fmt: skip
    record.add_argument(
        "--thresholds", type=Path, metavar="PATH",
        help="the thresholds file to record in (default: the one the run was checked against)",
    )  # fmt: skip
    record.add_argument(
        "--gated", action="store_true",
        help="record the relevance-gated pass as the gated baseline of its mode, top_k and gate (from then "
        "on that pass is checked against it too); the mode's baseline is left as is",
    )  # fmt: skip
    record.add_argument(
        "--tolerance", type=unit_float, metavar="DELTA",
        help="with --gated: recall the gated pass may lose, overall and per category, before it regresses "
        f"(default: the entry's current value, else {DEFAULT_GATED_TOLERANCE})",
    )  # fmt: skip
    record.add_argument(
        "--category-tolerance", type=category_tolerance, action="append", metavar="CATEGORY=DELTA",
        help="with --gated: the recall tolerance of one category (repeatable)",
    )  # fmt: skip
    record.add_argument(
        "--accept-unstable", action="store_true",
        help="for a run of `evalkit run --repeat N` whose runs disagree: record the first run anyway "
        "(the entry notes the unstable queries)",
    )  # fmt: skip
    record.add_argument(
        "--replace", action="store_true",
        help="replace an entry recorded for another system or on another suite (refused otherwise)",
    )  # fmt: skip
    record.set_defaults(handler=record_command)


def category_tolerance(text: str) -> tuple[str, float]:
    """`CATEGORY=DELTA` → (category, delta in [0, 1])."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected CATEGORY=DELTA (e.g. multi-hop=0.1), got {text!r}")
    return name.strip(), unit_float(value)


def record_command(args: argparse.Namespace) -> int:
    """Read the report, check the options, record, say what was written."""
    if not args.gated and (args.tolerance is not None or args.category_tolerance):
        raise UsageError(
            "--tolerance and --category-tolerance set a gated baseline's tolerances: add --gated"
        )
    report = args.report or project_settings(argparse.Namespace()).reports / REPORT_NAME
    result = load_report(report)
    thresholds = args.thresholds or result.provenance.config.thresholds
    if thresholds is None:
        raise UsageError(
            f"the run in {report} was configured without a thresholds file, so there is nowhere to record "
            "its baseline; name one with --thresholds PATH"
        )
    if args.gated:
        record_gated(args, thresholds, result)
        return EXIT_OK
    replaced = replaced_system(thresholds, result) if args.replace else None
    path = record_baseline(thresholds, result, accept_unstable=args.accept_unstable, replace=args.replace)
    print(
        f"baseline for {result.mode} at top_k {result.top_k} recorded in {path} for system "
        f"{result.system}, from {report} (other entries kept"
        + (f"; it replaces the baseline system {replaced} had there)" if replaced else ")")
    )
    print_unstable_note(result)
    return EXIT_OK


def record_gated(args: argparse.Namespace, thresholds: Path, result: RunResult) -> None:
    """Record the run's gated pass in the `thresholds` file (`record_gated_baseline`: tolerances
    from the flags, else the replaced entry's, else the default) and say so."""
    path, entry = record_gated_baseline(
        thresholds,
        result,
        args.tolerance,
        dict(args.category_tolerance or []),
        accept_unstable=args.accept_unstable,
    )
    tolerances = entry.tolerances
    own = "".join(f"; {c} {t:g}" for c, t in tolerances.categories.items())
    print(
        f"gated baseline for mode {result.mode!r}, top_k {result.top_k}, min_relevance "
        f"{entry.min_relevance:g} recorded in {path} (recall tolerance {tolerances.default:g}{own})"
    )
    print_unstable_note(result)


def print_unstable_note(result: RunResult) -> None:
    """Say that a baseline was recorded from repeated runs that disagreed (--accept-unstable)."""
    stability = result.stability
    if stability is not None and not stability.agree:
        print(
            f"note: recorded from the first of {stability.runs} runs, which disagree: {stability.summary()}"
        )
