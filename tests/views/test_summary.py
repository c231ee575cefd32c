"""evalkit.views.summary: the Markdown a CI job summary shows — verdict, regressions, the biggest
drops against the baseline, suite strength when mutation testing ran — on hand-built runs."""

from __future__ import annotations

from evalkit import EvalRun
from evalkit.harness.results import DetectionPower, MutationOutcome, Regression
from evalkit.views.summary import biggest_drops, summary_markdown
from tests.factories import a_pass, a_run, query, scenario

BASELINE = {
    "overall": {"recall": 1.0, "precision": 0.5, "mrr": 1.0, "hit_rate": 1.0},
    "explicit-fact": {"recall": 1.0, "precision": 0.5, "mrr": 1.0, "hit_rate": 1.0},
    "temporal": {"recall": 0.9, "precision": 0.5, "mrr": 1.0, "hit_rate": 1.0},
}


def _run(**fields: object) -> EvalRun:
    ungated = a_pass(
        scenario("facts", "explicit-fact", [query(0), query(1, recall=0.0, mrr=0.0, hit_rate=0.0)]),
        scenario("dates", "temporal", [query(0, recall=0.5)]),
    )
    return EvalRun(a_run(ungated, **fields))  # type: ignore[arg-type]


def test_drops_are_the_metrics_below_the_baseline_largest_first() -> None:
    drops = biggest_drops(_run(), BASELINE, limit=10)
    assert [(d.name, d.metric, round(d.delta, 4)) for d in drops] == [
        ("overall", "recall", -0.5),  # (1 + 0 + 0.5) / 3 queries; on a tie overall comes first
        ("explicit-fact", "recall", -0.5),
        ("explicit-fact", "mrr", -0.5),
        ("explicit-fact", "hit_rate", -0.5),
        ("temporal", "recall", -0.4),
        ("overall", "mrr", -0.3333),
        ("overall", "hit_rate", -0.3333),
    ]
    assert [d.name for d in biggest_drops(_run(), BASELINE, limit=2)] == ["overall", "explicit-fact"]
    assert biggest_drops(_run(), {"overall": {"precision": 0.5}, "gone": {"recall": 1.0}}) == []


def test_the_summary_states_the_verdict_regressions_and_drops_as_markdown() -> None:
    regression = Regression(
        kind="metric", message="temporal: recall 0.5000 is below its threshold 0.8800 | <b>"
    )
    text = summary_markdown(
        _run(regressions=[regression]), BASELINE, baseline_label="deterministic@5", drops=2
    )
    assert text.splitlines() == [
        "## evalkit: FAIL — 1 regression",
        "",
        "system reference · mode deterministic · top_k 5 · gated pass skipped",
        "",
        "### Regressions (1)",
        "",
        "- \\[metric\\] temporal: recall 0.5000 is below its threshold 0.8800 \\| \\<b\\>",
        "",
        "### Biggest drops against the baseline (deterministic@5)",
        "",
        "| scope | metric | baseline | now | Δ |",
        "|---|---|---:|---:|---:|",
        "| overall | recall | 1.0000 | 0.5000 | -0.5000 |",
        "| category explicit-fact | recall | 1.0000 | 0.5000 | -0.5000 |",
    ]
    assert "Suite strength" not in text  # no detection results in this run


def test_without_a_baseline_the_summary_says_why_and_with_detection_it_shows_suite_strength() -> None:
    caught = Regression(kind="metric", message="overall: recall 0.1 is below its threshold 0.9")
    detection = DetectionPower(
        outcomes=[
            MutationOutcome(
                mutation="vector-leg-off", description="d", control=False, regressions=[caught], hint=""
            ),
            MutationOutcome(mutation="rrf-k", description="d", control=False, regressions=[], hint=""),
            MutationOutcome(mutation="no-op", description="d", control=True, regressions=[], hint=""),
        ],
        checked_against=None,
    )
    text = summary_markdown(
        _run(detection=detection), None, no_baseline="no baseline for deterministic at top_k 5"
    )
    assert "No gating regressions." in text
    assert "Nothing to compare: no baseline for deterministic at top_k 5." in text
    strength = text.split("### Suite strength\n\n", 1)[1].splitlines()
    assert strength == [
        "1 of 2 injected search bugs caught; the no-op control stayed quiet.",
        "",
        "| mutation | caught | as expected | caught by |",
        "|---|---|---|---|",
        "| vector-leg-off | yes | yes | overall: recall 0.1 is below its threshold 0.9 |",
        "| rrf-k | no | **no** |  |",
        "| no-op (control) | no | yes |  |",
    ]
