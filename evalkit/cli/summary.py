"""`evalkit summary REPORT`: a saved run as Markdown on stdout (evalkit.views.summary), for a CI
job summary: `evalkit summary reports/report.json >> "$GITHUB_STEP_SUMMARY"`."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.cli.exit_codes import EXIT_OK
from evalkit.harness.results import RunResult
from evalkit.harness.thresholds_file import find_baseline, load_thresholds
from evalkit.views.frames import load_run
from evalkit.views.summary import summary_markdown


def register(summary: argparse.ArgumentParser) -> None:
    """Add `evalkit summary`."""
    summary.description = (
        "Print REPORT (a JSON report of `evalkit run`, `evalkit report` or `evalkit bench`) as "
        "Markdown on stdout: the verdict, the regressions, the biggest drops of the overall and category "
        "metrics below the baseline of the run's mode and top_k (read from the thresholds file the run "
        "used, or --thresholds), and the suite strength when mutation testing ran with it. For CI job "
        'summaries: evalkit summary reports/report.json >> "$GITHUB_STEP_SUMMARY". Exit 0 whatever '
        "the verdict (the run's own exit code gates), 2 when REPORT cannot be read."
    )
    summary.add_argument("report", type=Path, metavar="REPORT", help="the JSON report of a run")
    summary.add_argument(
        "--thresholds", type=Path, metavar="PATH",
        help="baselines file to compare with (default: the one the run was checked against)",
    )  # fmt: skip
    summary.add_argument(
        "--drops", type=int, default=5, metavar="N", help="how many of the biggest drops to list (default 5)"
    )
    summary.set_defaults(handler=summary_command)


def summary_command(args: argparse.Namespace) -> int:
    run = load_run(args.report)
    baseline, label, reason = _baseline(run.result, args.thresholds)
    print(summary_markdown(run, baseline, baseline_label=label, no_baseline=reason, drops=args.drops), end="")
    return EXIT_OK


def _baseline(
    result: RunResult, thresholds: Path | None
) -> tuple[dict[str, dict[str, float]] | None, str, str]:
    """(the baseline of the run's mode and top_k as "overall"/category → metric → value, its
    label, why there is none): from `thresholds`, else the file the run was configured with."""
    path = thresholds or result.provenance.config.thresholds
    if path is None:
        return None, "", "the run was configured without a thresholds file"
    entries = load_thresholds(path)
    if entries is None:
        return None, "", f"{path} does not exist"
    entry = find_baseline(entries, result.mode, result.top_k)
    if entry is None:
        return None, "", f"no baseline for {result.mode} at top_k {result.top_k} in {path}"
    levels = {"overall": entry.baseline.overall} | dict(entry.baseline.categories)
    metrics = {name: level.model_dump(exclude={"queries", "scenarios"}) for name, level in levels.items()}
    return metrics, f"{result.mode}@{result.top_k}, recorded {entry.recorded_at}", ""
