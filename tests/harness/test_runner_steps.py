"""The runner applies a scenario's steps between its queries: each query, in every pass, sees the
memory as the steps before it left it; shards replay the steps; systems without the operation's
capability get not_applicable."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest

from evalkit.errors import AdapterError
from evalkit.harness.config import RunConfig
from evalkit.harness.executors import SerialExecutor
from evalkit.harness.runner import run_suite
from evalkit.scenarios import Suite, load_suite
from evalkit.scenarios.model import Scenario
from evalkit.systems import MemorySystem, OpenContext, ReferenceSystem, ScenarioMemory
from evalkit.systems.capabilities import ALL_CAPABILITIES

_PORTS = [{"id": f"svc-{i}", "content": f"Service number {i} answers on port {8000 + i}"} for i in range(8)]
SCENARIO = Scenario.model_validate(
    {
        "name": "ops",
        "category": "supersession",
        "distractors": False,
        "thoughts": _PORTS,
        "queries": [
            {"query": "which port answers 8003", "relevant": ["svc-3"]},
            {"query": "which port answers 8003", "relevant": ["svc-2"], "forbid": ["svc-3"]},
            {"query": "which port answers 8003", "relevant": ["svc-3"]},
            {"query": "which service moved to 7002", "relevant": ["svc-2"]},
        ],
        "steps": [
            {"after_query": 1, "delete": ["svc-3"]},
            {
                "after_query": 2,
                "add": {"thoughts": [{"id": "svc-3", "content": "Service number 3 answers on port 8003"}]},
            },
            {"after_query": 3, "update": {"id": "svc-2", "content": "Service number 2 moved to port 7002"}},
        ],
    }
)


def _suite() -> Suite:
    return replace(load_suite(), scenarios=(SCENARIO,), subset=True)


def test_each_query_sees_the_memory_the_steps_before_it_left_in_every_pass():
    result = run_suite(_suite(), ReferenceSystem(), RunConfig())
    for run_pass in result.passes:
        first, after_delete, after_readd, after_update = run_pass.scenarios[0].queries
        assert first.retrieved[0] == "svc-3"
        assert "svc-3" not in after_delete.retrieved and after_delete.check_errors == []
        assert after_readd.retrieved[0] == "svc-3"
        assert after_update.retrieved[0] == "svc-2" and "bm25" in after_update.hits[0].match_source
    assert len(result.passes) == 2


class _TwoWorkers(SerialExecutor):
    workers = 4


def test_shards_of_one_scenario_replay_the_steps_before_their_first_query():
    serial = run_suite(_suite(), ReferenceSystem(), RunConfig())
    sharded = run_suite(_suite(), ReferenceSystem(), RunConfig(), executor=_TwoWorkers(), clock=serial.clock)
    assert [q.retrieved for q in sharded.measurement.scenarios[0].queries] == [
        q.retrieved for q in serial.measurement.scenarios[0].queries
    ]


class _NoOperations(ReferenceSystem):
    capabilities = ALL_CAPABILITIES - {"deletion", "update"}


def test_a_system_without_deletion_or_update_gets_not_applicable():
    result = run_suite(_suite(), _NoOperations(), RunConfig())
    assert result.not_applicable == {"ops": ["deletion", "update"]}


class _ClaimsDeletion(MemorySystem):
    name = "claims"
    capabilities = frozenset({"deletion", "update", "supersession"})

    def describe(self) -> dict[str, object]:
        return {}

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[ScenarioMemory]:
        with ReferenceSystem().open(context) as memory:
            yield _Without(memory)


class _Without(ScenarioMemory):
    def __init__(self, memory: ScenarioMemory) -> None:
        self._memory = memory
        self.add_thoughts = memory.add_thoughts  # type: ignore[method-assign]
        self.add_edges = memory.add_edges  # type: ignore[method-assign]
        self.search = memory.search  # type: ignore[method-assign]


def test_a_system_declaring_deletion_without_the_method_is_an_adapter_error():
    with pytest.raises(
        AdapterError,
        match=r"declares the 'deletion' capability, but its memory \(_Without\) does not define "
        r"delete_thoughts\(\)",
    ):
        run_suite(_suite(), _ClaimsDeletion(), RunConfig())
