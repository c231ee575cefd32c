"""`evalkit report`: execute a report notebook headless and write it as HTML (evalkit.notebooks).

A notebook that evaluates a suite (it declares `datasets`, and a saved report it could show
instead — `report_json`, `report_a`, `report_b` — is left at None) gets that suite linted: the
same one-line warning on stderr as `evalkit run` (`evalkit.cli.lint.warn_on_load`), printed once
the notebook has run (passed or failed its threshold check), so a refused command (exit 2) or an
interrupted one prints only its own message.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from evalkit.cli.args import add_system_arg, project_settings
from evalkit.cli.exit_codes import EXIT_OK, EXIT_REGRESSIONS
from evalkit.cli.lint import warn_on_load
from evalkit.errors import UsageError, listed
from evalkit.files import shown_path
from evalkit.harness.history import HISTORY_FILE
from evalkit.harness.project import Project
from evalkit.harness.request import NONE, OFF, RequestError, RunRequest
from evalkit.notebooks import (
    DEFAULT_OUT_DIR,
    NOTEBOOKS_DIR,
    NotebookRegressionError,
    parameter_values,
    read_parameters,
    resolve_notebook,
    run_notebook,
)
from evalkit.packaged import BUILTIN_DATASETS
from evalkit.parameters import Parameter
from evalkit.wording import counted

DEFAULT_NOTEBOOK = "eval_report"


def register(report: argparse.ArgumentParser) -> None:
    """Add `evalkit report`."""
    report.description = (
        "Execute a parameterised notebook headless with papermill (kernel python3, working "
        "directory = the notebook's folder) and write <out-dir>/<name>.ipynb and a self-contained "
        "<out-dir>/<name>.html (code hidden, charts embedded). Parameters the notebook does not declare "
        "are rejected. Exit 0 = the notebook ran, 1 = its final threshold assertion failed (the HTML is "
        "still written; regressions on stderr), 2 = bad input or usage, or another cell failed."
    )
    report.add_argument(
        "--notebook", default=DEFAULT_NOTEBOOK, metavar="NAME",
        help=f"notebook name in {NOTEBOOKS_DIR}/ or a path to an .ipynb file (default {DEFAULT_NOTEBOOK})",
    )  # fmt: skip
    report.add_argument(
        "-p", "--parameter", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
        help="set a notebook parameter (repeatable), e.g. -p embedder real -p top_k 10; "
        "relative paths are relative to the current directory",
    )  # fmt: skip
    report.add_argument(
        "--out-dir", type=Path, metavar="DIR",
        help=f"where to write the executed notebook and the HTML (default: `reports` in evalkit.toml, "
        f"else ./{DEFAULT_OUT_DIR}/)",
    )  # fmt: skip
    add_system_arg(report)
    report.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None,
        help="progress while cells run (default: a bar on a terminal, a line per cell otherwise)",
    )  # fmt: skip
    report.set_defaults(handler=report_command)


def report_command(args: argparse.Namespace) -> int:
    from evalkit.harness.report_file import saved_run_of

    notebook = resolve_notebook(args.notebook)
    pairs = [tuple(p) for p in args.parameter]
    if args.system is not None and any(key == "system" for key, _ in pairs):
        raise UsageError("give the system once: --system SPEC or -p system SPEC, not both")
    declared = read_parameters(notebook)
    if args.system is not None and "system" not in declared:
        raise UsageError(
            f"{notebook.name} declares no `system` parameter, so it cannot evaluate --system {args.system}; "
            "run it without --system (it reads saved reports or the reference store)"
        )
    given, problems = parameter_values(declared, pairs, notebook)
    project = project_settings(args)
    out_dir = args.out_dir or project.reports
    values = {**_defaults(declared, notebook, project, out_dir), **given}
    _check_inputs(declared, values, given, problems)
    saved = _saved_run(values)
    before, previous = _stamp(saved), saved_run_of(saved)
    try:
        outputs = run_notebook(notebook, values, out_dir, progress=args.progress)
    except NotebookRegressionError as exc:
        _warn_on_suite(values, project)
        print(f"evalkit: {notebook.name}: the threshold check failed\n{exc.evalue}", file=sys.stderr)
        print(f"report: {exc.outputs.html} (executed notebook: {exc.outputs.notebook})", file=sys.stderr)
        _say_replaced(saved, before, previous)
        _append_history(values, saved, before)
        return EXIT_REGRESSIONS
    _warn_on_suite(values, project)
    print(f"report: {outputs.html} (executed notebook: {outputs.notebook})")
    _say_replaced(saved, before, previous)
    _append_history(values, saved, before)
    return EXIT_OK


def _say_replaced(saved: Path | None, before: int | None, previous: tuple[str, str | None] | None) -> None:
    """On stderr, when the notebook replaced the saved run of another system or suite (a report
    without --out-dir writes the same `<reports>/<notebook>.json` every time), which run it was and
    how to keep each, as `evalkit run` does for its report."""
    from evalkit.harness.report_file import saved_run_of

    if saved is None or previous is None or _stamp(saved) == before:
        return
    if saved_run_of(saved) in (None, previous):
        return
    system, suite = previous
    print(
        f"evalkit: note: replaced {shown_path(saved)}, a run of system {system} on suite "
        f"{suite or 'unknown'}; give --out-dir DIR to keep each system's or suite's report",
        file=sys.stderr,
    )


def _saved_run(values: Mapping[str, object]) -> Path | None:
    """Where the notebook saves the run it makes (`out`), None when it makes none: it declares
    no `out` or `history`, or it shows saved reports (each of its SAVED_REPORTS set)."""
    if "out" not in values or "history" not in values:
        return None
    shown = [name for name in SAVED_REPORTS if name in values]
    if shown and all(values[name] is not None for name in shown):
        return None
    return Path(str(values["out"])).resolve()


def _stamp(path: Path | None) -> int | None:
    """The modification time of `path` in ns (None: no such file), to tell a run this call saved
    from a report an earlier one left."""
    return path.stat().st_mtime_ns if path is not None and path.is_file() else None


def _append_history(values: Mapping[str, object], saved: Path | None, before: int | None) -> None:
    """Append the run the notebook saved at `saved` during this call to the notebook's `history`
    (`<out-dir>/history.sqlite3` unless `-p history` names another file; `none`: not at all), as
    `evalkit run` does, and say where; nothing when no run was saved (a saved report was shown,
    or a cell failed before the run was written). The trend section of the next report shows it.
    A history that cannot be written is a warning: the report stands."""
    from evalkit.errors import EvalkitError
    from evalkit.harness.history import HistoryError, append_run
    from evalkit.harness.report_file import load_report

    history = str(values.get("history"))
    if saved is None or history.lower() == NONE or _stamp(saved) in (None, before):
        return
    try:
        append_run(Path(history), load_report(saved))
    except HistoryError as exc:
        print(f"evalkit: warning: {exc}", file=sys.stderr)
    except (EvalkitError, OSError) as exc:
        print(f"evalkit: warning: the run was not appended to the history {history}: {exc}", file=sys.stderr)
    else:
        print(f"history: appended to {shown_path(Path(history).resolve())}")


SAVED_REPORTS = ("report_json", "report_a", "report_b")
"""Parameters naming a saved report a notebook shows instead of running the suite."""


def _check_inputs(
    declared: Mapping[str, Parameter],
    values: Mapping[str, object],
    given: Mapping[str, object],
    found: Sequence[str],
) -> None:
    """Refuse, before the notebook runs and before anything is written (exit 2, no `.failed`
    notebook), every value that the run would refuse: the notebook's request options (its
    parameters that are `RunRequest` fields, with their defaults under the given values, checked
    as the notebook names them), a saved report that is missing, truncated or not a report, and a
    `datasets` folder that does not exist. All the problems, after those `found` while parsing
    the `-p` pairs, are reported at once, one line each, each naming its `-p` parameter."""
    from pydantic import ValidationError

    from evalkit.errors import EvalkitError
    from evalkit.harness.report_file import load_report
    from evalkit.harness.results import RunResult
    from evalkit.validation import field_problems

    problems = list(found)
    chosen = {**{name: p.default for name, p in declared.items()}, **given}
    fields = {name: value for name, value in chosen.items() if name in RunRequest.model_fields}
    try:
        RunRequest.checked({k: v for k, v in fields.items() if v is not None}, "notebook")
    except RequestError as exc:
        problems += [f"-p {problem}" for problem in exc.problems]
    for name in SAVED_REPORTS:
        if values.get(name) is not None:
            try:
                load_report(str(values[name]))
            except (EvalkitError, OSError) as exc:
                cause = exc.__cause__
                detail = (
                    "; ".join(field_problems(cause, RunResult)[:3]) if isinstance(cause, ValidationError)
                    else str(exc)
                )  # fmt: skip
                problems.append(f"-p {name} {values[name]}: not a readable evalkit report ({detail})")
    datasets = values.get("datasets")
    if datasets is not None and "datasets" in given and not Path(str(datasets)).is_dir():
        problems.append(f"-p datasets {datasets}: no such folder; give a folder of scenario files")
    if len(problems) == 1:
        raise UsageError(f"{problems[0]}; nothing was run or written")
    if problems:
        raise UsageError(listed(f"{counted(len(problems), 'problem')}; nothing was run or written", problems))


def _warn_on_suite(values: Mapping[str, object], project: Project) -> None:
    """The lint warning of the suite the notebook runs (`values["datasets"]`; None = the built-in
    suite, a relative path from here), at its `top_k` (else the project's); nothing when the
    notebook declares no `datasets` or shows only saved reports (each of its SAVED_REPORTS set)."""
    if "datasets" not in values:
        return
    saved = [name for name in SAVED_REPORTS if name in values]
    if saved and all(values[name] is not None for name in saved):
        return
    datasets = values["datasets"]
    top_k = values.get("top_k", project.config.top_k)
    warn_on_load(BUILTIN_DATASETS if datasets is None else Path(str(datasets)), int(str(top_k)))


def _defaults(
    declared: Mapping[str, Parameter], notebook: Path, project: Project, out_dir: Path
) -> dict[str, object]:
    """Values the command passes to the parameters the notebook declares, unless `-p` sets them:
    the project's settings (evalkit.toml or the defaults: datasets, thresholds, system, top_k,
    gated_pass from gated and min_relevance; --system over the file; an `mcp:` mapping made
    absolute), and `out` = `<out-dir>/<notebook>.json`, so a fresh run is saved beside the HTML — never
    next to the notebook, which may sit read-only inside the installed package — and `history`
    = `<out-dir>/history.sqlite3`, next to that run as `evalkit run`'s is next to its report (the
    project's reports folder by default, where `evalkit run` appends too; this command appends
    after the notebook ran: `_append_history`)."""
    settings = project.values()
    values = {name: settings[name] for name in ("datasets", "thresholds", "system", "top_k")}
    values["system"] = _from_here(str(values["system"]))
    values["gated_pass"] = OFF if not settings["gated"] else settings["min_relevance"]
    values["out"] = out_dir / f"{notebook.stem}.json"
    values["history"] = out_dir / HISTORY_FILE
    return {name: value for name, value in values.items() if name in declared}


def _from_here(spec: str) -> str:
    """An `mcp:` mapping path made absolute: the notebook runs in its own folder."""
    if spec.startswith("mcp:"):
        return f"mcp:{Path(spec.removeprefix('mcp:')).resolve()}"
    return spec
