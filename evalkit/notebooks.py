"""Run a parameterised notebook headless (papermill) and render it as a self-contained HTML report.

Contract of `run_notebook`:
- The notebook's parameters are read from its one cell tagged `parameters`: one annotated literal
  per line, `top_k: int = 5  # results per query`. Annotations may be `int`, `float`, `bool`,
  `str` or a union of them with `None` (`float | None`, `Optional[float]`), optionally quoted.
  Declare optional ones as `min_relevance: "Optional[float]" = None`: papermill's own parser
  (`papermill --help-notebook`, its type hints) reads only word characters and brackets, and the
  quotes keep the kernel from evaluating `Optional`; help comments must hold no `=` (papermill
  skips such lines). They are read as the canonical `float | None` (`evalkit.parameters`). A
  parameter the notebook does not declare, or a value of the wrong type, is a UsageError
  (NotebookParameterError) before the kernel starts — papermill itself would only warn; inside
  the kernel each report notebook's `check_parameters(globals())` cell does the same for a plain
  papermill run.
- Path parameters (their help comment starts with "path") given as relative paths are resolved
  against the caller's working directory; the notebook itself runs with its own folder as the
  working directory, and resolves its relative defaults against the project root found from
  there, else that folder (`evalkit.api.notebook_path`).
- The kernel is `python3`; jupyter_client starts it with this interpreter (`sys.executable`).
  Its connection file and its temporary files (the stores of the run it executes) live in this
  call's work folder, removed when the call ends, also on Ctrl-C or SIGTERM (even a second one
  that cuts the kernel's shutdown short).
- `<out_dir>/<stem>.ipynb` (the executed notebook) and `<out_dir>/<stem>.html` (code hidden,
  figures embedded as base64 PNG, no prompts) are written atomically (a temporary file renamed
  over the old one). Both paths are checked before the kernel starts (`out_dir` that is a file is
  a UsageError, an unwritable path an OutputError), so a mistake costs no run. When the final
  threshold assertion fails, both are still written (the report of a run with regressions), then
  NotebookRegressionError is raised (`evalue` lists every regression). When any other cell
  raises (a missing report file, a bad value), the report is NOT replaced: the previous
  `<stem>.html` and `<stem>.ipynb` stay as they were, the failed run is written beside them as
  `<stem>.failed.html` and `<stem>.failed.ipynb`, and NotebookError is raised naming them. A
  successful run (or one with regressions) removes a `.failed` pair left by an earlier failure.
  In the HTML, an error shows as `Name: message`; the executed notebook keeps the full traceback.
  The page title is "evalkit · <stem> · <what an output offers>" (`page_title`: the report's
  verdict, "FAIL — 2 regressions · system reference"), else "· system <system>" when given.
- Progress: a papermill progress bar when `evalkit.progress.progress_enabled` says so (an
  interactive terminal outside CI), otherwise one line per stage on stderr (CI logs: the cells
  start, the cells are done, the HTML is written); `progress=False` is silent.
- A kernel that dies (out of memory, a crash in native code) is a ReportError naming the
  notebook. What nbclient and asyncio log about a dead kernel is dropped (`_KernelDeathNoise`):
  on Ctrl-C or SIGTERM the run shuts its kernel down while a cell waits, and those lines would
  follow evalkit's own one-line message.
"""

from __future__ import annotations

import copy
import logging
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from evalkit.errors import RegressionError, ReportError, UsageError
from evalkit.files import WORKDIR_ENV, check_writable, write_atomic
from evalkit.packaged import NOTEBOOKS
from evalkit.parameters import (
    NotebookParameterError,
    Parameter,
    check_value,
    parameter_problems,
    parse_parameters_cell,
    parse_text,
    unknown_names,
)
from evalkit.progress import progress_enabled

NOTEBOOKS_DIR = NOTEBOOKS
"""Where `evalkit report --notebook NAME` looks for NAME.ipynb: the packaged report notebooks."""

DEFAULT_OUT_DIR = Path("reports")
"""Where executed notebooks and HTML reports go by default."""

FAILED_SUFFIX = ".failed"
"""Inserted before the extension of the pages of a run that failed in a cell other than the
threshold check (`eval_report.failed.html`): the report itself is left as it was."""

KERNEL_NAME = "python3"
"""The Jupyter kernel notebooks run on (ipykernel's, installed in the environment's prefix)."""

_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block data_png scoped -%}
{%- set alt = output | get_metadata('alt', 'image/png') -%}
{{ super() | replace('<img ', '<img alt="' ~ (alt or 'Chart') | escape_html ~ '" ') }}
{%- endblock data_png -%}
"""
"""The lab template without the scripts it loads from CDNs (require.js, MathJax, Mermaid): reports
hold no widgets, maths or diagrams, and a report must render offline. A PNG's alt attribute is its
display metadata's `alt` (evalkit charts set it), else "Chart"."""

PAPERMILL_ERROR_TAG = "papermill-error-cell-tag"
"""The tag of the cells papermill inserts when a cell raised (a red "An Exception was encountered"
banner at the top and an anchor above the failing cell); the HTML leaves them out."""

_KERNEL_LOG_LEVEL = "CRITICAL"
"""Log level of the kernel application (its log goes to our stderr)."""


@dataclass(frozen=True, slots=True)
class NotebookOutputs:
    """The files one run wrote: the executed notebook and its HTML rendering."""

    notebook: Path
    html: Path


class NotebookError(ReportError):
    """A cell raised while the notebook ran. The failed run's executed notebook and HTML were
    written beside the report (`outputs`: `<stem>.failed.ipynb` and `.failed.html`; the report
    itself for NotebookRegressionError); `ename`/`evalue` are the exception's name and message
    inside the kernel."""

    def __init__(self, message: str, *, ename: str, evalue: str, outputs: NotebookOutputs) -> None:
        super().__init__(message)
        self.ename = ename
        self.evalue = evalue
        self.outputs = outputs


class NotebookRegressionError(NotebookError):
    """The notebook's final threshold assertion failed: `evalue` lists every regression."""


def available_notebooks(directory: str | Path = NOTEBOOKS_DIR) -> list[str]:
    """Names (file stems) of the notebooks in `directory`, sorted; [] when it does not exist."""
    return sorted(p.stem for p in Path(directory).glob("*.ipynb"))


def resolve_notebook(name: str | Path, directory: str | Path = NOTEBOOKS_DIR) -> Path:
    """The notebook file for `name`: a path to an `.ipynb` file, or the stem of a notebook in
    `directory` (`eval_report` → `<NOTEBOOKS_DIR>/eval_report.ipynb`). UsageError when it does not exist."""
    text = str(name)
    path = Path(text) if text.endswith(".ipynb") else Path(directory) / f"{text}.ipynb"
    if not path.is_file():
        known = ", ".join(available_notebooks(directory)) or f"none in {directory}/"
        raise UsageError(f"no notebook {path}; available notebooks: {known}")
    return path


def read_parameters(notebook: str | Path) -> dict[str, Parameter]:
    """The parameters declared by `notebook`'s cell tagged `parameters`, in cell order.

    Raises ReportError when the notebook cannot be read, has no or several `parameters` cells,
    or a line of that cell is not `name: type = literal  # help` with a supported type.
    """
    path = Path(notebook)
    cells = [c for c in _read(path).cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise ReportError(f"{path}: expected exactly one cell tagged 'parameters', found {len(cells)}")
    return parse_parameters_cell(path, cells[0].source)


def parse_parameters(
    declared: Mapping[str, Parameter], pairs: Iterable[tuple[str, str]], notebook: str | Path
) -> dict[str, object]:
    """Command-line `-p KEY VALUE` pairs as typed values: unknown or repeated keys and values that
    do not parse as the declared type are one UsageError naming them all (`parameter_values`).
    `None`/`null` give None where allowed; booleans accept true/false, yes/no, 1/0 (any case)."""
    values, problems = parameter_values(declared, pairs, notebook)
    if problems:
        raise parameter_problems(problems, notebook)
    return values


def parameter_values(
    declared: Mapping[str, Parameter], pairs: Iterable[tuple[str, str]], notebook: str | Path
) -> tuple[dict[str, object], list[str]]:
    """Command-line `-p KEY VALUE` pairs as typed values, and the problem of every pair that is
    not one: the keys `declared` lacks (one problem naming them all), a key given twice, a
    value that does not parse as its declared type."""
    pairs = list(pairs)
    unknown = unknown_names(declared, dict.fromkeys(key for key, _ in pairs), notebook)
    problems = [] if unknown is None else [unknown]
    values: dict[str, object] = {}
    given: set[str] = set()
    for key, text in pairs:
        if key not in declared:
            continue
        if key in given:
            problems.append(f"parameter {key!r} is given twice; give it once")
            continue
        given.add(key)
        try:
            values[key] = parse_text(declared[key], text, notebook)
        except NotebookParameterError as exc:
            problems.append(str(exc))
    return values, problems


def run_notebook(
    notebook: str | Path,
    parameters: Mapping[str, object] | None = None,
    out_dir: str | Path = DEFAULT_OUT_DIR,
    *,
    progress: bool | None = None,
) -> NotebookOutputs:
    """Execute `notebook` with `parameters` and write the executed notebook and the HTML report
    to `out_dir` (see the module docstring for the full contract).

    Raises UsageError for undeclared parameters or mistyped values, ReportError when the kernel
    cannot start, NotebookRegressionError / NotebookError when a cell raised (after writing).
    """
    import papermill
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient.exceptions import DeadKernelError
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    path = Path(notebook)
    declared = read_parameters(path)
    given = dict(parameters or {})
    unknown = unknown_names(declared, given, path)
    problems = [] if unknown is None else [unknown]
    values = {}
    for name, value in given.items():
        try:
            values[name] = check_value(declared[name], value, path) if name in declared else value
        except NotebookParameterError as exc:
            problems.append(str(exc))
    if problems:
        raise parameter_problems(problems, path)
    out = Path(out_dir)
    outputs = NotebookOutputs(notebook=out / f"{path.stem}.ipynb", html=out / f"{path.stem}.html")
    failed = NotebookOutputs(
        notebook=out / f"{path.stem}{FAILED_SUFFIX}.ipynb", html=out / f"{path.stem}{FAILED_SUFFIX}.html"
    )
    if out.exists() and not out.is_dir():
        raise UsageError(
            f"the output directory {out} is a file; give a directory (default {DEFAULT_OUT_DIR}/)"
        )
    check_writable(outputs.html)
    check_writable(outputs.notebook)
    stages = _Stages(path.stem, progress)
    failure: papermill.PapermillExecutionError | None = None
    _KernelDeathNoise.install()
    with (
        tempfile.TemporaryDirectory(prefix="evalkit-notebook-") as workdir,
        _kernel_environment(Path(workdir) / "tmp"),
    ):
        # Parameters are injected here rather than by execute_notebook, whose own parameter
        # inspection cannot parse `float | None` annotations and warns about them.
        prepared = parameterize_notebook(load_notebook_node(str(path)), values, kernel_name=KERNEL_NAME)
        prepared_path, executed_path = Path(workdir) / "input.ipynb", Path(workdir) / "executed.ipynb"
        nbformat.write(prepared, prepared_path)
        stages.line(f"executing {sum(c.cell_type == 'code' for c in prepared.cells)} code cells")
        try:
            papermill.execute_notebook(
                str(prepared_path),
                str(executed_path),
                kernel_name=KERNEL_NAME,
                cwd=str(path.parent.resolve()),
                progress_bar=stages.bar,
                config=_kernel_config(Path(workdir) / "kernel.json"),
            )
        except papermill.PapermillExecutionError as exc:
            failure = exc
        except DeadKernelError as exc:
            raise ReportError(
                f"the Jupyter kernel running {path} died ({exc}); it may have run out of memory or "
                "crashed in native code. Nothing was written"
            ) from exc
        except NoSuchKernel as exc:
            raise ReportError(
                f"no Jupyter kernel named {KERNEL_NAME!r} to run {path}; install one into this environment "
                f"with `{sys.executable} -m ipykernel install --sys-prefix`"
            ) from exc
        executed = _read(executed_path)
    regression = failure is not None and str(failure.ename) == RegressionError.__name__
    written = outputs if failure is None or regression else failed
    stages.line(
        "cells done" if failure is None else f"stopped in cell [{failure.exec_count}] ({failure.ename})"
    )
    executed.metadata.papermill.update(input_path=str(path), output_path=str(written.notebook))
    system = (parameters or {}).get("system")
    offered = page_title(executed)
    title = f"evalkit · {path.stem}" + (
        f" · {offered}" if offered else f" · system {system}" if system else ""
    )
    write_atomic(written.html, render_html(executed, title=title))
    write_atomic(written.notebook, nbformat.writes(executed))
    if written is outputs:
        failed.html.unlink(missing_ok=True)
        failed.notebook.unlink(missing_ok=True)
    stages.line(f"wrote {written.html}")
    if failure is None:
        return outputs
    ename, evalue = str(failure.ename), str(failure.evalue)
    where = f"{path.name} failed in cell [{failure.exec_count}] with {ename}; see {written.html}"
    if regression:
        raise NotebookRegressionError(f"{where}:\n{evalue}", ename=ename, evalue=evalue, outputs=outputs)
    kept = f"the previous {outputs.html} is left as it was" if outputs.html.exists() else "no report written"
    raise NotebookError(f"{where} ({kept}): {evalue}", ename=ename, evalue=evalue, outputs=failed)


def page_title(notebook: NotebookNode) -> str | None:
    """The page title an output of the executed `notebook` offers, or None: the display metadata
    `evalkit.views.verdict.PAGE_TITLE_KEY` of a text/html output (the verdict's "PASS · system
    reference"); the first one in the notebook wins."""
    from evalkit.views.verdict import PAGE_TITLE_KEY  # pandas is imported only when rendering

    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            offered = output.get("metadata", {}).get("text/html", {}).get(PAGE_TITLE_KEY)
            if isinstance(offered, str) and offered:
                return offered
    return None


def render_html(notebook: NotebookNode, title: str) -> str:
    """The executed notebook as one self-contained HTML page (nbconvert's `lab` template without
    its CDN scripts): code cells and prompts hidden, images inline as base64 data URIs with their
    alt text, error outputs shortened to `Name: message`, and papermill's error banner cells left
    out — a report opens with its own first cells (the verdict), not with an exception banner;
    the failing cell's `Name: message` still shows where it failed. Outputs with nothing to show
    are left out (`_shows_something`: a section that does not apply to the run, such as "leaks"
    without behaviour metrics, still returns an empty result, which nbconvert would draw as an
    empty output box), and so is every code cell left without an output (its input is hidden):
    the page holds no empty boxes or gaps. The executed notebook keeps every cell as it ran."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    shown = copy.deepcopy(notebook)
    shown.cells = [c for c in shown.cells if PAPERMILL_ERROR_TAG not in c.get("metadata", {}).get("tags", [])]
    for cell in shown.cells:
        if cell.cell_type == "code":
            cell.outputs = [output for output in cell.get("outputs", []) if _shows_something(output)]
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output["traceback"] = [f"{output.get('ename')}: {output.get('evalue')}"]
    shown.cells = [c for c in shown.cells if c.cell_type != "code" or c.outputs]
    exporter = HTMLExporter(
        extra_loaders=[DictLoader({"evalkit_report.html.j2": _TEMPLATE})],
        template_file="evalkit_report.html.j2",
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    body, _ = exporter.from_notebook_node(shown, resources={"metadata": {"name": title}})
    return str(body)


# --- helpers -------------------------------------------------------------------------------------


def _shows_something(output: NotebookNode) -> bool:
    """False for an output a reader would see as an empty box: a result or display whose every
    representation is empty or whitespace, or a stream with no text. Errors always show."""
    kind = output.get("output_type")
    if kind == "stream":
        return bool(_text(output.get("text", "")).strip())
    if kind in ("execute_result", "display_data"):
        data = output.get("data", {})
        return any(
            _text(value).strip() if isinstance(value, str | list) else value for value in data.values()
        )
    return True


def _text(value: str | list[str]) -> str:
    """A notebook text field: a string, or the list of lines nbformat may store it as."""
    return value if isinstance(value, str) else "".join(value)


def _read(path: Path) -> NotebookNode:
    try:
        return nbformat.read(path, as_version=4)
    except (OSError, ValueError) as exc:  # nbformat's read errors are ValueErrors (JSON, schema)
        raise ReportError(f"cannot read notebook {path}: {exc}") from exc


class _KernelDeathNoise(logging.Filter):
    """Drops the records about a dead kernel: nbclient's "Kernel died while waiting for execute
    reply." (logged through papermill's logger) and asyncio's report, at exit, of a cell task
    whose DeadKernelError nobody retrieved. The death itself still reaches `run_notebook` as an
    exception, and from there the user."""

    LOGGERS = ("papermill", "asyncio")

    @classmethod
    def install(cls) -> None:
        """Add the filter to `LOGGERS` once per process (it stays: asyncio reports at exit)."""
        for name in cls.LOGGERS:
            logger = logging.getLogger(name)
            if not any(isinstance(f, cls) for f in logger.filters):
                logger.addFilter(cls())

    def filter(self, record: logging.LogRecord) -> bool:
        from nbclient.exceptions import DeadKernelError

        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, DeadKernelError) or record.getMessage().startswith("Kernel died"))


def _kernel_config(connection_file: Path) -> Any:
    """Kernel settings: the connection file at `connection_file` (inside the run's work folder,
    so it is removed with it even when an interrupt cuts the kernel's shutdown short), CurveZMQ
    transport encryption when pyzmq supports it (otherwise the kernel warns on stderr that it
    runs over TCP without encryption), and a kernel log level that keeps the kernel's own log
    quiet (on Ctrl-C it logs a ZMQError traceback while its client goes away; cell errors are
    unaffected: they are cell outputs, reported by papermill)."""
    import zmq
    from traitlets.config import Config

    return Config(
        {
            "KernelManager": {
                "connection_file": str(connection_file),
                "transport_encryption": "auto" if zmq.has("curve") else "disabled",
            },
            "NotebookClient": {"extra_arguments": [f"--IPKernelApp.log_level={_KERNEL_LOG_LEVEL}"]},
        }
    )


@contextmanager
def _kernel_environment(folder: Path) -> Iterator[None]:
    """Within the block, the environment the kernel starts with:
    - TMPDIR is `folder` (created here), so the kernel keeps its temporary files (the stores of
      the run it executes) there: they go with the work folder even when an interrupt kills the
      kernel before its own cleanup ran;
    - PYTHONPATH entries are made absolute against the caller's working directory, because the
      kernel runs in the notebook's folder: `PYTHONPATH=. evalkit report --system mine:factory`
      imports `mine` from where the command was typed, as `evalkit run` does;
    - EVALKIT_WORKDIR (`evalkit.files.WORKDIR_ENV`) is that working directory (unless already
      set), so the report shows paths below it relative to it (`shown_path`: the thresholds
      file, the suite folder) as `evalkit run` there would, not relative to the notebook's folder.
    The variables are restored after."""
    folder.mkdir()
    values = {"TMPDIR": str(folder), WORKDIR_ENV: os.environ.get(WORKDIR_ENV) or os.getcwd()}
    if os.environ.get("PYTHONPATH"):
        entries = os.environ["PYTHONPATH"].split(os.pathsep)
        values["PYTHONPATH"] = os.pathsep.join(str(Path(entry or ".").resolve()) for entry in entries)
    previous = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class _Stages:
    """Progress of one notebook run: papermill's bar when progress is enabled, else (CI logs, not
    a terminal) `line` writes one `<stem>: <stage> (<seconds> s)` line per stage on stderr;
    nothing at all for `progress=False`."""

    def __init__(self, stem: str, progress: bool | None) -> None:
        self.bar = progress is not False and progress_enabled(progress)
        self._lines = progress is None and not self.bar
        self._stem = stem
        self._start = time.monotonic()

    def line(self, stage: str) -> None:
        if self._lines:
            print(
                f"{self._stem}: {stage} ({time.monotonic() - self._start:.1f} s)", file=sys.stderr, flush=True
            )
