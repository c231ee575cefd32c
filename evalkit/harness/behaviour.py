"""The evidence the behaviour metrics score (`evalkit.metrics.BEHAVIOUR`): what the memory holds
at each query of a scenario as the scenario says it should (its seeding and its steps, not what
the system answers), and the query-sensitivity scores of a scenario's assembled queries."""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.harness.results import QueryResult
from evalkit.metrics.query_sensitivity import query_sensitivity
from evalkit.metrics.registry import BEHAVIOUR_METRICS, QueryEvidence
from evalkit.records import Edge, Hit, Thought
from evalkit.scenarios.model import QuerySpec, StepSpec


class MemoryState:
    """The thoughts (id → content) and `replaces` edges a scenario's memory should hold, and the
    ids its steps deleted, updated step by step (`apply`)."""

    def __init__(self, thoughts: Sequence[Thought], edges: Sequence[Edge]) -> None:
        self.contents = {t.id: t.content for t in thoughts}
        self.replaces = {(e.source, e.target) for e in edges if e.type == "replaces"}
        self.deleted: set[str] = set()

    def apply(self, step: StepSpec) -> None:
        """Replay one step: a delete forgets the ids and the edges touching them, an update
        changes a content, an add adds thoughts (a re-added id is no longer deleted) and edges."""
        if step.delete is not None:
            gone = set(step.delete)
            for ref in gone:
                self.contents.pop(ref, None)
            self.deleted |= gone
            self.replaces = {(s, t) for s, t in self.replaces if s not in gone and t not in gone}
        elif step.update is not None and step.update.content is not None:
            self.contents[step.update.id] = step.update.content
        elif step.add is not None:
            for thought in step.add.thoughts:
                self.contents[thought.id] = thought.content
                self.deleted.discard(thought.id)
            self.replaces |= {(e.source, e.target) for e in step.add.edges if e.type == "replaces"}

    @property
    def stale(self) -> frozenset[str]:
        """Ids a search should not return as facts: superseded ones (a `replaces` edge from a
        thought in memory) and deleted ones."""
        return frozenset({t for s, t in self.replaces if s in self.contents} | self.deleted)


def query_evidence(state: MemoryState, query: QuerySpec, hits: Sequence[Hit], top_k: int) -> QueryEvidence:
    """The evidence of one query asked of the memory `state` describes, answered with `hits`."""
    return QueryEvidence(
        retrieved=tuple(dict.fromkeys(h.id for h in hits)),
        low_confidence=tuple(h.low_confidence for h in hits),
        contents=dict(state.contents),
        forbidden=frozenset(query.forbid),
        stale=state.stale,
        no_match=query.no_relevant or query.expect_no_strong_match,
        top_k=top_k,
    )


def leaked_ids(evidence: QueryEvidence) -> dict[str, list[str]]:
    """The returned ids, in rank order, that the stale-fact rate (`"stale"`) and contamination
    (`"forbidden"`) count against a query (`QueryResult.leaked`); a kind with none is left out."""
    found = {
        "stale": [i for i in evidence.retrieved if i in evidence.stale],
        "forbidden": [i for i in evidence.retrieved if i in evidence.forbidden],
    }
    return {kind: ids for kind, ids in found.items() if ids}


def with_query_sensitivity(queries: Sequence[QueryResult]) -> list[QueryResult]:
    """`queries` (one scenario's, in order) with `query_sensitivity` added to each one's
    behaviour where it applies (the scenario has two or more query texts), in registry order."""
    scores = query_sensitivity([(q.query, q.retrieved) for q in queries])
    out = []
    for query, score in zip(queries, scores, strict=True):
        if score is None:
            out.append(query)
            continue
        merged = {**query.behaviour, "query_sensitivity": score}
        ordered = {name: merged[name] for name in BEHAVIOUR_METRICS if name in merged}
        out.append(query.model_copy(update={"behaviour": ordered}))
    return out
