"""What the runner seeds for one scenario: its thoughts (own, then the shared distractors) with
dates resolved against the run's clock, then its edges."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from evalkit.records import SENT_THOUGHT_FIELDS, Edge, Thought
from evalkit.scenarios.dates import resolve_created_at
from evalkit.scenarios.model import EdgeSpec, Scenario, ThoughtSpec


def own_ids(scenario: Scenario) -> frozenset[str]:
    """The ids of the scenario's own thoughts: those in its file not marked `distractor: true`
    (the shared distractors are never its own), those its add steps add included."""
    added = [t for step in scenario.steps if step.add is not None for t in step.add.thoughts]
    return frozenset(t.id for t in [*scenario.thoughts, *added] if not t.distractor)


def seed_thoughts(scenario: Scenario, distractors: Sequence[ThoughtSpec], clock: datetime) -> list[Thought]:
    """The thoughts to seed for `scenario`, in order: the thoughts of its file in file order
    (`distractor: true` ones included), then `distractors` when `scenario.distractors` is true,
    each dated `scenario.distractors_created_at` when that is set. `created_at` is resolved
    against `clock` (see `resolve_created_at`), so every thought carries a UTC datetime."""
    shared = list(distractors) if scenario.distractors else []
    if scenario.distractors_created_at is not None:
        shared = [t.model_copy(update={"created_at": scenario.distractors_created_at}) for t in shared]
    return thoughts_of(list(scenario.thoughts) + shared, clock)


def thoughts_of(specs: Sequence[ThoughtSpec], clock: datetime) -> list[Thought]:
    """`specs` as the thoughts a system is given, `created_at` resolved against `clock` (an add
    step's thoughts are dated like the initial seeding's)."""
    return [
        Thought(
            **{
                **{name: getattr(t, name) for name in SENT_THOUGHT_FIELDS},
                "created_at": resolve_created_at(t.created_at, clock),
            }
        )
        for t in specs
    ]


def seed_edges(scenario: Scenario) -> list[Edge]:
    """The scenario's edges in file order, to seed after all its thoughts."""
    return edges_of(scenario.edges)


def edges_of(specs: Sequence[EdgeSpec]) -> list[Edge]:
    """`specs` as the edges a system is given, in order."""
    return [Edge(e.source, e.target, e.type) for e in specs]
