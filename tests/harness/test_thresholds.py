"""Baselines, thresholds and regressions (SPEC §3.5)."""

from __future__ import annotations

import json

import pytest

from evalkit.errors import ThresholdsError
from evalkit.harness.baselines import baseline_entry
from evalkit.harness.regressions import assertion_regressions, metric_regressions
from evalkit.harness.thresholds_file import (
    MetricLevels,
    find_baseline,
    load_thresholds,
    round_half_away,
    update_thresholds,
)
from evalkit.metrics import HARNESS_METRICS
from tests.factories import a_pass, query, scenario


def _run(recall_a: float = 1.0, recall_b: float = 0.5):
    return a_pass(
        scenario("a", "cat-a", [query(0, recall=recall_a)]),
        scenario("b", "cat-b", [query(0, recall=recall_b)]),
    )


def test_baseline_is_rounded_and_thresholds_are_baseline_minus_margin_floored_at_zero():
    result = a_pass(scenario("a", "cat", [query(0, recall=2 / 3, precision=0.01, mrr=0.123456)]))
    entry = baseline_entry(result, top_k=5)
    assert entry.baseline.overall.recall == 0.6667
    assert entry.thresholds.overall.recall == 0.6467
    assert entry.thresholds.overall.precision == 0.0  # 0.01 - 0.02 floored
    assert entry.baseline.overall.mrr == 0.1235
    assert entry.baseline.categories["cat"].queries == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.03125, 0.0313),  # an exact binary tie: round() gives 0.0312
        (0.00005, 0.0001),
        (0.00145, 0.0015),  # 0.00145 * 10**4 is 14.499999999999998 in binary; the decimal is a tie
        (0.12344999, 0.1234),
        (2 / 3, 0.6667),
        (1.0, 1.0),
        (0.0, 0.0),
    ],
)
def test_round_half_away_rounds_decimal_ties_away_from_zero(value: float, expected: float) -> None:
    assert round_half_away(value) == expected


def test_baseline_and_threshold_round_a_tie_away_from_zero():
    result = a_pass(scenario("a", "cat", [query(0, recall=0.03125, precision=0.28125)]))
    entry = baseline_entry(result, top_k=5)
    assert (entry.baseline.overall.recall, entry.baseline.overall.precision) == (0.0313, 0.2813)
    assert (entry.thresholds.overall.recall, entry.thresholds.overall.precision) == (0.0113, 0.2613)


def test_metric_regression_when_actual_below_threshold():
    entry = baseline_entry(_run(), top_k=5)
    regressions = metric_regressions(_run(recall_b=0.4), entry)
    assert [(r.kind, r.category, r.metric) for r in regressions] == [
        ("metric", None, "recall"),  # overall 0.75 -> 0.70 < 0.73
        ("metric", "cat-b", "recall"),  # 0.5 -> 0.4 < 0.48
    ]
    assert regressions[1].actual == pytest.approx(0.4)
    assert regressions[1].threshold == 0.48


def test_no_metric_regression_within_margin():
    entry = baseline_entry(_run(), top_k=5)
    assert metric_regressions(_run(recall_b=0.485), entry) == []


def test_present_regression_when_a_baseline_category_did_not_run():
    entry = baseline_entry(_run(), top_k=5)
    only_a = a_pass(scenario("a", "cat-a", [query(0, recall=1.0)]), scenario("c", "cat-c", [query(0)]))
    kinds = [(r.kind, r.category) for r in metric_regressions(only_a, entry)]
    assert ("present", "cat-b") in kinds


def test_assertion_regressions_come_from_failing_scenarios_including_measure_only_but_not_xfail():
    result = a_pass(
        scenario("a", "cat", [query(0, errors=("forbid: 'x' was retrieved at rank 1",))]),
        scenario("probe", "p", [query(0, errors=("no_relevant: own",))], measure_only=True),
        scenario("c", "contradiction", [query(0, errors=("forbid: y",))], outcome="xfail"),
    )
    regressions = assertion_regressions(result)
    assert [(r.kind, r.scenario) for r in regressions] == [("assertion", "a"), ("assertion", "probe")]
    assert "forbid: 'x' was retrieved at rank 1" in regressions[0].message


def test_missing_file_is_none(tmp_path):
    assert load_thresholds(tmp_path / "absent.json") is None


@pytest.mark.parametrize(
    ("content", "phrase"),
    [
        ("{not json", "is not valid JSON (line 1"),
        ('{"deterministic": {"top_k": 5}}', "does not match the schema"),
        ('{"deterministic": 3}', "does not match the schema"),
    ],
)
def test_invalid_file_is_an_error_naming_the_file(tmp_path, content, phrase):
    path = tmp_path / "thresholds.json"
    path.write_text(content)
    with pytest.raises(ThresholdsError) as info:
        load_thresholds(path)
    assert str(path) in str(info.value)
    assert phrase in str(info.value)
    assert "`evalkit baseline record`" in str(info.value)


def test_update_touches_only_its_mode_and_is_atomic(tmp_path):
    path = tmp_path / "thresholds.json"
    update_thresholds(path, "real", baseline_entry(_run(recall_a=0.9), top_k=5))
    before = json.loads(path.read_text())["real@5"]
    update_thresholds(path, "deterministic", baseline_entry(_run(), top_k=5))
    after = json.loads(path.read_text())
    assert after["real@5"] == before
    assert set(after) == {"deterministic@5", "real@5"}
    assert [p.name for p in tmp_path.iterdir()] == ["thresholds.json"]  # no temp file left behind


def test_update_refuses_to_overwrite_an_invalid_file(tmp_path):
    path = tmp_path / "thresholds.json"
    path.write_text("garbage")
    with pytest.raises(ThresholdsError):
        update_thresholds(path, "deterministic", baseline_entry(_run(), top_k=5))
    assert path.read_text() == "garbage"


def test_threshold_levels_spell_out_exactly_the_harness_metrics():
    assert tuple(MetricLevels.model_fields) == HARNESS_METRICS


def test_update_at_another_top_k_adds_an_entry_and_keeps_the_others_in_mode_then_top_k_order(tmp_path):
    path = tmp_path / "thresholds.json"
    update_thresholds(path, "deterministic", baseline_entry(_run(), top_k=5))
    five = json.loads(path.read_text())["deterministic@5"]
    update_thresholds(path, "deterministic", baseline_entry(_run(recall_a=0.5), top_k=10))
    update_thresholds(path, "real", baseline_entry(_run(), top_k=3))
    after = json.loads(path.read_text())
    assert list(after) == ["deterministic@5", "deterministic@10", "real@3"]
    assert after["deterministic@5"] == five
    entries = load_thresholds(path)
    assert entries is not None
    assert find_baseline(entries, "deterministic", 10) is not None
    assert find_baseline(entries, "deterministic", 7) is None


def test_the_older_mode_keyed_form_is_read_and_written_back_keyed(tmp_path):
    path = tmp_path / "thresholds.json"
    old = baseline_entry(_run(), top_k=5).model_dump(mode="json")
    path.write_text(json.dumps({"deterministic": old}))
    entries = load_thresholds(path)
    assert entries is not None and list(entries) == ["deterministic@5"]
    update_thresholds(path, "deterministic", baseline_entry(_run(), top_k=10))
    assert list(json.loads(path.read_text())) == ["deterministic@5", "deterministic@10"]
    assert json.loads(path.read_text())["deterministic@5"] == old


@pytest.mark.parametrize(
    ("keys", "phrase"),
    [
        (["fancy@5"], "key 'fancy@5': unknown mode 'fancy'"),
        (
            ["deterministic@10"],
            "key 'deterministic@10': the key says top_k 10 but its entry was recorded at top_k 5",
        ),
        (["deterministic", "deterministic@5"], "a second baseline for deterministic at top_k 5"),
    ],
)
def test_bad_keys_are_errors_naming_the_file_and_the_key(tmp_path, keys, phrase):
    path = tmp_path / "thresholds.json"
    entry = baseline_entry(_run(), top_k=5).model_dump(mode="json")
    path.write_text(json.dumps(dict.fromkeys(keys, entry)))
    with pytest.raises(ThresholdsError) as info:
        load_thresholds(path)
    assert str(path) in str(info.value) and phrase in str(info.value)


def test_a_required_harness_metric_missing_from_an_entry_is_still_a_schema_error(tmp_path):
    path = tmp_path / "thresholds.json"
    entry = baseline_entry(_run(), top_k=5).model_dump(mode="json")
    del entry["thresholds"]["overall"]["mrr"]
    path.write_text(json.dumps({"deterministic@5": entry}))
    with pytest.raises(ThresholdsError) as info:
        load_thresholds(path)
    assert "['deterministic@5'].thresholds.overall.mrr: required key 'mrr' is missing" in str(info.value)
