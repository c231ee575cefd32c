"""`evalkit run`: run the scenario suite, print the summary, write the JSON report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.api import run_request
from evalkit.cli.args import add_request_flags, print_packs, request_values, unit_float
from evalkit.cli.exit_codes import EXIT_OK, EXIT_REGRESSIONS
from evalkit.cli.lint import warn_on_load
from evalkit.errors import UsageError
from evalkit.files import check_writable
from evalkit.harness.baselines import (
    check_recordable,
    record_baseline,
    record_gated_baseline,
    replaced_system,
    unstable_note,
)
from evalkit.harness.config import DEFAULT_DATASETS
from evalkit.harness.history import HISTORY_FILE, HistoryError, append_run
from evalkit.harness.project import NO_BASELINES, resolve_request
from evalkit.harness.request import NONE, OFF, RunRequest
from evalkit.harness.results import RunResult
from evalkit.harness.thresholds_file import DEFAULT_GATED_TOLERANCE
from evalkit.suites.packs import LIST, pack_directory, parse_packs, write_combined
from evalkit.views.console import render_curve, render_run

REPORT_NAME = "report.json"
"""The JSON report's file name in the reports folder."""


RUN_FLAGS: tuple[str, ...] = (
    "system", "datasets", "pack", "scenarios", "embedder", "cache", "tokenizer", "top_k", "gated_pass",
    "thresholds", "require_baseline", "perturb", "perturb_seed", "repeat", "mutants", "executor", "workers",
    "out", "history", "progress",
)  # fmt: skip
"""The RunRequest fields `evalkit run` offers as flags, in the order --help lists them: all of them."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add `evalkit run`: a flag per RunRequest field (`add_request_flags`), then the flags that
    record a baseline from the run."""
    run = commands.add_parser(
        "run",
        help="run the scenario suite, print the summary, write the JSON report",
        description="Run the labelled scenario suite against a memory system (default: evalkit's "
        "reference store), score it, check it against the recorded baselines and write the JSON "
        "report. Unset options come from evalkit.toml, else the defaults. Exit 0 = no regressions, "
        "1 = regressions, 2 = bad input or usage.",
    )
    add_request_flags(run, RUN_FLAGS)
    run.add_argument(
        "--update-baseline", action="store_true",
        help="record this run as the baseline of its mode and top_k in the thresholds file (other "
        "entries are kept) and exit 0",
    )  # fmt: skip
    run.add_argument(
        "--update-gated-baseline", action="store_true",
        help="record the relevance-gated pass as the gated baseline of this mode, top_k and gate (from "
        "then on that pass is checked against it too) and exit 0; the mode's baseline is left as is",
    )  # fmt: skip
    run.add_argument(
        "--tolerance", type=unit_float, metavar="DELTA",
        help="with --update-gated-baseline: recall the gated pass may lose, overall and per category, "
        f"before it regresses (default: the entry's current value, else {DEFAULT_GATED_TOLERANCE})",
    )  # fmt: skip
    run.add_argument(
        "--category-tolerance", type=category_tolerance, action="append", metavar="CATEGORY=DELTA",
        help="with --update-gated-baseline: the recall tolerance of one category (repeatable)",
    )  # fmt: skip
    run.add_argument(
        "--accept-unstable", action="store_true",
        help="with --repeat and --update-baseline/--update-gated-baseline: record the first run even "
        "when the runs disagree (the baseline entry notes the unstable queries)",
    )  # fmt: skip
    run.set_defaults(handler=run_command)


def category_tolerance(text: str) -> tuple[str, float]:
    """`CATEGORY=DELTA` → (category, delta in [0, 1])."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected CATEGORY=DELTA (e.g. multi-hop=0.1), got {text!r}")
    return name.strip(), unit_float(value)


def run_command(args: argparse.Namespace) -> int:
    given = request_values(args)
    if given.get("pack") == LIST:
        print_packs()
        return EXIT_OK
    request, project = resolve_request(given)
    check_recording_flags(args, request)
    folder = None
    if request.pack is not None:
        folder = pack_directory(parse_packs(request.pack), project.reports / "packs")
        request = request.model_copy(update={"datasets": folder})
    config = request.config()
    out = request.out or project.reports / REPORT_NAME
    thresholds = config.thresholds
    recording = args.update_baseline or args.update_gated_baseline
    if thresholds is None and recording:
        raise UsageError(
            f"{_recording_flag(args)} records a baseline, but the thresholds are `{NO_BASELINES}` (no "
            "baselines); name the file to record it in with --thresholds PATH"
        )
    if thresholds is not None:
        check_outputs(out, thresholds, update_baseline=recording)
    else:
        check_writable(out)
    if folder is not None and request.pack is not None and len(names := parse_packs(request.pack)) > 1:
        write_combined(names, folder)  # once every check has passed: a refused run leaves none
    warn_on_load(request.datasets or DEFAULT_DATASETS, config.top_k)
    run = run_request(request)
    if recording:  # runs that disagree record nothing: refused before the report or history is written
        try:
            unstable_note(run.result, args.accept_unstable)
        except UsageError:
            print(render_run(run))  # which queries disagree, as a run without --update-baseline shows
            raise
    run.save(out)
    print(render_run(run))
    if run.result.perturbation_curve is not None:
        print(render_curve(run.result.perturbation_curve))
    print(f"report: {out}")
    if request.history != NONE:
        history = Path(request.history) if request.history is not None else out.parent / HISTORY_FILE
        try:
            append_run(history, run.result)
            print(f"history: appended to {history}")
        except HistoryError as exc:  # the run itself is fine: say so, keep the exit code
            print(f"evalkit: warning: {exc}", file=sys.stderr)
    if thresholds is not None and args.update_gated_baseline:
        record_gated(args, thresholds, run.result)
        return EXIT_OK
    if thresholds is not None and args.update_baseline:
        replaced = replaced_system(thresholds, run.result)
        path = record_baseline(thresholds, run.result, accept_unstable=args.accept_unstable)
        print(
            f"baseline for {config.mode} at top_k {config.top_k} recorded in {path} for system "
            f"{run.result.system} (other entries kept"
            + (f"; it replaces the baseline system {replaced} had there)" if replaced else ")")
        )
        print_unstable_note(run.result)
        return EXIT_OK
    return EXIT_OK if run.ok else EXIT_REGRESSIONS


def _recording_flag(args: argparse.Namespace) -> str:
    return "--update-gated-baseline" if args.update_gated_baseline else "--update-baseline"


def check_recording_flags(args: argparse.Namespace, request: RunRequest) -> None:
    """Refuse, before anything runs, baseline-recording flags that would do nothing or
    contradict the request."""
    if args.update_baseline and args.update_gated_baseline:
        raise UsageError(
            "--update-baseline and --update-gated-baseline record different entries: run them one at a time"
        )
    if (args.tolerance is not None or args.category_tolerance) and not args.update_gated_baseline:
        raise UsageError(
            "--tolerance and --category-tolerance set a gated baseline's tolerances: "
            "add --update-gated-baseline"
        )
    recording = args.update_baseline or args.update_gated_baseline
    if args.accept_unstable and not (recording and request.repeat > 1):
        raise UsageError(
            "--accept-unstable records a baseline from repeated runs that disagree: use it with --repeat N "
            "and --update-baseline (or --update-gated-baseline)"
        )
    if not recording:
        return
    flag = _recording_flag(args)
    if request.scenarios:
        raise UsageError(f"{flag} records the whole suite; drop --scenario")
    if request.perturb:
        raise UsageError(
            f"{flag} with --perturb: a perturbed run is never a baseline; drop --perturb to record one"
        )
    if args.update_gated_baseline and request.gated_pass == OFF:
        raise UsageError(f"{flag} records the gated pass, which --gated-pass off skips; drop one of them")
    if args.update_gated_baseline and request.gated_pass == 0.0:
        raise UsageError(
            "--gated-pass 0 is no gate, so there is no gated pass to record; pick a gate above 0"
        )


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


def check_outputs(out: Path, thresholds: Path, *, update_baseline: bool) -> None:
    """Refuse, before anything runs, outputs the run could not write: a report path `out` that
    is the `thresholds` file (the report would replace the baselines) or cannot be written, and
    with --update-baseline a thresholds file that cannot be written (see `check_writable`) or
    that ships inside the installed evalkit package (`check_recordable`)."""
    if out.resolve() == thresholds.resolve():
        raise UsageError(
            f"--out {out} is the thresholds file; the report would replace the baselines. "
            f"Write the report elsewhere (default <reports>/{REPORT_NAME})"
        )
    check_writable(out)
    if update_baseline:
        check_recordable(thresholds)
