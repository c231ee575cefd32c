"""One request, one verdict (issue 34): for every kind of system — the reference store, a Python
system with not-applicable scenarios, a vector store, an HTTP system (serving the Python system
with not-applicable scenarios) and an MCP server — and every spelling of a run — `evalkit run`,
`run_request` (Python), the report notebook under papermill and `evalkit report` —

- a compared metric in any scope that falls below its threshold gives FAIL (exit 1): the test
  raises one threshold of the system's own recorded baseline just above what the run measures,
  which is the same comparison as the metric falling below it;
- with no baseline a run is never PASS, and in a CI context it fails (exit 1);
- the same request gives the same verdict in every spelling.

The cheap spellings (command line, Python) are drawn by hypothesis over systems, scopes and
metrics; each notebook spelling runs once per system kind, on a scope and metric drawn the same
way, because a notebook run takes seconds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import papermill
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.api import record_baseline, run_request
from evalkit.cli import main
from evalkit.harness.request import RunRequest
from evalkit.systems.http.server import create_app
from tests.servers import serving
from tests.shared import DATASETS, ROOT
from tests.systems_fixtures import LimitedSystem

NOTEBOOK = ROOT / "notebooks" / "eval_report.ipynb"
KINDS = ("reference", "python-na", "qdrant", "http", "mcp")


@pytest.fixture(scope="module")
def systems() -> Iterator[dict[str, str]]:
    """Each kind of system → its `--system` spec (the HTTP server runs while the module does)."""
    with ExitStack() as stack:
        url = stack.enter_context(serving(create_app(LimitedSystem())))
        yield {
            "reference": "reference",
            "python-na": "tests.systems_fixtures:limited_system",
            "qdrant": "qdrant",
            "http": url,
            "mcp": f"mcp:{DATASETS / 'mcp' / 'reference.toml'}",
        }


@pytest.fixture(scope="module")
def baselines(systems: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each kind → its recorded baseline file (`document`) and the (scope, metric, measured)
    triples that can fall below a threshold (measured below 1)."""
    recorded = {}
    for kind, spec in systems.items():
        folder = tmp_path_factory.mktemp(kind)
        request = _request(spec, folder / "thresholds.json")
        run = run_request(request)
        record_baseline(run, folder / "thresholds.json")
        result = run.result
        scopes = [("overall", m, v) for m, v in result.overall.metrics.items()]
        scopes += [(c, m, v) for c, agg in result.categories.items() for m, v in agg.metrics.items()]
        document = json.loads((folder / "thresholds.json").read_text())
        entry = f"{result.mode}@{result.top_k}"  # a served system embeds by itself: mode `system`
        assert result.mode == ("system" if kind in ("http", "mcp") else "deterministic"), kind
        compared = document[entry]["thresholds"]
        lowerable = [
            (scope, metric, value)
            for scope, metric, value in scopes
            if value < 0.99
            and metric
            in (compared["overall"] if scope == "overall" else compared["categories"].get(scope, {}))
        ]
        assert lowerable, f"{kind}: no metric below 1 to lower"
        recorded[kind] = {
            "document": document, "entry": entry, "lowerable": lowerable, "verdict": result.outcome.value
        }  # fmt: skip
    return recorded


def _request(spec: str, thresholds: Path | str) -> RunRequest:
    """The request the tests ask in every spelling: `spec`'s run of the built-in suite's folder
    against `thresholds`, without the gated pass (the ungated baselines are the ones compared)."""
    return RunRequest(system=spec, datasets=DATASETS, thresholds=thresholds, gated_pass="off", history="none")


def _raised(recorded: dict[str, Any], scope: str, metric: str, measured: float, path: Path) -> Path:
    """The `recorded` baseline document with the threshold of `metric` in `scope` just above
    `measured`, written to `path`."""
    data = json.loads(json.dumps(recorded["document"]))
    thresholds = data[recorded["entry"]]["thresholds"]
    (thresholds["overall"] if scope == "overall" else thresholds["categories"][scope])[metric] = round(
        measured + 0.01, 4
    )
    path.write_text(json.dumps(data))
    return path


def _cli_verdict(request: RunRequest, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["run", *request.argv(), "--out", str(out)])
    capsys.readouterr()
    return code, json.loads(out.read_text())["verdict"]["value"]


def _notebook_verdict(request: RunRequest, out: Path) -> str:
    """The verdict the report notebook reaches for `request` (FAIL when its last cell raised
    RegressionError), under papermill as CI runs it."""
    parameters = request.notebook_parameters()
    assert parameters is not None
    parameters = {k: str(v) if isinstance(v, Path) else v for k, v in parameters.items()}
    try:
        papermill.execute_notebook(
            str(NOTEBOOK), str(out.with_suffix(".ipynb")),
            parameters={**parameters, "out": str(out), "history": str(out.with_suffix(".sqlite3"))},
            progress_bar=False, kernel_name="python3",
        )  # fmt: skip
    except papermill.PapermillExecutionError as exc:
        assert exc.ename == "RegressionError", exc
        return "FAIL"
    return json.loads(out.read_text())["verdict"]["value"]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS), data=st.data())
def test_a_metric_below_its_threshold_fails_from_the_command_line_and_from_python(
    systems, baselines, tmp_path_factory, capsys, kind, data
):
    scope, metric, measured = data.draw(st.sampled_from(baselines[kind]["lowerable"]), label="scope")
    folder = tmp_path_factory.mktemp("raised")
    thresholds = _raised(baselines[kind], scope, metric, measured, folder / "t.json")
    request = _request(systems[kind], thresholds)
    result = run_request(request).result
    assert result.outcome.value == "FAIL"
    assert any(scope in r.message and metric in r.message for r in result.regressions)
    assert _cli_verdict(request, folder / "r.json", capsys) == (1, "FAIL")


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS), ci=st.booleans())
def test_without_a_baseline_a_run_is_never_a_pass_and_fails_in_ci(
    systems, tmp_path_factory, capsys, monkeypatch, kind, ci
):
    folder = tmp_path_factory.mktemp("none")
    monkeypatch.setenv("CI", "true") if ci else monkeypatch.delenv("CI", raising=False)
    request = _request(systems[kind], folder / "absent.json")
    python = run_request(request).result.outcome.value
    code, cli = _cli_verdict(request, folder / "r.json", capsys)
    assert python == cli == ("FAIL" if ci else "NOT COMPARED")
    assert code == (1 if ci else 0)


@pytest.mark.parametrize("kind", KINDS)
def test_the_notebook_and_evalkit_report_reach_the_verdict_of_the_command_line(
    systems, baselines, tmp_path, capsys, monkeypatch, kind
):
    recorded = baselines[kind]
    scope, metric, measured = recorded["lowerable"][len(kind) % len(recorded["lowerable"])]
    thresholds = _raised(recorded, scope, metric, measured, tmp_path / "t.json")
    request = _request(systems[kind], thresholds)
    assert _cli_verdict(request, tmp_path / "cli.json", capsys) == (1, "FAIL")
    assert _notebook_verdict(request, tmp_path / "papermill.json") == "FAIL"
    monkeypatch.setenv(
        "PYTHONPATH", str(ROOT)
    )  # as a user runs a system of their own: the kernel runs elsewhere
    parameters = request.notebook_parameters() or {}
    pairs = [("-p", name, "None" if value is None else str(value)) for name, value in parameters.items()]
    code = main(["report", "--out-dir", str(tmp_path / "html"), *(word for pair in pairs for word in pair)])
    capsys.readouterr()
    assert code == 1  # the threshold check failed
    monkeypatch.setenv("CI", "true")  # and with no baseline at all, in CI: the notebook fails too
    assert (
        _notebook_verdict(_request(systems[kind], tmp_path / "absent.json"), tmp_path / "ci.json") == "FAIL"
    )
