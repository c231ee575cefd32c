"""The report's sections (evalkit.views.report) and the verdict block: one heading hierarchy, a
table of contents whose links land, reasons instead of empty sections, no `nan` cell, the
baseline with its margins, and a command that really reproduces the run."""

from __future__ import annotations

import itertools
import json
import re
import shlex
import shutil
from pathlib import Path

import pandas as pd
import pytest
from bs4 import BeautifulSoup

from evalkit import ReferenceSystem, load_run, run_eval
from evalkit.harness.thresholds_file import find_baseline, read_thresholds
from evalkit.notebooks import page_title
from evalkit.views import report, tables
from evalkit.views.frames import EvalRun
from evalkit.views.verdict import PAGE_TITLE_KEY, run_verdict
from tests.shared import DATASETS, cli


class NoGateSystem(ReferenceSystem):
    """The reference store declaring no relevance gate (as the built-in vector stores do)."""

    name = "no-gate"
    capabilities = frozenset({"global_thoughts", "supersession", "contradiction", "projects", "recency"})


@pytest.fixture(scope="module")
def reference() -> EvalRun:
    return run_eval(datasets=DATASETS, thresholds=DATASETS / "thresholds.json", mutations=True)


@pytest.fixture(scope="module")
def no_gate() -> EvalRun:
    return run_eval(datasets=DATASETS, system=NoGateSystem(), thresholds=None)


def _page(run: EvalRun, **options: object) -> BeautifulSoup:
    parts = [report.section(run, spec.key, **options)._repr_html_() for spec in report.SECTIONS]
    return BeautifulSoup("<h1>evalkit report</h1>" + "".join(parts), "html.parser")


def _headings(page: BeautifulSoup) -> list[tuple[int, str]]:
    return [(int(h.name[1]), h.get("id", "")) for h in page.find_all(re.compile(r"^h[1-6]$"))]


@pytest.mark.parametrize("which", ["reference", "no_gate"])
def test_one_heading_hierarchy_and_every_contents_link_lands(
    which: str, request: pytest.FixtureRequest
) -> None:
    run = request.getfixturevalue(which)
    page = _page(run)
    levels = _headings(page)
    assert levels[0][0] == 1 and [level for level, _ in levels].count(1) == 1
    for (before, _), (level, key) in itertools.pairwise(levels):
        assert level <= before + 1, f"h{level} #{key} follows an h{before}: a level is skipped"
    ids = [key for _, key in levels[1:]]
    assert len(ids) == len(set(ids)), "two sections share an anchor"
    links = [a["href"] for a in page.select('[id="contents"] + ul a, ul a') if a["href"].startswith("#")]
    assert links and {link[1:] for link in links} <= set(ids)


def test_no_trend_names_the_history_relative_to_where_the_command_ran(
    no_gate: EvalRun, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The report is shared: it shows no absolute path of the machine that made it."""
    monkeypatch.chdir(tmp_path)
    history = tmp_path / "reports" / "history.sqlite3"
    reason = report.section(no_gate, "trend", history=pd.DataFrame(), history_path=str(history)).reason
    assert (
        reason
        == "no run history at reports/history.sqlite3 yet: `evalkit run` and `evalkit report` append each "
        "run to it"
    )


def test_a_system_without_a_relevance_gate_gets_true_reasons_not_empty_sections(no_gate: EvalRun) -> None:
    reasons = {
        spec.key: report.section(no_gate, spec.key, history=pd.DataFrame()).reason for spec in report.SECTIONS
    }
    gateless = "the run's system 'no-gate' declares no relevance gate, so the run has no gated pass"
    assert reasons["dropped"] == reasons["sweep"] == reasons["gate-recommendation"] == gateless
    assert reasons["benchmark"].startswith("this run recorded no benchmark metrics")
    assert reasons["detection"].startswith("mutation testing measures the reference store's search")
    assert reasons["trend"] == "no run history yet: `evalkit run` and `evalkit report` append each run to it"
    assert report.section(no_gate, "benchmark-chart").hidden  # a child of a section that does not apply
    html = str(_page(no_gate))
    assert "--no-gated" not in html and "untitled" not in html and "gated pass skipped" not in html


@pytest.mark.parametrize("which", ["reference", "no_gate"])
def test_no_table_cell_reads_nan(which: str, request: pytest.FixtureRequest) -> None:
    page = _page(request.getfixturevalue(which))
    cells = [cell.get_text(strip=True) for cell in page.find_all(["td", "th"])]
    assert cells
    assert not [c for c in cells if re.search(r"\bnan\b", c, re.IGNORECASE)]


def test_a_not_applicable_scenario_reads_n_a() -> None:
    run = run_eval(datasets=DATASETS, system=NoGateSystem(), thresholds=None, scenarios=["no-match"])
    table = BeautifulSoup(report.section(run, "scenarios")._repr_html_(), "html.parser")
    assert "n/a" in [td.get_text(strip=True) for td in table.find_all("td")]


def test_the_failure_table_lists_what_failed_first_and_links_to_drilldowns(reference: EvalRun) -> None:
    failures = report.failures_frame(reference)
    assert list(failures.columns) == list(report.FAILURE_COLUMNS)
    by_id = failures.set_index("query_id")
    assert by_id.loc["retrieval-quality#4", "problem"] == "missed relevant: feature-flags"
    assert by_id.loc["retrieval-quality#4", "query #"] == 4
    assert by_id.loc["contradiction#1", "problem"] == "forbid: 'rate-limit-100' was retrieved at rank 1"
    assert list(failures["recall"]) == sorted(failures["recall"])  # no failing scenario: by recall
    page = _page(reference)
    anchors = {h["id"] for h in page.find_all("h3")}
    links = [a["href"][1:] for a in page.select('[id="failures"] ~ div a[href^="#scenario-"]')]
    assert links and set(links) <= anchors
    assert report.scenario_anchor("a b/c") == "scenario-a-b-c"


def test_the_verdict_block_shows_the_baseline_deltas_margins_and_strength(reference: EvalRun) -> None:
    verdict = run_verdict(reference)
    entry = find_baseline(read_thresholds(DATASETS / "thresholds.json").modes, "deterministic", 5)
    assert entry is not None
    overall = {m.metric: m for m in verdict.margins if m.scope == "overall"}
    recall = overall["recall"]
    assert recall.baseline == entry.baseline.overall.recall
    assert recall.threshold == entry.thresholds.overall.recall
    assert recall.margin == pytest.approx(recall.value - recall.threshold)
    assert recall.delta == pytest.approx(recall.value - recall.baseline)
    assert {m.scope for m in verdict.margins} == {"overall", *entry.thresholds.categories}
    assert verdict.baseline is not None and "recorded " + entry.recorded_at in verdict.baseline
    real = [o for o in reference.result.detection.outcomes if not o.control]
    assert (
        verdict.strength
        == f"suite strength: caught {sum(o.caught for o in real)} of {len(real)} injected bugs"
    )
    text = str(verdict)
    assert "overall recall: " in text and "margin +0.0200" in text and "Reproduce: evalkit run" in text
    html = verdict._repr_html_()
    assert "equals its baseline (Δ 0)" in html and "suite strength" in html and "-0.0000" not in html
    data, metadata = verdict._repr_mimebundle_()
    assert metadata["text/html"][PAGE_TITLE_KEY] == "PASS · system reference" == verdict.page_title
    assert data["text/plain"] == text


def test_a_run_without_baseline_has_no_margins_and_an_older_report_says_nothing_false(
    no_gate: EvalRun, tmp_path: Path
) -> None:
    verdict = run_verdict(no_gate)
    assert verdict.margins == () and verdict.baseline is None and verdict.strength is None
    saved = json.loads(no_gate.save(tmp_path / "r.json").read_text(encoding="utf-8"))
    for key in ("datasets", "scenarios", "baseline"):
        saved["provenance"].pop(key, None)  # a report written before they were recorded
    (tmp_path / "old.json").write_text(json.dumps(saved), encoding="utf-8")
    assert run_verdict(load_run(tmp_path / "old.json")).command is None


def test_the_reproduce_command_makes_the_same_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(DATASETS, suite)
    monkeypatch.chdir(tmp_path)
    run = run_eval(
        datasets="suite", scenarios=["temporal", "multi-hop"], top_k=3, thresholds=None, gated=False
    )
    command = run_verdict(run).command
    assert command == (
        "evalkit run --top-k 3 --gated-pass off --datasets suite --scenario temporal --scenario multi-hop "
        "--thresholds none"
    )
    argv = shlex.split(command)[2:]
    code, _, _ = cli(capsys, "run", *argv, "--out", str(tmp_path / "again.json"), "--history", "none")
    assert code == 0
    again = load_run(tmp_path / "again.json")
    assert again.overall.drop(columns="pass").equals(run.overall.drop(columns="pass"))
    assert run_verdict(again).command == (  # from the request the command line recorded
        "evalkit run --datasets suite --scenario temporal --scenario multi-hop --top-k 3 --gated-pass off "
        "--thresholds none"
    )


def test_the_reproduce_command_of_a_module_of_the_working_directory_starts_with_pythonpath(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`evalkit run --system mine:factory` does not search the working directory: the line that
    makes the run again says PYTHONPATH=., as the "cannot import module" error does."""
    (tmp_path / "mine.py").write_text(
        "from evalkit import ReferenceSystem\n\ndef factory():\n    return ReferenceSystem()\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["--system", "mine:factory", "--scenario", "temporal", "--out", "r.json", "--history", "none"]
    assert cli(capsys, "run", *argv)[0] == 0
    run = load_run(tmp_path / "r.json")
    assert run_verdict(run).command == "PYTHONPATH=. evalkit run --system mine:factory --scenario temporal"
    monkeypatch.chdir(tmp_path.parent)  # read where the module is not: nothing to add
    assert run_verdict(run).command == "evalkit run --system mine:factory --scenario temporal"


def test_the_builtin_suite_command_is_the_default_one(reference: EvalRun) -> None:
    assert run_verdict(reference).command == "evalkit run --top-k 5"


def test_the_page_title_is_the_first_title_an_output_offers() -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output("stream", text="x")]),
        nbformat.v4.new_code_cell(
            outputs=[
                nbformat.v4.new_output(
                    "display_data",
                    data={"text/html": "<p>v</p>"},
                    metadata={"text/html": {PAGE_TITLE_KEY: "FAIL — 2 regressions · system s"}},
                )
            ]
        ),
    ]
    assert page_title(nb) == "FAIL — 2 regressions · system s"
    nb.cells = nb.cells[:1]
    assert page_title(nb) is None


def test_an_unknown_section_names_the_known_ones(reference: EvalRun) -> None:
    with pytest.raises(KeyError, match="known: verdict, losses, contents"):
        report.section(reference, "nope")


def test_the_verdict_section_passes_the_page_title_on(reference: EvalRun) -> None:
    data, metadata = report.section(reference, "verdict")._repr_mimebundle_()
    assert metadata == {"text/html": {PAGE_TITLE_KEY: "PASS · system reference"}}
    assert data["text/html"].startswith('<h2 id="verdict">Verdict</h2>')
    assert report.section(reference, "summary")._repr_mimebundle_()[1] == {}


def test_the_failure_table_and_drilldowns_are_capped_to_the_worst_queries(
    reference: EvalRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "FAILURE_ROWS", 2)
    every = report.failures_frame(reference)
    assert len(every) > 2
    table = report.failure_table(reference)
    assert len(table.data) == 2
    assert table.caption.startswith(
        f"{len(every)} queries to look at (measurement pass) (2 shown, the worst first)"
    )
    shown = list(dict.fromkeys(every.head(2)["scenario"]))
    drill = report.section(reference, "drilldown")
    assert [part.key for part in drill.parts] == [report.scenario_anchor(name) for name in shown]
    hits = drill.parts[0].parts[2].data
    first = every.iloc[0]
    assert set(hits.index.get_level_values("query #")) == {first["query #"]}


PACK = DATASETS / "packs" / "deletion-ghosts"
OPT_IN = ("leaks", "perturbation")
"""The sections a run has only when it computed them (behaviour metrics, a perturbation curve)."""


@pytest.fixture(scope="module")
def leaky_pack() -> EvalRun:
    """The deletion pack on a reference store whose delete keeps the FTS5 row (deleted ids leak)."""
    from evalkit.suites.mutations import PACK_MUTATIONS

    leaky = ReferenceSystem(pipeline=PACK_MUTATIONS["deletion-keeps-text"].build())
    return run_eval(datasets=PACK, system=leaky)


def test_a_run_without_behaviour_metrics_or_a_curve_shows_no_trace_of_them(reference: EvalRun) -> None:
    for key in OPT_IN:
        shown = report.section(reference, key)
        assert shown.hidden and shown._repr_html_() == "" and repr(shown) == ""
    contents = report.contents(reference)._repr_html_()
    assert "#leaks" not in contents and "#perturbation" not in contents and "(not shown)</i>" in contents
    for key in ("scenarios", "categories"):
        html = report.section(reference, key)._repr_html_()
        assert "behaviour" not in html and "↓" not in html
    assert len(tables.scenario_table(reference).data.columns) == 20


def test_a_pack_shows_its_behaviour_metrics_beside_the_harness_metrics_with_a_legend(
    leaky_pack: EvalRun,
) -> None:
    scenarios = report.section(leaky_pack, "scenarios")
    legend, table = scenarios.parts
    assert list(legend.data["metric"]) == [
        "stale-fact rate",
        "contamination",
        "duplicate rate@k",
        "query sensitivity",
    ]
    assert (
        legend.data.set_index("metric").loc["stale-fact rate", "0 means"]
        == "no superseded or deleted id came back"
    )
    assert set(legend.data["better"]) == {"lower (0)", "higher (1)"}
    columns = list(table.data.columns)
    after_hit_rate = columns.index(("hit rate", "Δ")) + 1
    assert columns[after_hit_rate][0] == tables.BEHAVIOUR_GROUP
    assert columns[after_hit_rate][1] == "stale-fact rate ↓"
    stale = table.data[(tables.BEHAVIOUR_GROUP, "stale-fact rate ↓")]
    means = {s.name: s.metrics.behaviour.get("stale_fact_rate") for s in leaky_pack.result.scenarios}
    assert stale.to_dict() == pytest.approx({name: v for name, v in means.items()}, nan_ok=True)
    categories = tables.category_table(leaky_pack).data
    overall = leaky_pack.result.overall.behaviour["stale_fact_rate"]
    assert categories.loc["overall", (tables.BEHAVIOUR_GROUP, "stale-fact rate ↓")] == pytest.approx(overall)
    assert overall > 0
    html = scenarios._repr_html_()
    assert "stale-fact rate ↓" in html and "query sensitivity ↑" in html


def test_the_leak_section_names_the_stale_and_forbidden_ids_each_scenario_returned(
    leaky_pack: EvalRun,
) -> None:
    leaks = tables.leak_frame(leaky_pack)
    assert list(leaks.columns) == list(tables.LEAK_COLUMNS)
    by_name = leaks.set_index("scenario")
    for s in leaky_pack.result.scenarios:
        returned = {i for q in s.queries for i in q.leaked.get("stale", [])}
        assert set(filter(None, by_name.loc[s.name, "stale ids returned"].split(", "))) == returned
    assert (by_name["leaking queries"] != "").any()
    section = report.section(leaky_pack, "leaks")
    assert section.reason is None and "#leaks" in report.contents(leaky_pack)._repr_html_()
    caption = section.parts[0].caption
    leaking = int((leaks["leaking queries"] != "").sum())
    assert caption == (
        "Stale and forbidden ids returned (measurement pass): "
        f"{leaking} of {len(leaks)} scenarios returned some"
    )
    clean = run_eval(datasets=PACK, scenarios=["forget-api-key"], thresholds=None)
    assert tables.leak_frame(clean)["leaking queries"].tolist() == [""]
    page = _page(leaky_pack)
    assert not [c for c in (td.get_text(strip=True) for td in page.find_all("td")) if c.lower() == "nan"]


def test_an_older_pack_report_without_leaked_ids_says_they_were_not_recorded(
    leaky_pack: EvalRun, tmp_path: Path
) -> None:
    saved = json.loads(leaky_pack.save(tmp_path / "r.json").read_text(encoding="utf-8"))
    for name in ("scenarios",):
        for s in saved[name]:
            for q in s["queries"]:
                q.pop("leaked", None)
    (tmp_path / "old.json").write_text(json.dumps(saved), encoding="utf-8")
    old = load_run(tmp_path / "old.json")
    ids = tables.leak_frame(old)["stale ids returned"]
    assert "not recorded" in set(ids) and set(ids) <= {"not recorded", ""}


def test_the_perturbation_curve_is_a_section_of_a_run_saved_with_one(tmp_path: Path) -> None:
    from evalkit.scenarios.perturb import CurveSpec

    run = run_eval(
        datasets=DATASETS,
        thresholds=DATASETS / "thresholds.json",
        perturb_curve=CurveSpec("distractors", (0, 10)),
    )
    assert run_verdict(run).value == "PASS"  # the run is the unperturbed suite's; the curve is never compared
    again = load_run(run.save(tmp_path / "r.json"))
    curve = again.perturbation_curve
    assert curve is not None and list(curve.columns) == [0, 10] and curve.columns.name == "distractors"
    assert curve.loc[("reference", "recall"), 0] == run.result.overall.metrics["recall"]
    section = report.section(again, "perturbation")
    assert section.title == "How fast does this system degrade as memory grows?"
    chart, table = section.parts
    assert "Metrics as memory grows" in chart.alt_text
    assert list(table.data.columns) == ["distractors=0", "distractors=10"]
    assert "#perturbation" in report.contents(again)._repr_html_()
    assert run_verdict(again).command == "evalkit run --top-k 5 --perturb distractors=0,10"
