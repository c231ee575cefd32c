"""Library systems: non-finite scores name the system, the scenario and the query;
finite ones save and load back.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit.embedders import HashingEmbedder
from evalkit.errors import SystemOutputError
from evalkit.records import SearchResponse
from evalkit.systems import ReferenceSystem
from evalkit.systems.base import MemorySystem, OpenContext, SearchOptions
from tests.systems_fixtures import Wrapping

# --- library systems ---------------------------------------------------------------------------------


class _Poisoned(MemorySystem):
    """The reference store, with one score of every hit replaced by `value`."""

    name = "poisoned"

    def __init__(self, score: str, value: float) -> None:
        self._inner = ReferenceSystem(HashingEmbedder())
        self._score, self._value = score, value

    def describe(self) -> dict[str, Any]:
        return {"score": self._score}

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[_PoisonedMemory]:
        with self._inner.open(context) as memory:
            yield _PoisonedMemory(memory, self._score, self._value)


class _PoisonedMemory(Wrapping):
    def __init__(self, inner: Any, score: str, value: float) -> None:
        super().__init__(inner)
        self._score, self._value = score, value

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        response = self.memory.search(query, options)
        hits = tuple(dataclasses.replace(h, **{self._score: self._value}) for h in response.hits)
        return dataclasses.replace(response, hits=hits)


@pytest.mark.parametrize(
    ("score", "value"),
    [
        ("similarity", float("nan")),
        ("relevance", float("nan")),
        ("relevance", float("inf")),
        ("bm25_score", float("-inf")),
        ("rrf_score", float("nan")),
        ("distance", float("inf")),
        ("final_score", float("nan")),
    ],
)
def test_non_finite_score_from_a_system_names_system_scenario_and_query(
    ws: Path, score: str, value: float
) -> None:
    with pytest.raises(SystemOutputError) as excinfo:
        evalkit.run_eval(datasets="data", system=_Poisoned(score, value), thresholds=None)
    message = str(excinfo.value)
    for needle in (
        "system 'poisoned'",
        f"returned {score} {value}",
        "scenario 'tiny'",
        "query 1",
        "billing API",
    ):
        assert needle in message, message
    assert list((ws / "tmp").iterdir()) == []  # the scenario's store was removed


def test_finite_scores_from_a_system_save_and_load_back(ws: Path) -> None:
    run = evalkit.run_eval(
        datasets="data", system=_Poisoned("similarity", 0.25), thresholds=None, gated=False
    )
    run.save(ws / "reports" / "r.json")
    assert evalkit.load_run(ws / "reports" / "r.json").hits["similarity"].tolist() == [0.25] * 5
    assert list((ws / "tmp").iterdir()) == []
