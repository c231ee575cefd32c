"""Which capabilities a scenario needs (see `evalkit.systems.capabilities`).

Derived from what the scenario asks of the system, plus its explicit `requires:` list:
- a query with a `project` filter → `projects`; with `include_global` → `global_thoughts`;
- an edge of type `replaces` → `supersession`; of type `contradicts` → `contradiction`;
- a query with `recency_weight` > 0 → `recency`;
- a query that pins `min_relevance` > 0 → `relevance_gate`;
- a `delete` step → `deletion`; an `update` step → `update` (an `add` step needs nothing: every
  system adds thoughts);
- a query using an assertion → the capability that assertion declares (`needs` in
  `evalkit.scenarios.assertions`; today `expect_no_strong_match` → `confidence`).
Other edge types (cluster, related, …) need nothing: a system may ignore them and be scored on
what it retrieves.
"""

from __future__ import annotations

from evalkit.scenarios import assertions
from evalkit.scenarios.model import QuerySpec, Scenario

_EDGE_NEEDS: dict[str, str] = {"replaces": "supersession", "contradicts": "contradiction"}


def required_capabilities(scenario: Scenario) -> frozenset[str]:
    """Every capability `scenario` needs, derived and declared (the assertion registry is read at
    each call)."""
    needed: set[str] = set(scenario.requires)
    needed.update(_EDGE_NEEDS[e.type] for e in scenario.edges if e.type in _EDGE_NEEDS)
    for step in scenario.steps:
        if step.delete is not None:
            needed.add("deletion")
        if step.update is not None:
            needed.add("update")
        if step.add is not None:
            needed.update(_EDGE_NEEDS[e.type] for e in step.add.edges if e.type in _EDGE_NEEDS)
    for query in scenario.queries:
        if query.project is not None:
            needed.add("projects")
        if query.include_global:
            needed.add("global_thoughts")
        if query.recency_weight:
            needed.add("recency")
        if query.min_relevance:
            needed.add("relevance_gate")
        needed.update(_assertion_needs(query))
    return frozenset(needed)


def _assertion_needs(query: QuerySpec) -> set[str]:
    """The capabilities the registered assertions that `query` uses declare."""
    return {a.needs for a in assertions.ASSERTIONS if a.needs is not None and a.applies(query)}
