"""evalkit.harness.history and `evalkit run` / `evalkit history`: appends (atomic, from concurrent
processes), reading back, a damaged file reported and kept, the trend chart."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from evalkit import EvalRun, history_table, load_history
from evalkit.cli import main
from evalkit.harness.history import HistoryError, append_run
from evalkit.harness.report_file import load_report
from evalkit.views.charts import trend_chart
from tests.factories import a_pass, a_run, query, scenario
from tests.shared import DATASETS

# overall recall = mean(1, .5) = .75; explicit-fact .75; the gated pass (gate .4) drops one row
RUN = a_run(
    a_pass(scenario("facts", "explicit-fact", [query(0, recall=1.0), query(1, recall=0.5)])),
    gated=a_pass(
        scenario("facts", "explicit-fact", [query(0, dropped=(("x", False),), candidates=3)]), gate=0.4
    ),
)


def test_append_and_load_one_run(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "history.sqlite3"
    run_id = append_run(path, RUN, run_id="first")
    assert run_id == "first"
    history = load_history(path)
    overall = history[(history["pass"] == "ungated") & (history["scope"] == "overall")].set_index("metric")
    assert overall.loc["recall", "value"] == 0.75 and overall.loc["recall", "queries"] == 2
    assert set(history["scope"]) == {"overall", "category"} and set(history["pass"]) == {"ungated", "gated"}
    assert (overall.loc["recall", "min_relevance"], overall.loc["recall", "dropped_rows"]) == (0.4, 1)
    assert len(history) == 2 * 2 * 4  # passes × (overall, explicit-fact) × metrics
    table = history_table(history)
    assert list(table["recall"]) == [0.75] and list(table["git_commit"]) == ["unknown"]


def test_the_run_table_has_one_row_per_run_in_append_order(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    worse = a_run(a_pass(scenario("facts", "explicit-fact", [query(0, recall=0.0)])), top_k=10)
    for run_id, run in (("a", RUN), ("b", worse), ("c", RUN)):
        append_run(path, run, run_id=run_id)
    table = history_table(load_history(path))
    assert list(table["recall"]) == [0.75, 0.0, 0.75]
    assert list(table["top_k"]) == [RUN.top_k, 10, RUN.top_k]
    assert list(table["git_commit"]) == ["unknown"] * 3


def test_an_absent_history_is_empty(tmp_path: Path) -> None:
    assert load_history(tmp_path / "none.sqlite3").empty
    assert not (tmp_path / "none.sqlite3").exists()  # reading never creates the file


def _append_many(path: str, report: str, worker: int) -> None:
    result = load_report(report)
    for i in range(5):
        append_run(path, result, run_id=f"w{worker}-{i}")


def test_concurrent_appends_from_two_processes_are_all_kept(tmp_path: Path) -> None:
    report = EvalRun(RUN).save(tmp_path / "report.json")
    path = tmp_path / "history.sqlite3"
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        for done in [pool.submit(_append_many, str(path), str(report), w) for w in (1, 2)]:
            done.result()
    runs = load_history(path).drop_duplicates("run_id")
    assert sorted(runs["run_id"]) == sorted(f"w{w}-{i}" for w in (1, 2) for i in range(5))
    assert (load_history(path).groupby("run_id").size() == 16).all()  # no run is half written


def test_a_damaged_history_is_reported_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(HistoryError, match=r"is damaged or not an evalkit history.*left as it is"):
        append_run(path, RUN)
    with pytest.raises(HistoryError):
        load_history(path)
    assert path.read_bytes() == b"not a database" * 100


def test_run_appends_to_the_history_next_to_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--datasets", str(DATASETS), "--scenario", "explicit-fact", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "r" / "report.json")]) == 0
    assert main([*args, "--out", str(tmp_path / "r" / "report.json")]) == 0
    assert main([*args, "--out", str(tmp_path / "other.json"), "--history", "none"]) == 0
    assert f"history: appended to {tmp_path / 'r' / 'history.sqlite3'}" in capsys.readouterr().out
    assert not (tmp_path / "history.sqlite3").exists()
    assert main(["history", "--history", str(tmp_path / "r" / "history.sqlite3")]) == 0
    assert "2 runs in" in capsys.readouterr().out
    damaged = tmp_path / "damaged.sqlite3"
    damaged.write_text("garbage" * 200)
    assert main([*args, "--out", str(tmp_path / "x.json"), "--history", str(damaged)]) == 0  # the run is fine
    assert "warning: history" in capsys.readouterr().err and damaged.read_text() == "garbage" * 200


def test_trend_chart_plots_each_run_and_says_when_there_is_none(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    append_run(path, RUN, run_id="a")
    append_run(path, RUN.model_copy(update={"regressions": []}), run_id="b")
    fig = trend_chart(load_history(path))
    line = fig.axes[0].get_lines()[0]
    assert list(line.get_xdata()) == [1, 2] and list(line.get_ydata()) == [0.75, 0.75]
    assert "Trend over 2 runs" in fig.alt_text
    assert "no run history yet" in trend_chart(load_history(tmp_path / "none")).axes[0].texts[0].get_text()
