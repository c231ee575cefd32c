"""What a system declares about itself (evalkit.systems.declaration) is recorded in the report's
provenance, and the sweep and the views read it: re-gating only for systems declaring `regate`
(saying why not otherwise), the low-confidence floor only where a system declares one, detection
power only for the system the mutation suite mutates (reports of version 2 without a
declaration are migrated: tests/harness/test_report_file.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from evalkit import EvalRun, ReferenceSystem, UsageError, load_run, run_eval
from evalkit.harness.sweep import regate_pass, unavailable
from evalkit.memory import DEFAULT_PIPELINE, VECTOR_FLOOR
from evalkit.memory.pipeline import Candidate, is_strong
from evalkit.records import GateCandidate
from evalkit.suites.mutations import MUTATIONS
from evalkit.systems.capabilities import ALL_CAPABILITIES
from evalkit.systems.declaration import REGATE_RULE, SystemDeclaration, declaration_of
from evalkit.views.charts import rank_chart
from evalkit.views.tables import detection_table
from tests.shared import DATASETS
from tests.systems_fixtures import LimitedSystem

REFERENCE = SystemDeclaration(
    capabilities=sorted(ALL_CAPABILITIES), confidence_floor=VECTOR_FLOOR, mutation_testing=True
)


def test_the_reference_system_declares_regate_its_floor_and_mutation_testing():
    assert declaration_of(ReferenceSystem()) == REFERENCE
    assert "regate" in ALL_CAPABILITIES


def test_a_system_built_on_the_store_declares_only_what_it_says():
    declared = declaration_of(LimitedSystem())
    assert not declared.regates and not declared.mutation_testing
    assert declared.confidence_floor is None  # no `confidence` capability: no floor to draw


def test_a_mutated_strength_or_gate_step_drops_regate_and_other_mutations_keep_it():
    changed = set()
    for name, mutation in MUTATIONS.items():
        pipeline = mutation.build()
        if (pipeline.strong, pipeline.gate) != (DEFAULT_PIPELINE.strong, DEFAULT_PIPELINE.gate):
            changed.add(name)
        assert declaration_of(ReferenceSystem(pipeline=pipeline)).regates is (name not in changed), name
    assert changed and changed != set(MUTATIONS)


@pytest.mark.parametrize(
    ("bm25", "similarity", "floor", "kept"),
    [(True, None, 0.9, True), (False, 0.9, 0.9, True), (False, 0.89, 0.9, False), (False, None, 0.1, False),
     (False, None, 0.0, True)],
)  # fmt: skip
def test_the_regate_rule_is_the_pipelines_gate(bm25, similarity, floor, kept):
    assert REGATE_RULE(GateCandidate("a", bm25, similarity), floor) is kept
    if floor > 0:
        row = Candidate(0, "a", "", "p", datetime.now(UTC), False, similarity, bm25_rank=1 if bm25 else None)
        assert is_strong(row, floor) is kept


def test_a_run_records_its_declaration(tmp_path):
    run = run_eval(datasets=DATASETS, scenarios=["explicit-fact"], thresholds=None)
    saved = json.loads(run.save(tmp_path / "report.json").read_text())
    assert saved["provenance"]["declaration"] == REFERENCE.model_dump()
    assert load_run(tmp_path / "report.json").result.provenance.declaration == REFERENCE


def test_a_system_without_regate_is_not_swept_and_the_sweep_says_why():
    run = run_eval(datasets=DATASETS, scenarios=["explicit-fact"], system=LimitedSystem(), thresholds=None)
    assert run.result.gated is not None
    assert any(q.gate_candidates for s in run.result.gated.scenarios for q in s.queries)
    reason = unavailable(run.result)
    assert reason is not None and "'limited' does not declare the regate capability" in reason
    with pytest.raises(
        UsageError, match="cannot sweep the gate: the run's system 'limited' does not declare"
    ):
        regate_pass(run.result, 0.4)


def test_views_draw_the_declared_floor_and_detection_only_for_the_declaring_system():
    limited = run_eval(
        datasets=DATASETS, scenarios=["explicit-fact"], system=LimitedSystem(), thresholds=None
    )
    similarity = rank_chart(limited, "explicit-fact").axes[0]
    assert [line.get_label() for line in similarity.lines if line.get_linestyle() == "--"] == []
    assert "not applicable" in detection_table(limited).caption
    reference = run_eval(datasets=DATASETS, scenarios=["explicit-fact"], thresholds=None)
    floors = [line.get_ydata()[0] for line in rank_chart(reference, "explicit-fact").axes[0].lines]
    assert VECTOR_FLOOR in floors
    assert "not measured with this run" in detection_table(EvalRun(reference.result)).caption
