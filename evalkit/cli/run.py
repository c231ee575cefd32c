"""`evalkit run`: run the scenario suite, print the summary, write the JSON report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.api import make_config, run_eval
from evalkit.ci import ci_context
from evalkit.cli.args import (
    BUILTIN_KEYWORD,
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
from evalkit.harness.history import HISTORY_FILE, HistoryError, append_run
from evalkit.harness.project import DEFAULT_SOURCE, PROJECT_FILE, PYPROJECT_FILE, Project
from evalkit.harness.repeats import MAX_REPEAT
from evalkit.harness.requirement import TURN_OFF
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
        "--require-baseline", action=argparse.BooleanOptionalAction, default=None,
        help="exit 1 when no metric was compared with a baseline (no baseline of this system for this "
        "mode, top_k and suite; --thresholds none) instead of noting it; --no-require-baseline: a note "
        "even in CI (default: `require_baseline` in evalkit.toml, else on when $CI is set)",
    )  # fmt: skip
    run.add_argument(
        "--no-gated-pass", action="store_true", help="skip the report-only pass under the relevance gate"
    )
    add_deprecated_flag(run, "--no-gated", replacement="--no-gated-pass", dest="no_gated_pass")
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
        "and `evalkit baseline record` records its report only when the runs agree (default 1)",
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


def run_command(args: argparse.Namespace) -> int:
    if not use_pack(args):
        return EXIT_OK
    perturb = parse_perturb(args.perturb, args.perturb_seed) if args.perturb else None
    curve = parse_curve(args.perturb_curve, args.perturb_seed) if args.perturb_curve is not None else None
    if curve is not None and perturb is not None:
        raise UsageError(
            "--perturb with --perturb-curve: a curve starts from the unperturbed suite; drop --perturb "
            "(the curve's own runs are the perturbed ones)"
        )
    project = project_settings(args)
    say_no_project(project)
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
    if thresholds is not None:
        check_outputs(out, thresholds)
    else:
        check_writable(out)
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
    run.save(out)
    print(render_run(run))
    if project.sources["require_baseline"] == DEFAULT_SOURCE and any(
        r.kind == "baseline" for r in run.result.regressions
    ):
        where = project.file or PROJECT_FILE
        print(f"to pass without comparing, say so: {TURN_OFF['cli']} (or {TURN_OFF['toml']} in {where})")
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
    return EXIT_OK if run.ok else EXIT_REGRESSIONS


def say_no_project(project: Project) -> None:
    """Outside a project (no evalkit.toml or [tool.evalkit] from the working directory upwards)
    with no suite named on the command line (--datasets, --pack): one line on stderr saying that
    the built-in suite runs, where its reports go and how to start a project. In a CI context
    (`evalkit.ci`) UsageError instead, before anything is written: a CI job is meant to
    run its project's suite, and one started in the wrong folder must not pass on evalkit's own."""
    if project.file is not None or project.sources["datasets"] != DEFAULT_SOURCE:
        return
    where = f"no {PROJECT_FILE} or [tool.evalkit] in {PYPROJECT_FILE} in {Path.cwd()} or above"
    context = ci_context()
    if context is not None:
        raise UsageError(
            f"{where}, and in CI ({context}) evalkit does not fall back to its built-in suite: run in "
            f"your project's folder (start one with `evalkit init`), or ask for the built-in suite with "
            f"--datasets {BUILTIN_KEYWORD}"
        )
    print(
        f"evalkit: note: {where}: running the built-in suite, reports in {project.reports}/; start a "
        "project of your own with `evalkit init`",
        file=sys.stderr,
    )


def check_outputs(out: Path, thresholds: Path) -> None:
    """Refuse, before anything runs, a report path `out` that is the `thresholds` file (the
    report would replace the baselines) or cannot be written (see `check_writable`)."""
    if out.resolve() == thresholds.resolve():
        raise UsageError(
            f"--out {out} is the thresholds file; the report would replace the baselines. "
            f"Write the report elsewhere (default <reports>/{REPORT_NAME})"
        )
    check_writable(out)
