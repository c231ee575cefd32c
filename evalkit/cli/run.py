"""`evalkit run`: run the scenario suite, print the summary, write the JSON report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.api import run_request
from evalkit.ci import ci_context
from evalkit.cli.args import BUILTIN_KEYWORD, add_request_flags, print_packs, request_values
from evalkit.cli.exit_codes import EXIT_OK, EXIT_REGRESSIONS
from evalkit.cli.lint import warn_on_load
from evalkit.errors import UsageError
from evalkit.files import check_writable
from evalkit.harness.config import DEFAULT_DATASETS
from evalkit.harness.history import HISTORY_FILE, HistoryError, append_run
from evalkit.harness.project import DEFAULT_SOURCE, PROJECT_FILE, PYPROJECT_FILE, Project, resolve_request
from evalkit.harness.request import NONE, RunRequest
from evalkit.harness.requirement import TURN_OFF
from evalkit.harness.results import RunResult
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


def register(run: argparse.ArgumentParser) -> None:
    """Add `evalkit run`: a flag per RunRequest field (`add_request_flags`)."""
    run.description = (
        "Run the labelled scenario suite against a memory system (default: evalkit's reference "
        "store), score it, check it against the recorded baselines and write the JSON report. Unset "
        "options come from evalkit.toml, else the defaults. Record a baseline from the report with "
        "`evalkit baseline record`. Exit 0 = no regressions, 1 = regressions, 2 = bad input or usage."
    )
    add_request_flags(run, RUN_FLAGS)
    run.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    given = request_values(args)
    if given.get("pack") == LIST:
        print_packs()
        return EXIT_OK
    request, project = resolve_request(given)
    say_no_project(project, suite_named=request.pack is not None)
    folder = None
    if request.pack is not None:
        folder = pack_directory(parse_packs(request.pack), project.reports / "packs")
        request = request.model_copy(update={"datasets": folder})
    config = request.config()
    out = request.out or project.reports / REPORT_NAME
    if config.thresholds is not None:
        check_outputs(out, config.thresholds)
    else:
        check_writable(out)
    if folder is not None and request.pack is not None and len(names := parse_packs(request.pack)) > 1:
        write_combined(names, folder)  # once every check has passed: a refused run leaves none
    warn_on_load(request.datasets or DEFAULT_DATASETS, config.top_k)
    run = run_request(request)
    replaced = replaced_report(out, run.result)
    run.save(out)
    print(render_run(run))
    if replaced is not None:
        print(f"evalkit: note: {replaced}", file=sys.stderr)
    if project.sources["require_baseline"] == DEFAULT_SOURCE and any(
        r.kind == "baseline" for r in run.result.regressions
    ):
        where = project.file or PROJECT_FILE
        print(f"to pass without comparing, say so: {TURN_OFF['cli']} (or {TURN_OFF['toml']} in {where})")
    if run.result.perturbation_curve is not None:
        print(render_curve(run.result.perturbation_curve))
    print(f"report: {out}")
    append_history(request, out, run.result)
    return EXIT_OK if run.ok else EXIT_REGRESSIONS


def replaced_report(out: Path, result: RunResult) -> str | None:
    """What a report at `out` that `result` is about to replace was a run of, when that is
    another system or another suite (a run with no `--out` writes the same file every time);
    None when there is none, it is of the same system and suite, or it cannot be read
    (`saved_run_of`)."""
    from evalkit.harness.report_file import saved_run_of

    then = saved_run_of(out)
    if then is None or then == (result.system, result.provenance.datasets):
        return None
    return (
        f"replaced {out}, a run of system {then[0]} on suite {then[1] or 'unknown'}; "
        "give --out PATH to keep each system's or suite's report"
    )


def append_history(request: RunRequest, out: Path, result: RunResult) -> None:
    """Append the run to the request's history (default: next to the report `out`; `none`: not
    at all) and say where; a history that cannot be written is a warning, the run stands."""
    if request.history == NONE:
        return
    history = Path(request.history) if request.history is not None else out.parent / HISTORY_FILE
    try:
        append_run(history, result)
        print(f"history: appended to {history}")
    except HistoryError as exc:  # the run itself is fine: say so, keep the exit code
        print(f"evalkit: warning: {exc}", file=sys.stderr)


def say_no_project(project: Project, *, suite_named: bool) -> None:
    """Outside a project (no evalkit.toml or [tool.evalkit] from the working directory upwards)
    with no suite named on the command line (--datasets, --pack: `suite_named`): one line on
    stderr saying that the built-in suite runs, where its reports go and how to start a project.
    In a CI context (`evalkit.ci`) UsageError instead, before anything is written: a CI job is
    meant to run its project's suite, and one started in the wrong folder must not pass on
    evalkit's own."""
    if suite_named or project.file is not None or project.sources["datasets"] != DEFAULT_SOURCE:
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
