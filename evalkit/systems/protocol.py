"""The narrow interface between the harness and a memory system under test.

The runner needs three things per scenario: a fresh memory in a directory it owns, a way to add
thoughts and edges, and a search. `MemorySystem` is the factory of fresh memories;
`ScenarioMemory` is the one memory a scenario is seeded into and searched. Another memory
system is evaluated by writing a class with the same `name`, `describe()` and `open()` — see
the docs page "Your system" (docs/system/).

A memory may also offer the operations that a scenario's steps apply between queries:
`delete_thoughts(ids)` (capability `deletion`) and `update_thought(id, content=..., status=...)`
(capability `update`). A system is asked for them only when it declares that capability.

A system may also declare `capabilities` (a set of names from
`evalkit.systems.capabilities.CAPABILITIES`); scenarios needing one it lacks are reported
not_applicable. A system that declares nothing is taken to have them all. What the harness
checks in every response is listed in `evalkit.systems.checked`.

Two optional extras: `open(workdir, scenario=NAME)` — a system whose `open` takes the keyword
`scenario` is told the scenario's name (the MCP adapter names it in errors and templates); and a
memory may offer `search_many(requests)`, a batch search: a `SearchRequest` per search, answered
by one `SearchResponse` each, in order, exactly as `search` would answer them one by one. The
runner then asks all of a shard's searches in one call (each search's latency is the call's
wall time divided by their number).

A system that keeps nothing in `open()`'s workdir (its memories live in RAM, in a server, or
nowhere) may say so with the attribute `needs_workdir = False` (absent: True, read by
`needs_workdir`): the runner then makes no scratch directory per scenario and passes
`NO_WORKDIR` instead, a path that is not a directory, so that a system declaring this wrongly
fails at its first write there instead of leaving files behind. It changes nothing in results
and is not recorded in the report.

A system whose calls wait on another process (a service over HTTP, an MCP server) may say so with
the attribute `in_flight`: how many scenarios it takes at once by default (absent or 0: an
in-process system; read by `in_flight`). The runner then keeps `--workers N` scenarios in flight
on threads of this process (`in_flight` of them when N is not given) instead of worker processes,
so its `open()`, and the memories it returns, are called from several threads at once (each
memory from one thread). The HTTP adapter takes `IN_FLIGHT`; the MCP adapter `IN_FLIGHT` on a
server at a URL and `IN_FLIGHT_PROCESSES` on a stdio server, which starts a server process per
scenario in flight. It changes nothing in results and is not recorded in the report.

A system that sends work without waiting for its reply (the HTTP and MCP adapters send a
scenario's drop so) may offer `settle()`: the runner calls it once all of a run's scenarios are
done, and it waits for what is still in flight and raises its error, so that the run, not the
interpreter's exit, reports it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from evalkit.records import Edge, SearchResponse, Thought

NO_WORKDIR = Path(os.devnull)
"""The workdir a system declaring `needs_workdir = False` is opened with (see the module
docstring): the null device, never a directory, so nothing can be written below it."""


def needs_workdir(system: object) -> bool:
    """Whether `open()` of `system` needs a directory of its own (its `needs_workdir` attribute;
    absent: True, the contract of `MemorySystem.open`)."""
    return bool(getattr(system, "needs_workdir", True))


IN_FLIGHT = 8
"""Scenarios in flight by default on a system whose slots are connections (an HTTP service, an
MCP server at a URL): enough to hide a service's tens of milliseconds per call, few enough not to
swamp a service that is someone's development box."""

IN_FLIGHT_PROCESSES = max(1, min(IN_FLIGHT, os.cpu_count() or 1))
"""Scenarios in flight by default on a stdio MCP server, each with a server process of its own
(its start-up, and a model it may load, paid once per process): one per CPU, at most `IN_FLIGHT`."""


def in_flight(system: object) -> int:
    """How many scenarios `system` takes in flight on threads by default (its `in_flight`
    attribute; absent: 0, an in-process system, which `--workers N` runs on processes)."""
    value = getattr(system, "in_flight", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class SearchRequest:
    """One search of a batch (`search_many`): the query and the keyword arguments that
    `ScenarioMemory.search` would get (top_k, project, min_relevance, …, query_id)."""

    query: str
    options: Mapping[str, Any]


class ScenarioMemory(Protocol):
    """One memory, alive while its `MemorySystem.open()` context is: seeded with one scenario's
    thoughts (then edges) and searched with its queries."""

    def add_thoughts(self, thoughts: Sequence[Thought]) -> Any: ...

    def add_edges(self, edges: Sequence[Edge]) -> Any: ...

    def search(
        self,
        query: str,
        *,
        top_k: int,
        project: str | None,
        min_relevance: float | None,
        recency_weight: float,
        recency_half_life_days: float,
        now: datetime,
        include_global: bool = False,
        query_id: str | None = None,
    ) -> SearchResponse:
        """The best `top_k` thoughts for `query`, best first, as a `SearchResponse` of `Hit`s (only
        `Hit.id` is required, and it must be an id given to `add_thoughts`).

        `project` None = every project, else only that project's thoughts (plus global thoughts
        of other projects when `include_global`). `recency_weight` 0 = no recency. min_relevance
        None = the system's own default gate; 0 = no gate. `now` is the run's clock (relative
        `created_at` dates were resolved against it). The response's `min_relevance` reports the
        gate value actually used; `candidates`/`filtered_out`/`dropped_ids` say what the gate saw
        and removed (leave them 0/empty for a system without a gate). `query_id` is the query's
        stable id (`evalkit.scenarios.stable_query_id`; the runner always passes it): a system that
        searches by text ignores it, one that replays recorded results looks the ranking up by it."""
        ...


class DeletingMemory(ScenarioMemory, Protocol):
    """A memory with the `deletion` capability."""

    def delete_thoughts(self, ids: Sequence[str]) -> Any:
        """Forget the thoughts `ids` (each one seeded and not yet deleted): no later search may
        return them, through any index. What the system does with edges touching them is its
        own (the reference store removes them)."""
        ...


class UpdatingMemory(ScenarioMemory, Protocol):
    """A memory with the `update` capability."""

    def update_thought(self, id: str, *, content: str | None = None, status: str | None = None) -> Any:
        """Replace thought `id`'s content and/or status (None = unchanged). Later searches rank
        the new content in every index (the reference store re-embeds it and re-indexes its
        text); the id, project, date and edges stay."""
        ...


class BatchMemory(ScenarioMemory, Protocol):
    """A memory that answers a batch of searches in one call (optional; see the module docstring)."""

    def search_many(self, requests: Sequence[SearchRequest]) -> Sequence[SearchResponse]:
        """One `SearchResponse` per request, in order, as `search` would answer each."""
        ...


class MemorySystem(Protocol):
    """A factory of fresh memories. `open(workdir)` returns a context manager yielding a
    `ScenarioMemory`; it must keep every file inside `workdir` (the runner deletes it afterwards)
    and release its resources when the context exits. `describe()` is recorded in the report's
    provenance (JSON-serialisable values only)."""

    name: str

    def describe(self) -> dict[str, Any]: ...

    def open(self, workdir: Path) -> AbstractContextManager[ScenarioMemory]: ...


class SettlingSystem(MemorySystem, Protocol):
    """A system that sends work without waiting for its reply (optional; see the module docstring)."""

    def settle(self) -> None:
        """Wait for what is still in flight and raise its error; called once a run's scenarios are done."""
        ...


PROTOCOL_METHODS: dict[str, Callable[..., Any]] = {
    "open": MemorySystem.open,
    "describe": MemorySystem.describe,
    "settle": SettlingSystem.settle,
    "add_thoughts": ScenarioMemory.add_thoughts,
    "add_edges": ScenarioMemory.add_edges,
    "search": ScenarioMemory.search,
    "search_many": BatchMemory.search_many,
    "delete_thoughts": DeletingMemory.delete_thoughts,
    "update_thought": UpdatingMemory.update_thought,
}
"""Each method the harness calls on a system or its memory → its definition above (what an error
about a signature that cannot take the harness's call shows as the one to write)."""
