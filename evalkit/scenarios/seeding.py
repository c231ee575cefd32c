"""What the runner seeds for one scenario: its thoughts (own, then the shared distractors) with
dates resolved against the run's clock, then its edges."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from evalkit.records import Edge, Thought
from evalkit.scenarios.dates import resolve_created_at
from evalkit.scenarios.model import Scenario, ThoughtSpec


def own_ids(scenario: Scenario) -> frozenset[str]:
    """The ids of the scenario's own thoughts (the shared distractors excluded)."""
    return frozenset(t.id for t in scenario.thoughts)


def seed_thoughts(scenario: Scenario, distractors: Sequence[ThoughtSpec], clock: datetime) -> list[Thought]:
    """The thoughts to seed for `scenario`, in order: its own thoughts in file order, then
    `distractors` when `scenario.distractors` is true. `created_at` is resolved against `clock`
    (see `resolve_created_at`), so every thought carries a UTC datetime."""
    specs = list(scenario.thoughts) + (list(distractors) if scenario.distractors else [])
    return [
        Thought(
            id=t.id,
            content=t.content,
            project=t.project,
            status=t.status,
            created_at=resolve_created_at(t.created_at, clock),
            is_cluster=t.is_cluster,
            is_global=t.is_global,
            importance=t.importance,
        )
        for t in specs
    ]


def seed_edges(scenario: Scenario) -> list[Edge]:
    """The scenario's edges in file order, to seed after all its thoughts."""
    return [Edge(e.source, e.target, e.type) for e in scenario.edges]
