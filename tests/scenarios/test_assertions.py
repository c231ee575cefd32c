"""The assertion registry: its order and declarations, and that a registered assertion is picked
up by `check_query`, the capability requirements and the reference checks without editing them."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pytest

from evalkit.harness.checks import check_query
from evalkit.records import Hit
from evalkit.scenarios import assertions
from evalkit.scenarios.assertions import ASSERTIONS, Assertion, Located
from evalkit.scenarios.model import QuerySpec, RankBefore, Scenario, ThoughtSpec
from evalkit.scenarios.references import scenario_problems
from evalkit.scenarios.requirements import required_capabilities
from evalkit.systems.capabilities import CAPABILITIES

_SPEC_ORDER = ("forbid", "no_relevant", "expect_no_strong_match", "rank_before")
_BY_FIELD = {a.field: a for a in ASSERTIONS}


def test_the_registry_lists_the_spec_assertions_in_spec_order():
    assert tuple(a.field for a in ASSERTIONS) == _SPEC_ORDER


def test_every_assertion_reads_a_query_field_and_needs_a_known_capability():
    for assertion in ASSERTIONS:
        assert assertion.field in QuerySpec.model_fields
        assert assertion.needs is None or assertion.needs in CAPABILITIES
    assert {f: _BY_FIELD[f].needs for f in _SPEC_ORDER} == {
        "forbid": None,
        "no_relevant": None,
        "expect_no_strong_match": "confidence",
        "rank_before": None,
    }


def test_an_assertion_applies_only_when_its_field_is_set():
    forbid, no_relevant, no_strong, rank_before = (_BY_FIELD[f] for f in _SPEC_ORDER)
    plain = QuerySpec(query="q", relevant=["a"])
    assert not any(a.applies(plain) for a in ASSERTIONS)
    assert forbid.applies(QuerySpec(query="q", relevant=["a"], forbid=["b"]))
    assert no_relevant.applies(QuerySpec(query="q", no_relevant=True))
    assert no_strong.applies(QuerySpec(query="q", relevant=["a"], expect_no_strong_match=True))
    assert rank_before.applies(
        QuerySpec(query="q", relevant=["a"], rank_before=RankBefore(before="a", after="b"))
    )
    # an assertion that does not apply reports nothing, whatever was retrieved
    assert no_relevant.errors(plain, [Hit(id="a", rank=1)], {"a"}) == []


def test_an_assertion_declares_the_ids_it_references_with_their_paths():
    forbid, no_relevant, rank_before = (_BY_FIELD[f] for f in ("forbid", "no_relevant", "rank_before"))
    query = QuerySpec(
        query="q", relevant=["a"], forbid=["b", "c"], rank_before=RankBefore(before="a", after="d")
    )
    assert forbid.references(query) == [("forbid[0]", "b"), ("forbid[1]", "c")]
    assert rank_before.references(query) == [("rank_before.before", "a"), ("rank_before.after", "d")]
    assert no_relevant.references(query) == []


def test_listed_twice_names_every_repeat_but_not_the_first():
    assert assertions.listed_twice("forbid", ["a", "b", "a", "a"]) == [
        ("forbid[2]", "'a' is listed twice"),
        ("forbid[3]", "'a' is listed twice"),
    ]


# ----------------------------------------------------------------------- a registered toy assertion


class _ToyQuery(QuerySpec):
    """A query with the toy assertion's field, as `QuerySpec` would declare it."""

    expect_first: str | None = None


def _toy_check(query: QuerySpec, hits: Sequence[Hit], own_ids: Collection[str]) -> list[str]:
    assert isinstance(query, _ToyQuery)
    first = hits[0].id if hits else None
    return [] if first == query.expect_first else [f"{query.expect_first!r} is not at rank 1 (got {first!r})"]


def _toy_references(query: QuerySpec) -> list[Located]:
    assert isinstance(query, _ToyQuery)
    return [] if query.expect_first is None else [("expect_first", query.expect_first)]


def _toy_problems(query: QuerySpec, scenario: Scenario) -> list[Located]:
    assert isinstance(query, _ToyQuery)
    if query.expect_first is not None and query.expect_first in query.forbid:
        return [("expect_first", "is also forbidden")]
    return []


_TOY = Assertion(
    "expect_first", "contradiction", _toy_check, references=_toy_references, problems=_toy_problems
)


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assertions, "ASSERTIONS", (*assertions.ASSERTIONS, _TOY))


def _scenario(*queries: QuerySpec) -> Scenario:
    thoughts = [ThoughtSpec(id="a", content="A."), ThoughtSpec(id="b", content="B.")]
    return Scenario(
        name="toy", category="explicit-fact", distractors=False, thoughts=thoughts, queries=list(queries)
    )


@pytest.mark.usefixtures("toy_registered")
def test_check_query_runs_a_registered_assertion_after_the_spec_ones():
    query = _ToyQuery(query="q", relevant=["a"], forbid=["b"], expect_first="a")
    hits = [Hit(id="b", rank=1), Hit(id="a", rank=2)]
    assert check_query(query, hits, {"a", "b"}) == [
        "forbid: 'b' was retrieved at rank 1",
        "expect_first: 'a' is not at rank 1 (got 'b')",
    ]
    assert check_query(query, [Hit(id="a", rank=1)], {"a", "b"}) == []
    assert check_query(_ToyQuery(query="q", relevant=["a"]), hits, {"a", "b"}) == []  # field unset


@pytest.mark.usefixtures("toy_registered")
def test_requirements_add_the_capability_a_registered_assertion_needs():
    assert required_capabilities(_scenario(_ToyQuery(query="q", relevant=["a"], expect_first="a"))) == {
        "contradiction"
    }
    assert required_capabilities(_scenario(_ToyQuery(query="q", relevant=["a"]))) == frozenset()


@pytest.mark.usefixtures("toy_registered")
def test_reference_checks_judge_what_a_registered_assertion_references():
    scenario = _scenario(
        _ToyQuery(query="q", relevant=["a"], expect_first="ghost"),
        _ToyQuery(query="q", relevant=["a"], forbid=["b"], expect_first="b"),
    )
    assert scenario_problems(scenario, None) == [
        "query 1.expect_first: unknown thought id 'ghost' (not in the scenario's thoughts)",
        "query 2.expect_first: is also forbidden",
    ]


def test_without_the_registration_the_toy_field_is_not_checked():
    query = _ToyQuery(query="q", relevant=["a"], expect_first="ghost")
    assert check_query(query, [Hit(id="b", rank=1)], set()) == []
    assert scenario_problems(_scenario(query), None) == []
    assert required_capabilities(_scenario(query)) == frozenset()
