"""`evalkit run`: run the scenario suite, print the summary, write the JSON report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.api import make_config, run_eval
from evalkit.cli.args import (
    add_dataset_args,
    add_deprecated_flag,
    add_embedder_args,
    add_execution_args,
    add_pack_arg,
    add_system_arg,
    add_top_k_arg,
    embedder_options,
    executor_from,
    project_settings,
    unit_float,
    use_pack,
    write_pack,
)
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
from evalkit.harness.history import HISTORY_FILE, HistoryError, append_run
from evalkit.harness.project import NO_BASELINES
from evalkit.harness.repeats import MAX_REPEAT
from evalkit.harness.results import RunResult
from evalkit.harness.thresholds_file import DEFAULT_GATED_TOLERANCE
from evalkit.memory.options import TOKENIZERS
from evalkit.scenarios.perturb import parse_curve, parse_perturb
from evalkit.systems.resolve import REFERENCE_SPEC
from evalkit.views.console import render_curve, render_run

REPORT_NAME = "report.json"
"""The JSON report's file name in the reports folder."""


def register(run: argparse.ArgumentParser) -> None:
    """Add `evalkit run`."""
    run.description = (
        "Run the labelled scenario suite against the reference memory store (or --real "
        "with a sentence-transformers model, or --system SPEC for another memory system), score it, "
        "gate it on the recorded baselines and write "
        "the JSON report. Exit 0 = no regressions, 1 = regressions, 2 = bad input or usage."
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
        help="exit 1 when the baseline check is off (no baseline of this system for this mode, "
        "top_k and suite) instead of noting it",
    )  # fmt: skip
    run.add_argument(
        "--update-gated-baseline", action="store_true",
        help="record the relevance-gated pass as the gated baseline of this mode, top_k and gate (from "
        "then on that pass is checked against it too) and exit 0; the mode's baseline is left as is",
    )  # fmt: skip
    add_deprecated_flag(run, "--gated", replacement="--update-gated-baseline", dest="gated")
    run.add_argument(
        "--no-gated-pass", action="store_true", help="skip the report-only pass under the relevance gate"
    )
    add_deprecated_flag(run, "--no-gated", replacement="--no-gated-pass", dest="no_gated_pass")
    run.add_argument(
        "--tolerance", type=unit_float, metavar="DELTA",
        help="with --update-gated-baseline: recall the gated pass may lose, overall and per category, "
        f"before it regresses (default: the entry's current value, else {DEFAULT_GATED_TOLERANCE})",
    )  # fmt: skip
    run.add_argument(
        "--category-tolerance", type=category_tolerance, action="append", metavar="CATEGORY=DELTA",
        help="with --update-gated-baseline: the recall tolerance of one category (repeatable)",
    )  # fmt: skip
    add_dataset_args(run)
    add_pack_arg(run)
    run.add_argument(
        "--tokenizer", choices=TOKENIZERS, metavar="NAME",
        help="the reference store's FTS5 tokenizer: unicode61 (default), porter (stemming) or trigram "
        "(text without spaces, e.g. Chinese and Japanese, becomes searchable)",
    )  # fmt: skip
    run.add_argument(
        "--scenario", action="append", metavar="NAME",
        help="run only this scenario (repeatable); assertions count, metrics are not compared",
    )  # fmt: skip
    run.add_argument(
        "--min-relevance", type=unit_float, metavar="X",
        help="gate of the gated pass (default: the service default, 0.4)",
    )  # fmt: skip
    run.add_argument(
        "--history", type=Path, metavar="PATH",
        help=f"run history (SQLite) this run is appended to (default: {HISTORY_FILE} next to --out)",
    )  # fmt: skip
    run.add_argument("--no-history", action="store_true", help="do not append this run to the history")
    run.add_argument(
        "--mutants", action="store_true",
        help="also run the mutation suite (the reference store's search with injected bugs) on this suite "
        "and save it in the report: the verdict states the suite strength (caught N of M injected bugs) "
        "and how to catch each escaped one",
    )  # fmt: skip
    run.add_argument(
        "--fail-on-escaped", action="store_true",
        help="with the mutation suite (implies --mutants): an escaped mutation, or a false alarm of its "
        "no-op control, is a regression (exit 1)",
    )  # fmt: skip
    run.add_argument(
        "--repeat", type=repeat_count, default=1, metavar="N",
        help="run the suite N times (same system, same clock) and list the queries whose ids or order "
        "differ between the runs; the first run is reported, the verdict names the unstable queries, "
        "and --update-baseline records only when the runs agree (default 1)",
    )  # fmt: skip
    run.add_argument(
        "--accept-unstable", action="store_true",
        help="with --repeat and --update-baseline/--update-gated-baseline: record the first run even "
        "when the runs disagree (the baseline entry notes the unstable queries)",
    )  # fmt: skip
    run.add_argument(
        "--perturb", action="append", metavar="KIND=N",
        help="grow every scenario's memory deterministically (repeatable, one per kind): "
        "distractors=N adds N off-topic thoughts per scenario from the shipped pool, stale-repeats=K "
        "repeats each superseded thought K times with older dates; the run is never compared with "
        "a baseline (NOT GATED, with a note); for a curve over several N use --perturb-curve",
    )  # fmt: skip
    run.add_argument(
        "--perturb-curve", metavar="KIND=N,N,...",
        help="also measure how the metrics move as memory grows: one more run per value (e.g. "
        "distractors=0,10,25,50 or stale-repeats=0,1,3), printed as a table and saved in the report "
        "(perturbation_curve); the run itself stays the unperturbed suite's, and no point of the curve "
        "is compared with a baseline",
    )  # fmt: skip
    run.add_argument(
        "--perturb-seed", type=seed_number, default=0, metavar="S",
        help="seed of the --perturb and --perturb-curve draws (default 0): the same seed, the same report",
    )  # fmt: skip
    add_embedder_args(run)
    add_execution_args(run)
    add_system_arg(run)
    run.set_defaults(handler=run_command)


def seed_number(text: str) -> int:
    """argparse type of --perturb-seed: a whole number, 0 or more."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number 0 or more, e.g. --perturb-seed 3")
    return int(text)


def repeat_count(text: str) -> int:
    """`N` of --repeat: a whole number of runs, from 1 to MAX_REPEAT."""
    try:
        count = int(text)
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_REPEAT:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of runs from 1 to {MAX_REPEAT} (e.g. 3), got {text!r}"
        )
    return count


def category_tolerance(text: str) -> tuple[str, float]:
    """`CATEGORY=DELTA` → (category, delta in [0, 1])."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected CATEGORY=DELTA (e.g. multi-hop=0.1), got {text!r}")
    return name.strip(), unit_float(value)


def run_command(args: argparse.Namespace) -> int:
    check_gated_flags(args)
    if not use_pack(args):
        return EXIT_OK
    if (args.update_baseline or args.update_gated_baseline) and args.scenario:
        flag = "--update-gated-baseline" if args.update_gated_baseline else "--update-baseline"
        raise UsageError(f"{flag} records the whole suite; drop --scenario")
    perturb = parse_perturb(args.perturb, args.perturb_seed) if args.perturb else None
    if perturb is not None and (args.update_baseline or args.update_gated_baseline):
        flag = "--update-gated-baseline" if args.update_gated_baseline else "--update-baseline"
        raise UsageError(
            f"{flag} with --perturb: a perturbed run is never a baseline; drop --perturb to record one"
        )
    curve = parse_curve(args.perturb_curve, args.perturb_seed) if args.perturb_curve is not None else None
    if curve is not None and perturb is not None:
        raise UsageError(
            "--perturb with --perturb-curve: a curve starts from the unperturbed suite; drop --perturb "
            "(the curve's own runs are the perturbed ones)"
        )
    project = project_settings(args)
    config = make_config(project.config, **embedder_options(args))
    if args.tokenizer is not None and config.system != REFERENCE_SPEC:  # it was silently ignored
        raise UsageError(
            f"--tokenizer sets the reference store's FTS5 tokenizer; system {config.system!r} tokenizes "
            "text its own way: drop --tokenizer, or run --system reference"
        )
    if args.tokenizer is not None:
        config = config.model_copy(
            update={"store": config.store.model_copy(update={"tokenizer": args.tokenizer})}
        )
    out = args.out or project.reports / REPORT_NAME
    thresholds = project.thresholds
    recording = args.update_baseline or args.update_gated_baseline
    if thresholds is None and recording:
        flag = "--update-gated-baseline" if args.update_gated_baseline else "--update-baseline"
        raise UsageError(
            f"{flag} records a baseline, but the thresholds are `{NO_BASELINES}` (no baselines); "
            "name the file to record it in with --thresholds PATH"
        )
    if thresholds is not None:
        check_outputs(out, thresholds, update_baseline=recording)
    else:
        check_writable(out)
    if args.accept_unstable and not (recording and args.repeat > 1):
        raise UsageError(
            "--accept-unstable records a baseline from repeated runs that disagree: use it with --repeat N "
            "and --update-baseline (or --update-gated-baseline)"
        )
    executor = executor_from(args)
    write_pack(args)
    warn_on_load(project.datasets, config.top_k)
    run = run_eval(
        config,
        datasets=project.datasets,
        scenarios=args.scenario,
        mutations=args.mutants,
        fail_on_escaped=args.fail_on_escaped,
        progress=args.progress,
        executor=executor,
        repeat=args.repeat,
        perturb=perturb,
        perturb_curve=curve,
    )
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
    if not args.no_history:
        history = args.history or out.parent / HISTORY_FILE
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


def check_gated_flags(args: argparse.Namespace) -> None:
    """Refuse, before anything runs, gated-baseline flags that would do nothing or contradict.

    The deprecated `--update-baseline --gated` is read as `--update-gated-baseline` (after these
    checks, `args.update_baseline` means the measurement baseline only)."""
    deprecated = getattr(args, "gated", False)
    if deprecated and not args.update_baseline:
        raise UsageError(
            "--gated records the gated pass as a gated baseline: use it with --update-baseline (a run is "
            "checked against a gated baseline by itself whenever one is recorded for its mode, top_k "
            "and gate)"
        )
    if deprecated:
        args.update_baseline, args.update_gated_baseline = False, True
    if args.update_baseline and args.update_gated_baseline:
        raise UsageError(
            "--update-baseline and --update-gated-baseline record different entries: run them one at a time"
        )
    tolerances = args.tolerance is not None or args.category_tolerance
    flag = "--update-baseline --gated" if deprecated else "--update-gated-baseline"
    if tolerances and not args.update_gated_baseline:
        raise UsageError(
            "--tolerance and --category-tolerance set a gated baseline's tolerances: add "
            "--update-gated-baseline (the deprecated form: --update-baseline --gated)"
        )
    if args.update_gated_baseline and args.no_gated_pass:
        raise UsageError(f"{flag} records the gated pass, which --no-gated-pass skips; drop one of them")
    if args.update_gated_baseline and args.min_relevance == 0.0:
        raise UsageError(
            "--min-relevance 0 is no gate, so there is no gated pass to record; pick a gate above 0"
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
