"""The console summary (SPEC §3.6, §5): columns sized from their content, categories in suite order."""

from __future__ import annotations

from evalkit.views.console import render_curve, render_gate_comparison, render_pass_table
from evalkit.views.frames import EvalRun
from tests.factories import a_pass, a_run, query, scenario


def _suite():
    return a_pass(
        scenario("short", "cat", [query(0, recall=1.0, precision=0.5, mrr=1.0, hit_rate=1.0)]),
        scenario(
            "scenario-with-long-name",
            "a-long-category-name",
            [query(0, recall=0.5, precision=0.25, mrr=0.5, hit_rate=1.0, dropped=(("x", True),))],
            measure_only=True,
        ),
    )


def test_pass_table_columns_are_as_wide_as_their_header_or_widest_cell() -> None:
    # scenario 23 wide (the long name), category 20, nq 2, recall 6 (header), prec/mrr/hit 5
    # (cells), status 19 ("pass (measure-only)"); two spaces between columns: the rule is
    # 23 + 20 + 2 + 6 + 3 * 5 + 19 + 7 * 2 = 99 long.
    assert render_pass_table(_suite()) == [
        "scenario                 category              nq  recall   prec    mrr    hit  status",
        "-" * 99,
        "short                    cat                    1   1.000  0.500  1.000  1.000  pass",
        "scenario-with-long-name  a-long-category-name   1   0.500  0.250  0.500  1.000  pass (measure-only)",
        "-" * 99,
        "overall                                         1   1.000  0.500  1.000  1.000",
        "  cat recall 1.000  precision 0.500  mrr 1.000  hit 1.000  (1 query)",
    ]


def test_gate_comparison_columns_are_as_wide_as_their_header_or_widest_cell() -> None:
    ungated, gated = _suite(), _suite()
    lines = render_gate_comparison(EvalRun(a_run(ungated, gated)))
    assert lines[1:] == [
        "scenario                        recall      precision            mrr  dropped  rel.dropped  lost@k",
        "short                    1.000 → 1.000  0.500 → 0.500  1.000 → 1.000        0            0       0",
        "scenario-with-long-name  0.500 → 0.500  0.250 → 0.250  0.500 → 0.500        1            1       0",
        "overall                  1.000 → 1.000  0.500 → 0.500  1.000 → 1.000",
    ]


def test_category_lines_follow_the_suite_and_share_one_width() -> None:
    result = a_pass(
        scenario("s1", "zeta", [query(0)]),
        scenario("s2", "alpha-and-more", [query(0)]),
        scenario("s3", "zeta", [query(0)]),
    )
    categories = [line for line in render_pass_table(result) if line.startswith("  ")]
    assert [line.split()[0] for line in categories] == ["zeta", "alpha-and-more"]
    assert {line.index("recall") for line in categories} == {len("  alpha-and-more ")}


def test_the_header_counts_in_the_right_number_and_not_applicable_scenarios_are_listed_once() -> None:
    from evalkit.views.console import render_run

    note = "not applicable: far (the system lacks projects); excluded from means and the baseline check"
    far = scenario("far", "cat", []).model_copy(update={"status": "not_applicable"})
    ungated = a_pass(scenario("short", "cat", [query(0)]), far)
    text = render_run(
        EvalRun(a_run(ungated, notes=[note, "another note"], not_applicable={"far": ["projects"]}))
    )
    assert text.splitlines()[0].endswith("· 2 scenarios · 1 query")
    assert "Not applicable (1 scenario, excluded from means and the baseline check):" in text
    assert "  - far (cat): needs projects" in text and text.count("far (") == 1
    assert "note: not applicable" not in text and "note: another note" in text
    alone = render_run(EvalRun(a_run(a_pass(scenario("short", "cat", [query(0)])))))
    assert alone.splitlines()[0].endswith("· 1 scenario · 1 query")


def test_a_curve_of_several_systems_names_each_row_and_aligns_the_values() -> None:
    from evalkit.harness.results import PerturbationCurve

    curve = PerturbationCurve.model_validate(
        {
            "kind": "stale-repeats",
            "seed": 3,
            "values": [0, 1, 10],
            "series": {
                "reference": {"recall": [1.0, 0.75, 0.5], "stale_fact_rate": [0.0, 0.1, 0.25]},
                "other-store": {"recall": [0.5, 0.5, 0.25]},
            },
        }
    )
    lines = render_curve(curve).splitlines()
    assert lines[1] == (
        "Perturbation curve (stale-repeats added per scenario, seed 3; reference, other-store; "
        "overall means, ungated pass):"
    )
    assert lines[2].split() == ["system", "metric", "0", "1", "10"]
    assert lines[4].split() == ["reference", "recall", "1.000", "0.750", "0.500"]
    assert lines[5].split() == ["reference", "stale-fact", "rate", "0.000", "0.100", "0.250"]
    assert lines[6].split() == ["other-store", "recall", "0.500", "0.500", "0.250"]
    assert len({len(line) for line in lines[2:3] + lines[4:7]}) == 1  # one width: the values align
    assert lines[-1].endswith("never compared with a baseline")


def test_the_gate_and_power_lines_read_without_pandas_what_the_frames_say() -> None:
    """`evalkit run` prints them from the run's rows; here the frames are the oracle."""
    from evalkit import run_eval
    from evalkit.views.console import render_power
    from tests.shared import DATASETS

    run = run_eval(datasets=DATASETS, thresholds=None)
    expected = []
    for row in run.gate_comparison().itertuples(index=False):
        if row.status != "not_applicable":
            arrows = [f"{getattr(row, m):.3f} → {getattr(row, f'{m}_gated'):.3f}".split() for m in COMPARED]
            counts = [str(row.dropped_rows), str(row.relevant_dropped), str(row.relevant_lost)]
            expected.append([row.scenario, *(t for a in arrows for t in a), *counts])
    assert [line.split() for line in render_gate_comparison(run)[2:-1]] == expected
    assert any(row[-1] != "0" for row in expected)  # the suite loses a relevant id to the gate
    power = run.power()
    power = power[power["pass"] == "ungated"]
    overall, categories = power.iloc[0], power.iloc[1:]
    line = render_power(run)[0]
    assert f"detect is {overall.detectable_drop:.3f} overall ({int(overall.queries)} queries" in line
    judged = categories[~categories["too_few"]]
    assert line.endswith(
        ", ".join(f"{r.name} {r.detectable_drop:.3f} ({r.queries})" for r in judged.itertuples())
    )


COMPARED = ("recall", "precision", "mrr")
