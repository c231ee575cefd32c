"""A memory system that replays rankings recorded elsewhere (a run file), so results produced by
a system evalkit cannot run — another language, a batch job — go through the one evaluation path
(`evaluate(suite, ReplaySystem(...), config)`) with the same report, baseline check and notebooks.

Seeding is accepted and ignored (the recorded system had its own memory); a search returns the
recorded hits of the query's stable id (`query_id`, see `evalkit.scenarios.stable_query_id`), cut
to `top_k`. A query the run does not cover returns nothing and so scores 0 (trec_eval's and
ir_measures' rule for queries without results), as does a search without a `query_id`. The
replay has no relevance gate: `candidates` and `filtered_out` are 0 and the response reports the
gate it was asked for (0 when None). Its capabilities (`evalkit.systems.capabilities`) are those
of the system that recorded the rankings (they show in them), except `confidence` when the run
file carries no `low_confidence` signal (a TREC run cannot): a scenario asserting confidence is
then not applicable rather than failed or passed vacuously. Reading and checking
run files is `evalkit.suites.runfiles`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from evalkit.records import Edge, Hit, SearchResponse, Thought
from evalkit.systems.base import MemorySystem, OpenContext, ScenarioMemory, SearchOptions
from evalkit.systems.capabilities import UNDECLARED_CAPABILITIES


class _ReplayMemory(ScenarioMemory):
    """One scenario's view of the recorded rankings."""

    def __init__(self, rankings: Mapping[str, Sequence[Hit]]) -> None:
        self._rankings = rankings

    def add_thoughts(self, thoughts: Sequence[Thought]) -> int:
        """Nothing to store: the recorded system had the memory. Returns how many were offered."""
        return len(thoughts)

    def add_edges(self, edges: Sequence[Edge]) -> None:
        """Nothing to store (see `add_thoughts`)."""

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        """The first `top_k` recorded hits of `query_id` (ranks 1..n); no hits when it has none."""
        hits = self._rankings.get(options.query_id, ()) if options.query_id is not None else ()
        return SearchResponse(hits=tuple(hits[: options.top_k]), min_relevance=options.min_relevance or 0.0)


class ReplaySystem(MemorySystem):
    """Replays `rankings` (stable query id → hits in rank order, ranks 1..n) as the system under
    test. `description` (JSON-serialisable: the run file, its format, digest, tag) is recorded
    in the report's provenance beside `system: "replay"`."""

    name = "replay"

    def __init__(self, rankings: Mapping[str, Sequence[Hit]], description: Mapping[str, Any]) -> None:
        self._rankings = dict(rankings)
        self._description = dict(description)
        signalled = any(hit.low_confidence is not None for hits in self._rankings.values() for hit in hits)
        self.capabilities = UNDECLARED_CAPABILITIES - (set() if signalled else {"confidence"})

    def describe(self) -> dict[str, Any]:
        return {"system": self.name, **self._description}

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[_ReplayMemory]:
        """A view of the recordings; nothing is written to `context.workdir`."""
        yield _ReplayMemory(self._rankings)
