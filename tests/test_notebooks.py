"""The report notebooks on three levels — static checks of the committed files, evalkit.notebooks
(parameters, execution, HTML) on tiny notebooks, and `evalkit report` on the built-in suite. The
fourth level, nbval, runs the notebooks themselves (`make test` passes `--nbval-lax notebooks`)."""

from __future__ import annotations

import ast
import json
import logging
import re
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager

from evalkit.cli import main
from evalkit.errors import ReportError, UsageError
from evalkit.notebooks import (
    KERNEL_NAME,
    NotebookError,
    available_notebooks,
    parse_parameters,
    read_parameters,
    render_html,
    resolve_notebook,
    run_notebook,
)
from evalkit.scenarios.loading import load_suite
from tests.shared import DATASETS, NOTEBOOKS, ROOT

NOTEBOOK_FILES = sorted(NOTEBOOKS.glob("*.ipynb"))
SCENARIOS = [s.name for s in load_suite(DATASETS).scenarios]

# --- static: the committed notebooks ----------------------------------------------------------


def test_the_report_notebooks_exist() -> None:
    assert [p.stem for p in NOTEBOOK_FILES] == ["compare_runs", "eval_report", "scenario_drilldown", "traces"]


@pytest.fixture(params=NOTEBOOK_FILES, ids=lambda p: p.stem)
def notebook(request: pytest.FixtureRequest) -> tuple[Path, nbformat.NotebookNode]:
    path = request.param
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return path, nb


def test_outputs_are_stripped(notebook: tuple[Path, nbformat.NotebookNode]) -> None:
    _, nb = notebook
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], cell.source
            assert cell.execution_count is None, cell.source
        assert "execution" not in cell.metadata and "papermill" not in cell.metadata
    assert "papermill" not in nb.metadata


def test_generic_python3_kernelspec(notebook: tuple[Path, nbformat.NotebookNode]) -> None:
    _, nb = notebook
    assert nb.metadata.kernelspec == {"display_name": "Python 3", "language": "python", "name": "python3"}


def test_one_parameters_cell_and_it_comes_first(notebook: tuple[Path, nbformat.NotebookNode]) -> None:
    _, nb = notebook
    tagged = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    assert tagged == [0]
    assert nb.cells[0].cell_type == "code"


def test_parameters_are_typed_literals_with_help(notebook: tuple[Path, nbformat.NotebookNode]) -> None:
    path, nb = notebook
    declared = read_parameters(path)
    assert len(declared) == len(ast.parse(nb.cells[0].source).body)
    for p in declared.values():
        assert p.help, f"{p.name} has no # help comment"
        fits = (p.default is None and None in p.types) or any(
            t is not None and type(p.default) is t for t in p.types
        )
        assert fits, f"{p.name}: default {p.default!r} does not match {p.annotation}"


_FORBIDDEN = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.For, ast.AsyncFor, ast.While,
    ast.If, ast.IfExp, ast.Try, ast.With, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
)  # fmt: skip
_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE\s+TABLE|DROP\s+TABLE)\b", re.IGNORECASE)


def test_no_logic_in_notebooks(notebook: tuple[Path, nbformat.NotebookNode]) -> None:
    _, nb = notebook
    for cell in nb.cells[1:]:
        if cell.cell_type != "code":
            continue
        tree = ast.parse(cell.source)
        assert len(tree.body) == 1, f"one statement per cell: {cell.source!r}"
        for node in ast.walk(tree):
            assert not isinstance(node, _FORBIDDEN), f"{type(node).__name__} in {cell.source!r}"
            if isinstance(node, ast.Import | ast.ImportFrom):
                modules = (
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                )
                assert all(m == "evalkit" or m.startswith("evalkit.") for m in modules), cell.source
        assert not _SQL.search(cell.source), cell.source


_OWN_HEADING = re.compile(r"^report\.(section|contents)\(")
"""A display cell that renders its own heading (`evalkit.report`: the section's <h2>/<h3>)."""


def test_every_display_cell_follows_a_markdown_heading(notebook: tuple[Path, nbformat.NotebookNode]) -> None:
    _, nb = notebook
    for before, cell in zip(nb.cells, nb.cells[1:], strict=False):
        if cell.cell_type == "code" and isinstance(ast.parse(cell.source).body[0], ast.Expr):
            if _OWN_HEADING.match(cell.source):
                continue
            assert before.cell_type == "markdown" and re.search(r"^#{1,4} ", before.source, re.M), cell.source


def test_the_report_notebook_shows_every_section_once_in_catalogue_order() -> None:
    from evalkit.views.report import SECTIONS

    nb = nbformat.read(NOTEBOOKS / "eval_report.ipynb", as_version=4)
    keys = [m.group(1) for c in nb.cells if (m := re.search(r'report\.section\(run, "([a-z-]+)"', c.source))]
    assert keys == [s.key for s in SECTIONS if s.key != "contents"]
    assert sum(c.source.startswith("report.contents(") for c in nb.cells) == 1
    headings = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert [h for h in headings if h.startswith("# ")] == [headings[0]]  # one title, every section below


def test_eval_report_declares_the_documented_parameters() -> None:
    declared = read_parameters(NOTEBOOKS / "eval_report.ipynb")
    assert {name: p.annotation for name, p in declared.items()} == {
        "embedder": "str",
        "system": "str",
        "top_k": "int",
        "gated_pass": "float | str | None",
        "datasets": "str | None",
        "thresholds": "str | None",
        "require_baseline": "bool | None",
        "report_json": "str | None",
        "out": "str",
        "fail_on_regression": "bool",
        "mutants": "str | None",
        "history": "str",
        "perturb": "str | None",
    }
    assert declared["datasets"].default is None  # the built-in suite, from any working directory
    assert declared["gated_pass"].default is None
    assert [n for n, p in declared.items() if p.is_path] == [
        "datasets",
        "thresholds",
        "report_json",
        "out",
        "history",
    ]


def test_drilldown_defaults_to_a_built_in_scenario() -> None:
    declared = read_parameters(NOTEBOOKS / "scenario_drilldown.ipynb")
    assert declared["scenario"].default in SCENARIOS
    assert {"scenario", "embedder", "top_k", "datasets", "report_json"} <= set(declared)


def test_python3_kernel_runs_on_this_interpreter() -> None:
    # jupyter_client replaces a bare "python"/"python3" argv[0] by sys.executable.
    argv0 = KernelSpecManager().get_kernel_spec(KERNEL_NAME).argv[0]
    bare = {"python", f"python{sys.version_info[0]}", "python{}.{}".format(*sys.version_info[:2])}
    assert argv0 in bare or Path(argv0).resolve() == Path(sys.executable).resolve()


# --- evalkit.notebooks on tiny notebooks ---------------------------------------------------------


def _write_notebook(path: Path, parameters: str, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    nb.cells = [nbformat.v4.new_code_cell(parameters, metadata={"tags": ["parameters"]})]
    nb.cells += [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, path)
    return path


PARAMS = """\
data: str = "data"  # path of the data folder
top_k: int = 5  # results per query
gate: float | None = None  # gate; None = default
flag: bool = True  # a switch
"""


def test_read_parameters_reads_names_types_defaults_and_help(tmp_path: Path) -> None:
    declared = read_parameters(_write_notebook(tmp_path / "n.ipynb", PARAMS))
    assert [(p.name, p.annotation, p.default, p.help) for p in declared.values()] == [
        ("data", "str", "data", "path of the data folder"),
        ("top_k", "int", 5, "results per query"),
        ("gate", "float | None", None, "gate; None = default"),
        ("flag", "bool", True, "a switch"),
    ]
    assert declared["data"].is_path and not declared["top_k"].is_path


def test_quoted_optional_annotations_read_as_unions(tmp_path: Path) -> None:
    source = 'gate: "Optional[float]" = None  # gate\nname: Optional[str] = None  # a name\n'
    declared = read_parameters(_write_notebook(tmp_path / "n.ipynb", source))
    assert [(p.annotation, p.types) for p in declared.values()] == [
        ("float | None", (float, None)),
        ("str | None", (str, None)),
    ]


def test_papermill_parses_every_declared_parameter(notebook: tuple[Path, nbformat.NotebookNode]) -> None:
    from papermill.inspection import _infer_parameters
    from papermill.iorw import load_notebook_node

    path, _ = notebook
    seen = {p.name: p.inferred_type_name for p in _infer_parameters(load_notebook_node(str(path)))}
    assert list(seen) == list(read_parameters(path)), "papermill --help-notebook would omit some"
    assert all(kind != "None" for kind in seen.values()), seen  # every type is read


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("x = 1  # no annotation", "expected `name: type = value`"),
        ("x: list = []  # a list", "use int, float, bool, str"),
        ("x: int = 2 * 3  # computed", "must be a literal"),
        ("x: int = (  # broken", "not valid Python"),
    ],
)
def test_read_parameters_rejects_what_it_cannot_inject(tmp_path: Path, source: str, problem: str) -> None:
    with pytest.raises(ReportError, match=re.escape(problem)):
        read_parameters(_write_notebook(tmp_path / "n.ipynb", source))


def test_read_parameters_needs_exactly_one_parameters_cell(tmp_path: Path) -> None:
    path = _write_notebook(tmp_path / "n.ipynb", PARAMS)
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("y: int = 1  # y", metadata={"tags": ["parameters"]}))
    nbformat.write(nb, path)
    with pytest.raises(ReportError, match="exactly one cell tagged 'parameters', found 2"):
        read_parameters(path)


def test_parse_parameters_converts_text_to_the_declared_types(tmp_path: Path) -> None:
    path = _write_notebook(tmp_path / "n.ipynb", PARAMS)
    declared = read_parameters(path)
    pairs = [("top_k", "10"), ("gate", "0.3"), ("flag", "no"), ("data", "None")]
    assert parse_parameters(declared, pairs, path) == {
        "top_k": 10,
        "gate": 0.3,
        "flag": False,
        "data": "None",
    }
    assert parse_parameters(declared, [("gate", "none")], path) == {"gate": None}


def test_none_is_none_for_an_optional_text_parameter_and_text_for_a_plain_one(tmp_path: Path) -> None:
    source = 'label: "Optional[str]" = "x"  # a label; None for none\nname: str = "n"  # a name\n'
    path = _write_notebook(tmp_path / "n.ipynb", source)
    declared = read_parameters(path)
    assert parse_parameters(declared, [("label", "None"), ("name", "None")], path) == {
        "label": None,
        "name": "None",
    }
    assert parse_parameters(declared, [("label", "null")], path) == {"label": None}
    assert parse_parameters(declared, [("label", "0,10")], path) == {"label": "0,10"}


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([("nope", "1")], r"does not declare parameter 'nope'; it declares: data \(str\)"),
        ([("top_k", "many")], r"parameter 'top_k' of n.ipynb expects int, got 'many'"),
        ([("flag", "maybe")], r"expects bool"),
        ([("gate", "high")], r"expects float \| None"),
        ([("top_k", "1"), ("top_k", "2")], r"'top_k' is given twice"),
    ],
)
def test_parse_parameters_rejects_bad_input(
    tmp_path: Path, pairs: list[tuple[str, str]], message: str
) -> None:
    path = _write_notebook(tmp_path / "n.ipynb", PARAMS)
    with pytest.raises(UsageError, match=message):
        parse_parameters(read_parameters(path), pairs, path)


@pytest.mark.parametrize(
    ("parameters", "message"),
    [({"unknown": 1}, "does not declare parameter"), ({"top_k": "5"}, "expects int, got '5'")],
)
def test_run_notebook_rejects_bad_parameters_before_running(
    tmp_path: Path, parameters: dict, message: str
) -> None:
    path = _write_notebook(tmp_path / "n.ipynb", PARAMS, "raise SystemExit('must not run')")
    with pytest.raises(UsageError, match=message):
        run_notebook(path, parameters, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_resolve_notebook_names_the_available_notebooks(tmp_path: Path) -> None:
    _write_notebook(tmp_path / "alpha.ipynb", PARAMS)
    assert resolve_notebook("alpha", tmp_path) == tmp_path / "alpha.ipynb"
    assert available_notebooks(tmp_path) == ["alpha"]
    with pytest.raises(UsageError, match="available notebooks: alpha"):
        resolve_notebook("beta", tmp_path)


def test_run_notebook_executes_in_the_notebook_folder_and_writes_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "nbs"
    folder.mkdir()
    path = _write_notebook(
        folder / "tiny.ipynb",
        PARAMS,
        "import os, sys\nprint(sys.executable)\nprint(os.getcwd())\nprint(data, top_k, gate, flag)",
    )
    monkeypatch.chdir(tmp_path)
    outputs = run_notebook(path, {"data": "mine", "top_k": 3}, "out", progress=False)
    assert outputs.html == Path("out/tiny.html") and outputs.notebook == Path("out/tiny.ipynb")
    executed = nbformat.read(outputs.notebook, as_version=4)
    printed = executed.cells[2].outputs[0].text.splitlines()  # cell 1 holds the injected parameters
    assert printed[0] == sys.executable
    assert Path(printed[1]).resolve() == folder.resolve()
    assert printed[2] == f"{tmp_path.resolve() / 'mine'} 3 None True"  # a path parameter, made absolute
    html = outputs.html.read_text(encoding="utf-8")
    assert "print(sys.executable)" not in html  # code hidden
    assert "<script" not in html  # nothing loaded from a CDN


def test_run_notebook_writes_both_files_then_raises_when_a_cell_fails(tmp_path: Path) -> None:
    path = _write_notebook(tmp_path / "bad.ipynb", PARAMS, "print('before')", "raise ValueError('boom')")
    with pytest.raises(NotebookError, match=r"bad.ipynb failed in cell \[\d+\] with ValueError") as caught:
        run_notebook(path, {}, tmp_path / "out", progress=False)
    assert (caught.value.ename, caught.value.evalue) == ("ValueError", "boom")
    assert caught.value.outputs.html.is_file() and caught.value.outputs.notebook.is_file()
    html = caught.value.outputs.html.read_text(encoding="utf-8")
    assert "ValueError: boom" in html and "before" in html
    assert "Traceback" not in html and "raise ValueError" not in html  # shortened in the HTML only
    executed = nbformat.read(caught.value.outputs.notebook, as_version=4)
    assert any(o.get("output_type") == "error" for c in executed.cells for o in c.get("outputs", []))


def test_a_failed_cell_leaves_the_previous_report_as_it_was_and_writes_the_failure_beside_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    good = _write_notebook(tmp_path / "n.ipynb", PARAMS, "print('good')")
    outputs = run_notebook(good, {}, out, progress=False)
    before = (outputs.html.read_bytes(), outputs.notebook.read_bytes())
    bad = _write_notebook(tmp_path / "n.ipynb", PARAMS, "raise FileNotFoundError('missing.json')")
    with pytest.raises(NotebookError, match=r"the previous .*n\.html is left as it was") as caught:
        run_notebook(bad, {}, out, progress=False)
    assert (outputs.html.read_bytes(), outputs.notebook.read_bytes()) == before
    assert caught.value.outputs.html == out / "n.failed.html"
    assert "FileNotFoundError: missing.json" in caught.value.outputs.html.read_text(encoding="utf-8")
    assert caught.value.outputs.notebook == out / "n.failed.ipynb"
    good = _write_notebook(tmp_path / "n.ipynb", PARAMS, "print('good again')")
    run_notebook(good, {}, out, progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["n.html", "n.ipynb"]  # the stale failure is gone


def test_a_kernel_that_dies_is_a_report_error_and_its_log_noise_is_dropped(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    path = _write_notebook(tmp_path / "crash.ipynb", PARAMS, "import os\nos._exit(9)")
    with pytest.raises(ReportError, match=r"the Jupyter kernel running .*crash.ipynb died \(Kernel died\)"):
        run_notebook(path, {}, tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()
    assert "Kernel died while waiting" not in capfd.readouterr().err


def test_the_kernel_death_filter_drops_only_records_about_a_dead_kernel() -> None:
    from nbclient.exceptions import DeadKernelError

    from evalkit.notebooks import _KernelDeathNoise

    def record(message: str, error: BaseException | None = None) -> logging.LogRecord:
        exc_info = (type(error), error, None) if error else None
        return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, None, exc_info)

    kept = _KernelDeathNoise().filter
    assert not kept(record("Kernel died while waiting for execute reply."))
    assert not kept(record("Task exception was never retrieved", DeadKernelError("Kernel died")))
    assert kept(record("Task exception was never retrieved", RuntimeError("a real bug")))
    assert kept(record("Executing Cell 3"))


# --- the report itself: `evalkit report` on the built-in suite --------------------------------------


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.usefixtures("at_root")
def test_report_writes_self_contained_html_with_scenario_table_and_charts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--out-dir", str(tmp_path), "--no-progress"]) == 0
    assert f"report: {tmp_path / 'eval_report.html'}" in capsys.readouterr().out
    html = (tmp_path / "eval_report.html").read_text(encoding="utf-8")
    assert "Per scenario: ungated (measured, checked in CI) vs gated" in html
    assert all(f">{name}</th>" in html for name in SCENARIOS)
    assert html.count("data:image/png;base64,") >= 3
    assert "tables.scenario_table(run)" not in html  # no code input
    assert "<script" not in html
    assert "No gating regressions." in html
    executed = nbformat.read(tmp_path / "eval_report.ipynb", as_version=4)
    assert not [o for c in executed.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert "<title>evalkit · eval_report · PASS · system reference</title>" in html
    opening = visible_text(html)[:2500]
    assert "Contents" in opening and "Queries to look at" in opening
    assert "Verdict: PASS" in opening
    assert "system reference · mode deterministic · top_k 5 · gate min_relevance 0.4" in opening
    assert "Reproduce this run evalkit run --perturb distractors=0,10,25,50 --mutants report" in visible_text(
        html
    )
    assert "Baseline: datasets/thresholds.json, recorded " in visible_text(html)  # not the kernel's folder
    assert str(ROOT) not in html and str(tmp_path) not in html  # no path of this machine
    assert opening.index("Verdict: PASS") < opening.index("Biggest losses") < opening.index("Contents")
    assert not empty_boxes(html)  # sections that do not apply here ("leaks", ...) leave no box
    assert "No description has been provided" not in html
    assert 'alt="Chart: Ungated vs gated, per scenario; recall; precision; MRR"' in html
    plain = [o["data"]["text/plain"] for c in executed.cells for o in c.get("outputs", []) if "data" in o]
    assert plain and not [text for text in plain if "Styler at 0x" in text or "<Figure size" in text]


def empty_boxes(html: str) -> list[str]:
    """The ids of the page's cells that draw an output area or a cell with nothing in it."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    cells = soup.select("div.jp-CodeCell") + soup.select("div.jp-OutputArea-output")
    return [str(c.get("id") or c.find_parent(id=True).get("id")) for c in cells if not c.get_text().strip()]


def test_the_html_leaves_out_outputs_with_nothing_to_show_and_the_cells_left_empty() -> None:
    from bs4 import BeautifulSoup

    def result(html: str, plain: str) -> nbformat.NotebookNode:
        data = {"text/html": html, "text/plain": plain}
        return nbformat.v4.new_output("execute_result", data=data, execution_count=1)

    blank = nbformat.v4.new_output("stream", text="\n")
    cells = [
        nbformat.v4.new_code_cell("x = 1", id="quiet"),
        nbformat.v4.new_code_cell("section", id="hidden", outputs=[result("", "")]),
        nbformat.v4.new_code_cell("print()", id="blank", outputs=[blank]),
        nbformat.v4.new_markdown_cell("## Kept", id="heading"),
        nbformat.v4.new_code_cell("shown", id="shown", outputs=[result("", ""), result("<p>hi</p>", "hi")]),
    ]
    html = render_html(nbformat.v4.new_notebook(cells=cells), title="t")
    soup = BeautifulSoup(html, "html.parser")
    assert [cell["id"] for cell in soup.select("div.jp-Cell")] == ["cell-id=heading", "cell-id=shown"]
    assert [str(o.p) for o in soup.select("div.jp-OutputArea-output")] == ["<p>hi</p>"]
    assert not empty_boxes(html)


def visible_text(html: str) -> str:
    """The page's text as a reader sees it: no head, styles or scripts; whitespace collapsed."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for hidden in soup(["head", "style", "script"]):
        hidden.decompose()
    return " ".join(soup.get_text(" ").split())


@pytest.mark.usefixtures("at_root")
def test_report_at_a_top_k_without_a_baseline_says_the_baseline_check_is_off_in_its_final_cell(
    tmp_path: Path,
) -> None:
    args = [
        "report",
        "--out-dir",
        str(tmp_path),
        "--no-progress",
        "-p",
        "top_k",
        "10",
        "-p",
        "mutants",
        "none",
    ]
    assert main(args) == 0
    executed = nbformat.read(tmp_path / "eval_report.ipynb", as_version=4)
    final = "".join(o.get("text", "") for o in executed.cells[-1].get("outputs", []))
    assert final.startswith("baseline check OFF: no baseline for deterministic at top_k 10")
    html = (tmp_path / "eval_report.html").read_text(encoding="utf-8")
    assert "baseline check OFF: no baseline for deterministic at top_k 10" in html
    assert "No gating regressions." not in html


def _quick_report(out_dir: Path) -> list[str]:
    """`evalkit report` into `out_dir` without the mutation suite and the perturbation curve."""
    return [
        "report",
        "--out-dir",
        str(out_dir),
        "--no-progress",
        "-p",
        "mutants",
        "none",
        "-p",
        "perturb",
        "None",
    ]


@pytest.mark.usefixtures("at_root")
def test_report_appends_its_run_to_the_history_so_the_second_report_shows_a_trend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit import load_history

    argv = _quick_report(tmp_path)
    history = tmp_path / "history.sqlite3"  # next to the saved run, as evalkit run's is next to its report
    assert main(argv) == 0
    assert f"history: appended to {history}" in capsys.readouterr().out
    first = visible_text((tmp_path / "eval_report.html").read_text(encoding="utf-8"))
    assert "Not shown: no run history yet" in first  # its folder is not below here: left unnamed
    assert main(argv) == 0
    assert f"history: appended to {history}" in capsys.readouterr().out
    second = (tmp_path / "eval_report.html").read_text(encoding="utf-8")
    assert "Not shown: no run history" not in visible_text(second)
    assert 'alt="Chart: Trend over 1 run (overall' in second
    assert load_history(history)["run_id"].nunique() == 2
    saved = ["-p", "report_json", str(tmp_path / "eval_report.json")]
    assert main([*argv, *saved]) == 0  # a saved report shown again is not a new run
    assert main([*argv, "-p", "history", "none"]) == 0
    assert "history: appended" not in capsys.readouterr().out
    assert load_history(history)["run_id"].nunique() == 2


@pytest.mark.usefixtures("at_root")
def test_report_says_when_it_replaced_the_saved_run_of_another_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", ".")
    argv = _quick_report(tmp_path)
    assert main(argv) == 0
    assert "replaced" not in capsys.readouterr().err  # nothing was there
    assert main([*argv, "--system", "tests.systems_fixtures:limited_system"]) == 0
    note = f"evalkit: note: replaced {tmp_path / 'eval_report.json'}, a run of system reference on suite"
    assert note in capsys.readouterr().err
    assert main([*argv, "--system", "tests.systems_fixtures:limited_system"]) == 0
    assert "replaced" not in capsys.readouterr().err  # the same system and suite again: no note


def _unreachable_thresholds(path: Path, top_k: int = 5) -> Path:
    ones = {"recall": 1.0, "precision": 1.0, "mrr": 1.0, "hit_rate": 1.0}
    entry = {
        "recorded_at": "2026-01-01T00:00:00+00:00",
        "top_k": top_k,
        "baseline": {"overall": {**ones, "queries": 1}, "categories": {}},
        "thresholds": {"overall": ones, "categories": {}},
    }
    path.write_text(json.dumps({"deterministic": entry}), encoding="utf-8")
    return path


@pytest.mark.usefixtures("at_root")
def test_report_exits_1_with_regressions_on_stderr_and_still_writes_the_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    thresholds = _unreachable_thresholds(tmp_path / "thresholds.json")
    argv = [
        "report",
        "-p",
        "thresholds",
        str(thresholds),
        "--out-dir",
        str(tmp_path / "out"),
        "--no-progress",
    ]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "the threshold check failed" in err
    assert re.search(r"\d+ regressions? against the thresholds", err)
    assert "[metric] overall: precision" in err
    html = (tmp_path / "out" / "eval_report.html").read_text(encoding="utf-8")
    assert "RegressionError" in html and "overall: precision" in html
    opening = visible_text(html)[:2500]
    assert "Verdict: FAIL — 4 regressions" in opening  # the verdict opens the page...
    assert (
        "[metric] overall: hit_rate 0.9756 is below its threshold 1.0000" in opening
    )  # ...with every regression
    assert "An Exception was encountered" not in html  # ...not papermill's banner
    assert html.count("data:image/png;base64,") >= 3  # the charts above the failing cell are there
    assert (tmp_path / "out" / "eval_report.ipynb").is_file()


@pytest.mark.usefixtures("at_root")
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-p", "colour", "red"], "does not declare parameter 'colour'"),
        (["-p", "top_k", "many"], "parameter 'top_k' of eval_report.ipynb expects int, got 'many'"),
        (["--notebook", "nope"], "available notebooks: compare_runs, eval_report, scenario_drilldown"),
        (
            ["-p", "perturb", "distractors=0,x"],
            "perturb 'distractors=0,x': 'x' is not a whole number 0 or more",
        ),
        (["-p", "perturb", "paraphrase=1"], "no deterministic paraphrase source exists"),
        (["-p", "gated_pass", "on"], "gated_pass: expected `off` or a gate from 0 to 1"),
        (["-p", "embedder", "bert"], "embedder: unknown embedder 'bert'"),
    ],
)
def test_report_rejects_bad_parameters_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["report", *argv, "--out-dir", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_notebook_paths_are_relative_to_the_kernels_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit import notebook_path

    assert notebook_path(tmp_path / "x.json") == tmp_path / "x.json"  # absolute: as given
    monkeypatch.chdir(tmp_path)
    assert notebook_path("data/x.json") == tmp_path / "data" / "x.json"


def test_inside_a_project_notebook_paths_are_relative_to_its_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit import notebook_path

    (tmp_path / "evalkit.toml").write_text('datasets = "."\n', encoding="utf-8")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")  # where Jupyter starts a kernel
    assert notebook_path("reports/x.json") == tmp_path / "reports" / "x.json"
    monkeypatch.chdir(tmp_path)  # where papermill is usually typed
    assert notebook_path("reports/x.json") == tmp_path / "reports" / "x.json"


def test_plain_papermill_from_an_unrelated_folder_runs_the_builtin_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The defaults need no folder: None is the built-in suite and its baselines, outputs go to
    reports/ under the working directory (the issue: papermill from the repository root failed)."""
    import papermill

    monkeypatch.chdir(tmp_path)
    papermill.execute_notebook(
        str(NOTEBOOKS / "eval_report.ipynb"), "out.ipynb", parameters={"mutants": None}, progress_bar=False
    )
    assert (tmp_path / "reports" / "eval_report.json").is_file()
    executed = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    final = "".join(o.get("text", "") for o in executed.cells[-1].get("outputs", []))
    assert "No gating regressions." in final


def test_progress_off_a_terminal_is_one_line_per_stage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    cells = [f"x{n} = {n}" for n in range(12)]
    path = _write_notebook(tmp_path / "many.ipynb", PARAMS, *cells)
    run_notebook(path, {}, tmp_path / "out", progress=None)  # stderr is captured: not a terminal
    lines = capsys.readouterr().err.splitlines()
    assert [line.rsplit(" (", 1)[0] for line in lines] == [
        "many: executing 14 code cells",  # the parameters cell, the injected one and the 12 cells
        "many: cells done",
        f"many: wrote {tmp_path / 'out' / 'many.html'}",
    ]
    assert all(re.search(r" \(\d+\.\d s\)$", line) for line in lines)
    run_notebook(path, {}, tmp_path / "quiet", progress=False)
    assert capsys.readouterr().err == ""
