"""`evalkit compare-systems`: several systems over one suite in one invocation, one table."""

from __future__ import annotations

import json

import pytest

import evalkit
from evalkit.views.systems import SYSTEMS_COLUMNS, systems_table
from tests.shared import cli


def test_two_systems_side_by_side_match_their_single_runs(capsys, tmp_path):
    out = tmp_path / "systems"
    page = tmp_path / "compared.md"
    code, stdout, err = cli(
        capsys, "compare-systems", "reference", "langgraph", "--out", str(out), "--markdown", str(page)
    )
    assert code == 0, err
    runs = [evalkit.load_run(out / f"{name}.json") for name in ("reference", "langgraph")]
    table = systems_table(runs)
    assert list(table.columns) == list(SYSTEMS_COLUMNS)
    for row, spec in zip(table.to_dict("records"), ("reference", "langgraph"), strict=True):
        single = evalkit.run_eval(system=spec, thresholds=None).result
        assert row["system"] == single.system
        assert {m: row[m] for m in ("recall", "precision", "mrr", "hit_rate")} == single.overall.metrics
        assert row["queries"] == single.overall.queries
        assert row["not_applicable"] == len(single.not_applicable)
    assert table["not_applicable"].tolist() == [0, 8]
    assert table["built_on"].tolist()[1].startswith("langgraph ")
    assert table["stale_fact_rate"].isna().all()  # the built-in suite asks for no behaviour metrics
    assert "| langgraph | langgraph " in stdout and "| — |" in stdout
    assert (out / "systems.md").read_text() in page.read_text()
    html = (out / "systems.html").read_text()
    assert "<td>langgraph</td>" in html and "Suite built-in, deterministic mode, top_k 5" in html
    assert json.loads((out / "langgraph.json").read_text())["system"] == "langgraph"


def test_a_pack_with_behaviour_metrics_gives_the_stale_fact_rate(capsys, tmp_path):
    from evalkit.packaged import BUILTIN_DATASETS

    pack = BUILTIN_DATASETS / "packs" / "deletion-ghosts"
    code, _, err = cli(
        capsys, "compare-systems", "langgraph", "--datasets", str(pack), "--out", str(tmp_path)
    )
    assert code == 0, err
    (row,) = systems_table([evalkit.load_run(tmp_path / "langgraph.json")]).to_dict("records")
    assert row["stale_fact_rate"] == pytest.approx(0.0)  # LangGraph's delete leaves no ghost


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "name the systems to run"),
        (["no-such-system"], "unknown system 'no-such-system'"),
    ],
)
def test_no_system_or_an_unknown_one_is_exit_2(capsys, tmp_path, argv, message):
    code, _, err = cli(capsys, "compare-systems", *argv, "--out", str(tmp_path))
    assert code == 2 and message in err


def test_several_suites_give_a_table_each_on_one_page(capsys, tmp_path):
    from evalkit.packaged import BUILTIN_DATASETS

    pack = BUILTIN_DATASETS / "packs" / "deletion-ghosts"
    code, stdout, err = cli(
        capsys, "compare-systems", "reference", "--datasets", "built-in", "--datasets", str(pack),
        "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    assert stdout.count("| reference | evalkit ") == 2
    assert "Suite built-in, deterministic mode" in stdout and f"Suite {pack}, deterministic mode" in stdout
    for name, datasets in (("built-in-reference", BUILTIN_DATASETS), ("deletion-ghosts-reference", pack)):
        saved = evalkit.load_run(tmp_path / f"{name}.json").result
        single = evalkit.run_eval(datasets=datasets, system="reference", thresholds=None).result
        assert saved.overall.metrics == single.overall.metrics
    assert (tmp_path / "systems.html").read_text().count("<table>") == 2
