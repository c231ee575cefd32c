"""Repeated runs (`run --repeat N`, `evalkit.harness.repeats`): a system whose ties are broken
randomly is found, the verdict names its unstable queries, a deterministic one agrees, and a
baseline is recorded from repeats only when they agree (or, accepted, with a note)."""

from __future__ import annotations

import json

import pytest

from evalkit import run_eval
from evalkit.errors import UsageError
from evalkit.harness.baselines import record_baseline
from evalkit.harness.repeats import compare_runs
from tests.factories import a_pass, a_run, query, scenario
from tests.shared import DATASETS, cli, cli_record
from tests.systems_fixtures import ShuffledTiesSystem


def test_repeat_two_flags_a_system_that_breaks_ties_randomly():
    run = run_eval(datasets=DATASETS, system=ShuffledTiesSystem(), thresholds=None, repeat=2)
    stability = run.result.stability
    assert stability is not None and stability.runs == 2 and not stability.agree
    assert {u.change for u in stability.unstable} <= {"ids", "order"}
    first = stability.unstable[0]
    assert len(first.rankings) == 2 and first.runs == [[1], [2]]
    assert first.rankings[0] != first.rankings[1]
    reported = {(s.name, q.index): q.retrieved for s in run.result.scenarios for q in s.queries}
    assert reported[(first.scenario, first.query)] == first.rankings[0]  # run 1 is reported
    reason = run.result.outcome.reasons[-1]
    assert reason.startswith("unstable rankings: ") and first.label in reason


def test_a_system_with_random_ties_has_tie_decided_queries():
    run = run_eval(datasets=DATASETS, system=ShuffledTiesSystem(), thresholds=None)
    queries = run.queries[run.queries["pass"] == "ungated"]
    assert queries["tied"].any()
    assert queries["tied_at_cut"].isna().all()  # the system says nothing about its cut


def test_repeated_reference_runs_agree_and_say_so():
    run = run_eval(datasets=DATASETS, thresholds=None, repeat=2)
    stability = run.result.stability
    assert (
        stability is not None and stability.agree and stability.verdicts == ["NOT COMPARED", "NOT COMPARED"]
    )
    assert run.result.outcome.reasons[-1] == "2 runs agree: every query got the same ids in the same order"


def test_compare_runs_tells_order_from_ids():
    def run_with(*rankings):
        queries = [query(i).model_copy(update={"retrieved": list(r)}) for i, r in enumerate(rankings)]
        return a_run(a_pass(scenario("s", "cat", queries)))

    first = run_with(["a", "b"], ["c", "d"], ["e"])
    second = run_with(["b", "a"], ["c", "x"], ["e"])
    unstable = compare_runs([first, second, first]).unstable
    assert [(u.query, u.change, u.runs) for u in unstable] == [
        (0, "order", [[1, 3], [2]]),
        (1, "ids", [[1, 3], [2]]),
    ]
    with pytest.raises(ValueError, match="at least two"):
        compare_runs([first])


def test_baseline_from_disagreeing_repeats_is_refused_unless_accepted(tmp_path):
    run = run_eval(datasets=DATASETS, system=ShuffledTiesSystem(), thresholds=None, repeat=2)
    path = tmp_path / "thresholds.json"
    with pytest.raises(UsageError, match=r"no baseline recorded: the 2 runs disagree .*--accept-unstable"):
        record_baseline(path, run.result)
    assert not path.exists()
    record_baseline(path, run.result, accept_unstable=True)
    entry = json.loads(path.read_text())["deterministic@5"]
    assert entry["note"].startswith("recorded from the first of 2 runs, which disagree: unstable rankings: ")


def test_cli_repeat_lists_unstable_queries_and_refuses_the_baseline(capsys, tmp_path):
    out, thresholds = tmp_path / "report.json", tmp_path / "thresholds.json"
    common = ["run", "--datasets", str(DATASETS), "--out", str(out), "--repeat", "2"]
    common += ["--system", "tests.systems_fixtures:ShuffledTiesSystem", "--thresholds", str(thresholds)]
    code, stdout, stderr = cli_record(capsys, *common)
    assert code == 2 and "no baseline recorded: the 2 runs disagree" in stderr
    assert "Repeated runs (2): unstable rankings: " in stdout and not thresholds.exists()
    assert json.loads(out.read_text())["stability"]["runs"] == 2  # the report is written all the same
    code, stdout, _ = cli(capsys, "baseline", "record", str(out), "--accept-unstable")
    assert code == 0 and "note: recorded from the first of 2 runs, which disagree" in stdout
    assert "note" in json.loads(thresholds.read_text())["deterministic@5"]


def test_cli_repeat_and_accept_unstable_are_checked(capsys):
    code, _, stderr = cli(capsys, "run", "--repeat", "0")
    assert code == 2 and "--repeat: expected an integer from 1 to 100, got '0'" in stderr
    code, _, stderr = cli(capsys, "run", "--repeat", "1000000")
    assert code == 2 and "--repeat: expected an integer from 1 to 100" in stderr
    code, _, stderr = cli(capsys, "run", "--accept-unstable")
    assert code == 2 and "unrecognized arguments: --accept-unstable" in stderr  # `baseline record`'s
