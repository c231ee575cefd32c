"""What a memory system is to the harness: a `MemorySystem` (a factory of fresh memories) and the
`ScenarioMemory` it opens per scenario, both base classes whose every hook is declared here with
its default and the moment the harness calls it. A system subclasses `MemorySystem`; the harness
reads its declarations as attributes and calls its methods, and never probes for either.

`MemorySystem` — declarations (class attributes, read when a run starts):
- `name`: how reports and errors name the system (empty: the class's name).
- `capabilities`: the set of `evalkit.systems.capabilities.CAPABILITIES` it has; a scenario
  needing one it lacks is `not_applicable`. Default `UNDECLARED_CAPABILITIES`: all but the
  operations `deletion` and `update`, which need methods a memory overrides.
- `own_embedder`: the embedding model the system embeds with by itself, by name (a service's
  model, a library's default). Default None: it embeds with the run's embedder
  (`OpenContext.embedder`) or not at all. A declared one names the run's mode (`system`), keys its
  baseline and appears in the report; the run's `--embedder` does not apply to it.
- `confidence_floor`: the similarity under which it calls a vector-only hit low-confidence
  (with the `confidence` capability; the rank chart draws it). Default None.
- `mutation_testing`: the mutation suite measures this system's search. Default False.
- `hits_by`: how its hits name the thoughts they found. `"id"` (default): `Hit.id` is an id given
  to `add_thoughts` (a system that makes ids of its own maps them back itself, e.g. from the
  metadata it was given). `"content"`: `Hit.content` is the thought's exact content, which the
  harness maps to the seeded thought (thoughts of equal content are given out in seeding order,
  each once per response); a hit whose content matches no seeded thought is an error naming it.
- `needs_workdir`: `open` gets a scratch folder of its own (`OpenContext.workdir`). False for a
  system that keeps nothing on disk: the runner then makes no folder and passes `NO_WORKDIR`, the
  null device, so a wrong declaration fails at its first write. Default True.
- `indexes_later`: what it is given may not be found at once (a service indexing in the
  background). After seeding each scenario the runner then searches for the last thought seeded
  until it is found, at most 30 s (`evalkit.harness.readiness`), and reports how long that took
  (`latency.searchable`). Default False: searchable as soon as `add_thoughts` returns.
- `in_flight`: how many scenarios it takes at once by default, on threads of this process (a
  system whose calls wait on another process: an HTTP service, an MCP server); `--workers N`
  overrides it. 0 (default): an in-process system, which `--workers N` runs on processes.
- `inline_calls`: `evalkit serve` runs its memories' calls on the event loop instead of its store
  thread; its memories then implement `watch`. Default False.

`MemorySystem` — methods:
- `open(context)` (required): a context manager yielding a fresh `ScenarioMemory`, called once
  per scenario (per shard of a scenario cut across workers), from several threads at once for a
  system with `in_flight`. Files stay inside `context.workdir` (removed afterwards, also on an
  error or Ctrl-C); the context's exit releases what the memory holds.
- `describe()`: JSON values recorded in the report's provenance (and in baselines, which refuse
  another system's). Default `{"system": name}`.
- `settle()`: called once every scenario of a run is done; waits for work sent without waiting
  for its reply and raises its error. Default: nothing to wait for.
- `close()`: called when a run that built the system from a spec (`--system SPEC`,
  `run_eval(system="SPEC")`) is over; a system object passed by the caller stays the caller's to
  close. Default: nothing to release.

`ScenarioMemory` — methods, called from one thread:
- `add_thoughts(thoughts)` (required): seed `Thought`s (a scenario's, then those of `add` steps).
- `add_edges(edges)`: seed `Edge`s after the thoughts. Default: ignore them, which a system
  declaring `supersession` or `contradiction` may not do (an AdapterError when it opens).
- `search(query, options)` (required): a `SearchResponse`, best first (see `SearchOptions`).
- `search_many(requests)`: a `SearchResponse` per `SearchRequest`, in order, each what `search`
  would answer. Default: `search` for each. A memory that overrides it is asked a shard's
  searches in one call (each credited an equal share of the call's time), one that does not is
  asked one by one (each timed alone).
- `delete_thoughts(ids)` / `update_thought(id, content=, status=)`: called by a scenario's
  steps, only on a system declaring `deletion` / `update`. Default: NotImplementedError (an
  AdapterError naming the method when a system declares the capability without overriding it).
- `interrupt()`: stop the running call, from another thread (`evalkit serve`'s deadline).
  Default: nothing to stop.
- `watch(overdue)`: with `inline_calls`, stop a running call once `overdue()` is True. Default:
  nothing to stop.

What the harness checks in every response is listed in `evalkit.systems.checked`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalkit.records import DEFAULT_HALF_LIFE_DAYS, Edge, SearchResponse, Thought
from evalkit.systems.capabilities import UNDECLARED_CAPABILITIES

if TYPE_CHECKING:
    from evalkit.embedders import Embedder

NO_WORKDIR = Path(os.devnull)
"""The workdir of a system declaring `needs_workdir = False`: the null device, never a directory,
so nothing can be written below it."""

UNDECLARED_EMBEDDER = "undeclared"
"""The `own_embedder` of a system known to embed by itself (a service, an MCP server) that does
not say with what."""

IN_FLIGHT = 8
"""Scenarios in flight by default on a system whose slots are connections (an HTTP service, an
MCP server at a URL): enough to hide a service's tens of milliseconds per call, few enough not to
swamp a service that is someone's development box."""

IN_FLIGHT_PROCESSES = max(1, min(IN_FLIGHT, os.cpu_count() or 1))
"""Scenarios in flight by default on a stdio MCP server, each with a server process of its own
(its start-up, and a model it may load, paid once per process): one per CPU, at most `IN_FLIGHT`."""


@dataclass(frozen=True, kw_only=True)
class SearchOptions:
    """How one search is asked.

    - `top_k`: return at most that many hits, best first (more are cut and not scored).
    - `now`: the run's clock; relative `created_at` dates were resolved against it.
    - `project`: None = every project, else only that project's thoughts (capability `projects`),
      plus `is_global` thoughts of other projects when `include_global` (`global_thoughts`).
    - `min_relevance`: None = the system's own default gate; 0 = no gate; above 0 = that gate
      (`relevance_gate`). The response's `min_relevance` reports the gate actually used.
    - `recency_weight` 0 = no recency; `recency_half_life_days` its half-life (`recency`).
    - `query_id`: the query's stable id (`evalkit.scenarios.stable_query_id`; always given by the
      runner): a system that searches by text ignores it, one that replays recorded rankings looks
      them up by it.
    """

    top_k: int
    now: datetime
    project: str | None = None
    include_global: bool = False
    min_relevance: float | None = None
    recency_weight: float = 0.0
    recency_half_life_days: float = DEFAULT_HALF_LIFE_DAYS
    query_id: str | None = None


@dataclass(frozen=True)
class SearchRequest:
    """One search of a batch (`ScenarioMemory.search_many`)."""

    query: str
    options: SearchOptions


@dataclass(frozen=True)
class OpenContext:
    """What `MemorySystem.open` is given for one memory.

    - `workdir`: a folder of its own, removed after the scenario (`NO_WORKDIR` for a system
      declaring `needs_workdir = False`).
    - `scenario`: the scenario's name (None outside a run: `evalkit serve`'s namespaces).
    - `embedder`: the run's embedder (`evalkit.embedders.Embedder`: `embed_passages(texts)` and
      `embed_query(text)` give unit float32 vectors of `dim`; `identity` names it), built on
      first use and shared by every memory of the process; a system that embeds by itself
      declares `own_embedder` instead.
    """

    workdir: Path
    scenario: str | None = None
    make_embedder: Callable[[], Embedder] = field(default=lambda: _hashing_embedder(), repr=False)

    @property
    def embedder(self) -> Embedder:
        """The run's embedder (`make_embedder()`, which builds it once)."""
        return self.make_embedder()


def _hashing_embedder() -> Embedder:
    """The deterministic embedder, the run's default (numpy loaded only when a system asks)."""
    from evalkit.embedders import HashingEmbedder

    return HashingEmbedder()


class ScenarioMemory:
    """One memory, alive while its `MemorySystem.open()` context is: seeded with one scenario's
    thoughts (then edges) and searched with its queries (see the module docstring)."""

    def add_thoughts(self, thoughts: Sequence[Thought]) -> Any:
        """Seed `thoughts`."""
        raise NotImplementedError(f"{type(self).__name__} must define add_thoughts(self, thoughts)")

    def add_edges(self, edges: Sequence[Edge]) -> Any:
        """Seed `edges` (after the thoughts they join); ignored unless overridden."""

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        """The best `options.top_k` thoughts for `query`, best first, as a `SearchResponse` of
        `Hit`s (only `Hit.id` is required: an id given to `add_thoughts`). A system without a
        gate leaves the response's `candidates`/`filtered_out`/`dropped_ids` at 0/empty."""
        raise NotImplementedError(f"{type(self).__name__} must define search(self, query, options)")

    def search_many(self, requests: Sequence[SearchRequest]) -> Sequence[SearchResponse]:
        """One `SearchResponse` per request, in order, as `search` would answer each."""
        return [self.search(request.query, request.options) for request in requests]

    def delete_thoughts(self, ids: Sequence[str]) -> Any:
        """Forget the thoughts `ids` (each seeded, not yet deleted): no later search may return
        them, through any index (capability `deletion`)."""
        raise NotImplementedError(f"{type(self).__name__} does not delete thoughts")

    def update_thought(self, id: str, *, content: str | None = None, status: str | None = None) -> Any:
        """Replace thought `id`'s content and/or status (None = unchanged); later searches rank the
        new content in every index; the id, project, date and edges stay (capability `update`)."""
        raise NotImplementedError(f"{type(self).__name__} does not update thoughts")

    def interrupt(self) -> None:
        """Stop the running call (called from another thread); nothing to stop by default."""

    def watch(self, overdue: Callable[[], bool] | None) -> None:
        """Stop a running call once `overdue()` is True (`inline_calls` systems); by default
        nothing runs long enough to stop."""


class MemorySystem:
    """A factory of fresh memories (see the module docstring for every declaration and hook)."""

    name: str = ""
    capabilities: frozenset[str] = UNDECLARED_CAPABILITIES
    own_embedder: str | None = None
    confidence_floor: float | None = None
    mutation_testing: bool = False
    hits_by: Literal["id", "content"] = "id"
    indexes_later: bool = False
    needs_workdir: bool = True
    in_flight: int = 0
    inline_calls: bool = False

    def open(self, context: OpenContext) -> AbstractContextManager[ScenarioMemory]:
        """A context manager yielding a fresh memory for one scenario."""
        raise NotImplementedError(f"{type(self).__name__} must define open(self, context)")

    def describe(self) -> dict[str, Any]:
        """JSON values recorded in the report's provenance."""
        return {"system": self.name or type(self).__name__}

    def settle(self) -> None:
        """Wait for work sent without waiting for its reply, and raise its error."""

    def close(self) -> None:
        """Release what the system holds once its run is over."""


def overrides(instance: object, base: type, method: str) -> bool:
    """Whether `instance`'s class defines `method` itself rather than inheriting `base`'s default."""
    return getattr(type(instance), method) is not getattr(base, method)


PROTOCOL_METHODS: dict[str, Callable[..., Any]] = {
    "open": MemorySystem.open,
    "describe": MemorySystem.describe,
    "settle": MemorySystem.settle,
    "add_thoughts": ScenarioMemory.add_thoughts,
    "add_edges": ScenarioMemory.add_edges,
    "search": ScenarioMemory.search,
    "search_many": ScenarioMemory.search_many,
    "delete_thoughts": ScenarioMemory.delete_thoughts,
    "update_thought": ScenarioMemory.update_thought,
}
"""Each method the harness calls on a system or its memory → its definition above (what an error
about a signature that cannot take the harness's call shows as the one to write)."""
