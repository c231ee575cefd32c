"""A hit or thought field is declared once (`evalkit.records.Hit`, `evalkit.records.Thought`)
and every shape derives from it (evalkit.shapes): each declared hit field, set to a value that is
not its default, survives the wire (HTTP/MCP JSON), a run (the runner's record, the JSON report)
and the hits DataFrame; each thought field reaches the system from a scenario file and over the
wire."""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import MISSING, fields, replace
from typing import Any, get_args, get_origin

import pytest

from evalkit import Hit, MemorySystem, ScenarioMemory, SearchOptions, SearchResponse, load_run, run_eval
from evalkit.harness.results import HitRecord
from evalkit.records import (
    HIT_FIELDS,
    REPORTED_HIT_FIELDS,
    SENT_THOUGHT_FIELDS,
    THOUGHT_FIELDS,
    HitField,
    Thought,
)
from evalkit.scenarios.model import ThoughtSpec
from evalkit.suites.runfiles import RunHit
from evalkit.systems.base import OpenContext
from evalkit.systems.checked import _FLOAT_SIGNALS
from evalkit.systems.http.wire import (
    HitOut,
    SearchOut,
    ThoughtIn,
    search_out,
    search_response,
    thoughts_in,
    thoughts_out,
)
from evalkit.systems.mcp import adapter as mcp_adapter
from evalkit.views.frames import HIT_COLUMNS
from tests.shared import FIXTURES

TINY = FIXTURES / "datasets_tiny"


def _sample(spec: HitField, seeded: str) -> Any:
    """A value of the declared type that is not the field's default."""
    annotation = spec.annotation
    if spec.name == "id":
        return seeded
    if spec.name == "rank":
        return 1
    if get_origin(annotation) is tuple:
        (item,) = get_args(annotation)[:1]
        return get_args(item) if get_origin(item) is typing.Literal else (f"{spec.name}-id",)
    if get_origin(annotation) is typing.Literal:
        return get_args(annotation)[-1]
    kinds = set(get_args(annotation)) or {annotation}
    if bool in kinds:
        return True
    if float in kinds:
        return 0.125 + 0.01 * [f.name for f in HIT_FIELDS].index(spec.name)
    if int in kinds:
        return 7
    assert str in kinds, f"add a sample for {spec.name}: {annotation}"
    return f"{spec.name} text"


def _full_hit(seeded: str) -> Hit:
    return Hit(**{spec.name: _sample(spec, seeded) for spec in HIT_FIELDS})


def test_every_sample_differs_from_its_default():
    # guards the round trips below: a field left at its default would round-trip vacuously
    hit = _full_hit("a")
    assert all(getattr(hit, s.name) != s.default for s in HIT_FIELDS)


def test_every_declared_hit_field_round_trips_through_the_wire():
    hit = _full_hit("a")
    response = SearchResponse(hits=(hit,))
    body = SearchOut.model_validate_json(search_out(response).model_dump_json())
    assert search_response(body).hits == (hit,)
    assert set(json.loads(body.model_dump_json())["hits"][0]) == {s.name for s in HIT_FIELDS}


class _OneFullHit(MemorySystem, ScenarioMemory):
    """A system answering every query with the first seeded thought, every hit field set."""

    name = "one-full-hit"
    capabilities = frozenset({"projects", "global_thoughts", "supersession", "contradiction", "recency"})

    def describe(self) -> dict[str, Any]:
        return {"system": self.name}

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[_OneFullHit]:
        self.seeded: list[Thought] = []
        yield self

    def add_thoughts(self, thoughts: Sequence[Thought]) -> None:
        self.seeded.extend(thoughts)

    def add_edges(self, edges: Sequence[Any]) -> None:
        pass

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        return SearchResponse(hits=(_full_hit(self.seeded[0].id),))


def test_every_reported_hit_field_reaches_the_report_and_the_hits_frame(tmp_path):
    run = run_eval(datasets=TINY, system=_OneFullHit(), thresholds=None, gated=False)
    loaded = load_run(run.save(tmp_path / "report.json"))
    raw = json.loads((tmp_path / "report.json").read_text())["scenarios"][0]["queries"][0]["hits"][0]
    row = loaded.hits.iloc[0]
    expected = _full_hit(row["id"])
    assert list(raw) == ["id", "rank", "relevant", *(s.name for s in REPORTED_HIT_FIELDS[2:])]
    for spec in REPORTED_HIT_FIELDS:
        value = getattr(expected, spec.name)
        assert raw[spec.name] == (list(value) if spec.sequence else value), spec.name
        shown = spec.joined.join(value) if spec.joined else list(value) if spec.sequence else value
        assert row[spec.name] == shown, spec.name
    assert loaded.hits.equals(run.hits)


def test_every_shape_has_exactly_the_declared_fields():
    names = [s.name for s in HIT_FIELDS]
    reported = [s.name for s in REPORTED_HIT_FIELDS]
    assert list(HitOut.model_fields) == names
    assert list(HitRecord.model_fields) == [*reported[:2], "relevant", *reported[2:]]
    assert list(RunHit.model_fields) == [n for n in reported if n != "rank"]
    assert list(HIT_COLUMNS[HIT_COLUMNS.index("dropped_by_gate") + 1 :]) == reported[2:]
    assert tuple(names) == mcp_adapter.HIT_FIELDS
    assert set(_FLOAT_SIGNALS) == {s.name for s in HIT_FIELDS if s.annotation == float | None}
    assert {s.role for s in HIT_FIELDS} == {"core", "signal"}


def test_a_thought_crosses_the_wire_with_every_field_but_its_embedding():
    from datetime import UTC, datetime

    thought = Thought(
        id="t", content="c", project="p", status="draft", created_at=datetime(2024, 5, 6, tzinfo=UTC),
        is_cluster=True, is_global=True, importance=0.5, embedding=(1.0,),
    )  # fmt: skip
    assert list(ThoughtIn.model_fields) == list(SENT_THOUGHT_FIELDS) == list(THOUGHT_FIELDS[:-1])
    body = thoughts_in([thought])
    assert thoughts_out(type(body).model_validate_json(body.model_dump_json())) == [
        replace(thought, embedding=None)
    ]
    assert mcp_adapter.THOUGHT_FIELDS == SENT_THOUGHT_FIELDS


def test_the_scenario_thought_model_has_every_sent_field_with_the_declared_default():
    # ThoughtSpec is written out (its `created_at` also takes relative offsets, `distractor` is its
    # own): this test is what keeps it to the declaration
    declared = {f.name: f.default for f in fields(Thought) if f.name in SENT_THOUGHT_FIELDS}
    spec = ThoughtSpec.model_fields
    assert list(spec) == [*SENT_THOUGHT_FIELDS, "distractor"]
    for name, default in declared.items():
        assert spec[name].is_required() is (default is MISSING), name
        assert default is MISSING or spec[name].default == default, name


def test_seeding_carries_every_field_of_a_scenario_thought():
    from datetime import UTC, datetime

    from evalkit.scenarios.model import Scenario
    from evalkit.scenarios.seeding import seed_thoughts

    values = dict(
        id="t", content="c", project="p", status="draft", is_cluster=True, is_global=True, importance=0.5
    )
    clock = datetime(2024, 5, 6, tzinfo=UTC)
    scenario = Scenario.model_validate(
        {"name": "s", "category": "explicit-fact", "description": "", "distractors": False,
         "thoughts": [{**values, "created_at": "-1d"}], "queries": [{"query": "q", "relevant": ["t"]}]}
    )  # fmt: skip
    (seeded,) = seed_thoughts(scenario, (), clock)
    assert seeded == Thought(**values, created_at=clock.replace(day=5))


@pytest.mark.parametrize("name", ["id", "importance"])
def test_declared_bounds_hold_on_the_wire_and_in_scenario_files(name):
    wire, scenario = ThoughtIn.model_fields[name], ThoughtSpec.model_fields[name]
    assert repr(wire.metadata) == repr(scenario.metadata)
