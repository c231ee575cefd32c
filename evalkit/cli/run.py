"""`evalkit run`: run the scenario suite, print the summary, write the JSON report."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.api import make_config, run_eval
from evalkit.cli.args import (
    add_dataset_args,
    add_embedder_args,
    add_execution_args,
    add_system_arg,
    add_top_k_arg,
    embedder_options,
    executor_from,
    project_settings,
    unit_float,
)
from evalkit.cli.exit_codes import EXIT_OK, EXIT_REGRESSIONS
from evalkit.errors import UsageError
from evalkit.files import check_writable
from evalkit.harness.gating import baseline_entry, update_thresholds
from evalkit.views.console import render_run

REPORT_NAME = "report.json"
"""The JSON report's file name in the reports folder."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add `evalkit run`."""
    run = commands.add_parser(
        "run",
        help="run the scenario suite, print the summary, write the JSON report",
        description="Run the labelled scenario suite against the reference memory store (or --real "
        "with a sentence-transformers model, or --system SPEC for another memory system), score it, "
        "gate it on the recorded baselines and write "
        "the JSON report. Exit 0 = no regressions, 1 = regressions, 2 = bad input or usage.",
    )
    add_top_k_arg(run)
    run.add_argument(
        "--out", type=Path, metavar="PATH",
        help=f"JSON report path (default <reports>/{REPORT_NAME}; reports: evalkit.toml, else ./reports)",
    )  # fmt: skip
    run.add_argument(
        "--update-baseline", action="store_true",
        help="record this run as the baseline of its mode and top_k in the thresholds file (other "
        "entries are kept) and exit 0",
    )  # fmt: skip
    run.add_argument(
        "--require-baseline", action="store_true",
        help="exit 1 when metric gating is off (no baseline for this mode and top_k) instead of noting it",
    )  # fmt: skip
    run.add_argument(
        "--no-gated", action="store_true", help="skip the report-only pass under the relevance gate"
    )
    add_dataset_args(run)
    run.add_argument(
        "--scenario", action="append", metavar="NAME",
        help="run only this scenario (repeatable); assertions gate, metrics are not compared",
    )  # fmt: skip
    run.add_argument(
        "--min-relevance", type=unit_float, metavar="X",
        help="gate of the gated pass (default: the service default, 0.4)",
    )  # fmt: skip
    add_embedder_args(run)
    add_execution_args(run)
    add_system_arg(run)
    run.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    if args.update_baseline and args.scenario:
        raise UsageError("--update-baseline records the whole suite; drop --scenario")
    project = project_settings(args)
    config = make_config(project.config, **embedder_options(args))
    out = args.out or project.reports / REPORT_NAME
    check_outputs(out, project.thresholds, update_baseline=args.update_baseline)
    executor = executor_from(args)
    run = run_eval(
        config, datasets=project.datasets, scenarios=args.scenario, progress=args.progress, executor=executor
    )
    run.save(out)
    print(render_run(run))
    print(f"report: {out}")
    if args.update_baseline:
        entry = baseline_entry(run.result, config.top_k)
        path = update_thresholds(project.thresholds, config.mode, entry)
        print(f"baseline for {config.mode} at top_k {config.top_k} recorded in {path} (other entries kept)")
        return EXIT_OK
    return EXIT_OK if run.ok else EXIT_REGRESSIONS


def check_outputs(out: Path, thresholds: Path, *, update_baseline: bool) -> None:
    """Refuse, before anything runs, outputs the run could not write: a report path `out` that
    is the `thresholds` file (the report would replace the baselines) or cannot be written, and
    with --update-baseline a thresholds file that cannot be written (see `check_writable`)."""
    if out.resolve() == thresholds.resolve():
        raise UsageError(
            f"--out {out} is the thresholds file; the report would replace the baselines. "
            f"Write the report elsewhere (default <reports>/{REPORT_NAME})"
        )
    check_writable(out)
    if update_baseline:
        check_writable(thresholds)
