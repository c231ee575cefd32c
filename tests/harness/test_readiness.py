"""Time to searchable (evalkit.harness.readiness): a system that indexes later is waited for
after seeding, and the wait is reported apart from the searches."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from evalkit import ScenarioMemory, SearchOptions, SearchResponse, run_eval
from evalkit.errors import AdapterError
from evalkit.harness import readiness
from evalkit.systems import ReferenceSystem
from evalkit.systems.capabilities import ALL_CAPABILITIES
from tests.shared import DATASETS, comparable
from tests.systems_fixtures import Wrapping


class _Lagging(Wrapping):
    """The reference store's memory that finds nothing for its first `lag` searches after each
    seeding, as a service indexing in the background would (counted, not timed)."""

    def __init__(self, memory: ScenarioMemory, lag: int, searches: list[str]) -> None:
        super().__init__(memory)
        self.lag, self.searches, self.pending = lag, searches, 0

    def add_thoughts(self, thoughts) -> None:
        super().add_thoughts(thoughts)
        self.pending = self.lag

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        self.searches.append(query)
        if self.pending:
            self.pending -= 1
            return SearchResponse()
        return self.memory.search(query, options)


class _LaggingSystem(ReferenceSystem):
    name = "lagging"
    capabilities = ALL_CAPABILITIES - {"deletion", "update", "regate"}
    lag = 3
    indexes_later = True

    def __init__(self) -> None:
        super().__init__()
        self.searches: list[str] = []

    @contextmanager
    def open(self, context):
        with super().open(context) as memory:
            yield _Lagging(memory, self.lag, self.searches)


class _Undeclared(_LaggingSystem):
    indexes_later = False


class _Never(_LaggingSystem):
    lag = 10**9


def _run(system):
    return run_eval(datasets=DATASETS, system=system, thresholds=None, gated=False, progress=False)


def test_a_system_that_indexes_later_is_waited_for_and_scores_as_if_it_had_not():
    system = _LaggingSystem()
    lagging, reference = _run(system).result, _run(_LaggingSystem.__mro__[1]()).result
    assert comparable(lagging.model_dump(mode="json"), "system") == comparable(
        reference.model_dump(mode="json"), "system"
    )
    applicable = len(lagging.scenarios) - len(lagging.not_applicable)
    assert lagging.latency.searchable is not None and lagging.latency.searchable.calls == applicable
    queries = sum(len(s.queries) for s in lagging.scenarios)  # the measurement pass's searches
    assert len(system.searches) == queries + applicable * (system.lag + 1)  # the probes: 3 misses, 1 hit
    assert reference.latency.searchable is None


def test_without_the_declaration_the_lag_costs_the_first_queries():
    undeclared = _run(_Undeclared()).result
    reference = _run(ReferenceSystem()).result
    assert undeclared.overall.metrics["recall"] < reference.overall.metrics["recall"]
    assert undeclared.latency.searchable is None


def test_a_thought_never_found_fails_after_the_bound_naming_it(monkeypatch):
    monkeypatch.setattr(readiness, "SEARCHABLE_TIMEOUT", 0.05)
    with pytest.raises(AdapterError, match=r"declares indexes_later, but a search for the content of"):
        _run(_Never())
