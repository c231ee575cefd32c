"""The harness's side of the protocol: open a system's memory, call it, and check what it returns.

Every adapter mistake becomes an AdapterError naming the system, the method, the field and the
fix, instead of a raw AttributeError deep in the runner. Checks on each search response:
- it is a `SearchResponse` whose `hits` are `Hit`s;
- ids are strings the scenario seeded (an id never seeded is an error), each at most once;
- every float signal is finite (NaN or infinity is an error: it would poison means and the JSON);
- `match_source` ⊆ ("vector", "bm25"), `standing` is current | contradicted | superseded;
- ranks are all 0 (then the harness numbers hits by position) or exactly 1, 2, …, n;
- more hits than `top_k`: the extra ones are cut (never scored) with an AdapterWarning;
- `candidates`/`filtered_out` are non-negative ints, `min_relevance` finite, `dropped_ids` seeded;
- `gate_candidates` (optional) have seeded ids and finite similarities (or None).
Output violations raise SystemOutputError (an AdapterError) naming the scenario and query.
`query_id` is passed only to a search that names it or takes `**options` (it matters to systems
that replay recorded rankings; text search does not need it); `scenario` only to an `open` that
names it or takes `**kwargs`.
Each search call is timed (wall clock, milliseconds, the system's call only); the searches of one
`search_many` call each get the call's time divided by their number. A `search_many` that
returns another number of responses than it was asked is an AdapterError.
"""

from __future__ import annotations

import inspect
import math
import time
import warnings
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from evalkit.errors import AdapterError, AdapterWarning, SystemOutputError
from evalkit.records import HIT_FIELDS, MATCH_SOURCES, STANDINGS, Edge, Hit, SearchResponse, Thought
from evalkit.systems.protocol import MemorySystem, ScenarioMemory, SearchRequest
from evalkit.validation import shown_value

_FLOAT_SIGNALS = tuple(f.name for f in HIT_FIELDS if f.annotation == float | None)
"""The optional float signals of a `Hit` (every field declared `float | None`): each must be
finite when given."""


@dataclass(frozen=True)
class TimedResponse:
    """A checked search response and how long the system took to produce it (wall, ms)."""

    response: SearchResponse
    latency_ms: float


class CheckedMemory:
    """A `ScenarioMemory` whose calls are checked: seeded ids are remembered so that hits can be
    checked against them."""

    def __init__(self, system_name: str, memory: Any) -> None:
        for method in ("add_thoughts", "add_edges", "search"):
            if not callable(getattr(memory, method, None)):
                raise AdapterError(
                    f"system {system_name!r}: the object yielded by open() ({type(memory).__name__}) has no "
                    f"{method}() method; it must implement evalkit.ScenarioMemory "
                    "(add_thoughts, add_edges, search)"
                )
        self._name = system_name
        self._memory: ScenarioMemory = memory
        self._seeded: set[str] = set()
        self._takes_query_id = _accepts_keyword(memory.search, "query_id")

    def add_thoughts(self, thoughts: Sequence[Thought]) -> None:
        self._memory.add_thoughts(thoughts)
        self._seeded.update(t.id for t in thoughts)

    def add_edges(self, edges: Sequence[Edge]) -> None:
        self._memory.add_edges(edges)

    def delete_thoughts(self, ids: Sequence[str]) -> None:
        """The memory's `delete_thoughts` (capability `deletion`). The ids stay known as seeded:
        a deleted thought returned later is scored (a stale hit), not an adapter error."""
        self._operation("delete_thoughts", "deletion")(list(ids))

    def update_thought(self, id: str, *, content: str | None = None, status: str | None = None) -> None:
        """The memory's `update_thought` (capability `update`)."""
        self._operation("update_thought", "update")(id, content=content, status=status)

    def _operation(self, method: str, capability: str) -> Any:
        """The memory's `method`; AdapterError when it has none although its system declares
        `capability`."""
        found = getattr(self._memory, method, None)
        if not callable(found):
            raise AdapterError(
                f"system {self._name!r} declares the {capability!r} capability, but the object yielded by "
                f"open() ({type(self._memory).__name__}) has no {method}() method; implement it "
                f"(see evalkit.systems.protocol) or leave {capability!r} out of `capabilities`"
            )
        return found

    def search_all(self, searches: Sequence[tuple[str, str, dict[str, Any]]]) -> list[TimedResponse]:
        """Each of `searches` ((query, asked, options), see `search`), checked and timed, in order:
        in one `search_many` call when the memory offers one, else one search each."""
        batch = getattr(self._memory, "search_many", None)
        if not callable(batch) or len(searches) < 2:
            return [self.search(query, asked=asked, **options) for query, asked, options in searches]
        requests = []
        for query, _, options in searches:
            sent = dict(options)
            if not self._takes_query_id:
                sent.pop("query_id", None)
            requests.append(SearchRequest(query, sent))
        start = time.perf_counter()
        responses = list(batch(requests))
        latency_ms = (time.perf_counter() - start) * 1000.0 / len(requests)
        if len(responses) != len(requests):
            raise AdapterError(
                f"system {self._name!r}: search_many() returned {len(responses)} responses for "
                f"{len(requests)} searches; it must return one per search, in order"
            )
        return [
            TimedResponse(checked_response(self._name, r, options["top_k"], self._seeded, asked), latency_ms)
            for r, (_, asked, options) in zip(responses, searches, strict=True)
        ]

    def search(self, query: str, *, asked: str = "", **options: Any) -> TimedResponse:
        """The system's search with `options` (see `ScenarioMemory.search`), checked and timed;
        `asked` says where the query comes from (e.g. "scenario 'x', query 2 ('...')") for
        error messages."""
        if not self._takes_query_id:
            options.pop("query_id", None)
        start = time.perf_counter()
        response = self._memory.search(query, **options)
        latency_ms = (time.perf_counter() - start) * 1000.0
        return TimedResponse(
            checked_response(self._name, response, options["top_k"], self._seeded, asked), latency_ms
        )


def _accepts_keyword(function: Any, name: str) -> bool:
    """Whether `function` takes the keyword `name` (named, or through `**kwargs`); True when its
    signature cannot be read (a C function), so the keyword is passed as the protocol says.
    A bound method is judged by its function, once per function (every scenario asks again)."""
    target = getattr(function, "__func__", function)
    try:
        return _takes_keyword(target, name)
    except TypeError:  # an unhashable callable: not remembered
        return _takes_keyword.__wrapped__(target, name)


@lru_cache(maxsize=256)
def _takes_keyword(function: Any, name: str) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


@contextmanager
def open_checked(system: MemorySystem, workdir: Path, scenario: str | None = None) -> Iterator[CheckedMemory]:
    """`system.open(workdir)` as a context manager yielding a CheckedMemory (`scenario=` passed
    when open takes it); AdapterError when open() is missing or does not return a context manager."""
    name = getattr(system, "name", type(system).__name__)
    opener = getattr(system, "open", None)
    if not callable(opener):
        raise AdapterError(
            f"system {name!r} has no open(workdir) method; it must implement evalkit.MemorySystem"
        )
    told = scenario is not None and _accepts_keyword(opener, "scenario")
    manager = opener(workdir, scenario=scenario) if told else opener(workdir)
    if not (hasattr(manager, "__enter__") and hasattr(manager, "__exit__")):
        raise AdapterError(
            f"system {name!r}: open(workdir) returned {type(manager).__name__}, not a context manager; "
            "decorate open with @contextlib.contextmanager and `yield` the memory (or return an object "
            "with __enter__/__exit__)"
        )
    with manager as memory:
        yield CheckedMemory(name, memory)


def checked_response(
    system: str, response: Any, top_k: int, seeded: Collection[str], asked: str = ""
) -> SearchResponse:
    """`response` after the checks listed in the module docstring; SystemOutputError (an
    AdapterError) on a violation, naming `system`, the search and `asked` (the scenario and
    query, when given)."""
    where = f"system {system!r}: search() for {asked}" if asked else f"system {system!r}: search()"
    if not isinstance(response, SearchResponse):
        raise SystemOutputError(
            f"{where} returned {type(response).__name__}; "
            "return evalkit.SearchResponse(hits=(Hit(id=...), ...))"
        )
    hits = response.hits
    if not isinstance(hits, tuple | list) or not all(isinstance(h, Hit) for h in hits):
        raise SystemOutputError(f"{where}: `hits` must be a tuple of evalkit.Hit, got {hits!r:.200}")
    seen: set[str] = set()
    for position, hit in enumerate(hits, start=1):
        _check_hit(where, position, hit, seeded, seen)
    ranks = [h.rank for h in hits]
    if any(ranks) and ranks != list(range(1, len(hits) + 1)):
        raise SystemOutputError(
            f"{where}: hit ranks {ranks} must be 1, 2, …, n in order (or all 0 to let evalkit number them)"
        )
    if len(hits) > top_k:
        warnings.warn(
            f"{where} returned {len(hits)} hits for top_k={top_k}; the {len(hits) - top_k} beyond top_k "
            "were cut and not scored",
            AdapterWarning,
            stacklevel=2,
        )
    _check_counts(where, response, seeded)
    _check_candidates(where, response, seeded)
    if len(hits) <= top_k and all(h.rank for h in hits) and isinstance(hits, tuple):
        return response  # already numbered, nothing cut
    numbered = tuple(h if h.rank else replace(h, rank=i) for i, h in enumerate(hits[:top_k], start=1))
    return replace(response, hits=numbered)


def _check_hit(where: str, position: int, hit: Hit, seeded: Collection[str], seen: set[str]) -> None:
    at = f"{where}: hit {position}"
    if not isinstance(hit.id, str) or hit.id not in seeded:
        raise SystemOutputError(
            f"{at}: id {shown_value(hit.id)} was never added to this memory; "
            "return the ids given to add_thoughts"
        )
    if hit.id in seen:
        raise SystemOutputError(
            f"{at}: id {shown_value(hit.id)} is returned twice; return each thought at most once"
        )
    seen.add(hit.id)
    problem = _hit_problem(hit)
    if problem:
        raise SystemOutputError(f"{at} ({shown_value(hit.id)}){problem}")


def _hit_problem(hit: Hit) -> str | None:
    """What is wrong with a hit's signals and labels, as the end of a message naming the hit;
    None when nothing is."""
    for name in _FLOAT_SIGNALS:
        problem = _signal_problem(name, getattr(hit, name))
        if problem:
            return problem
    if not set(hit.match_source) <= set(MATCH_SOURCES):
        return f": `match_source` {hit.match_source!r} may hold only {', '.join(MATCH_SOURCES)}"
    if hit.standing not in STANDINGS:
        return f": `standing` {hit.standing!r} must be one of {', '.join(STANDINGS)}"
    if hit.low_confidence is not None and not isinstance(hit.low_confidence, bool):
        return ": `low_confidence` must be true, false or None"
    return None


def _check_candidates(where: str, response: SearchResponse, seeded: Collection[str]) -> None:
    """The rows a system reports as reaching its gate (for the gate sweep): seeded ids, and a
    finite similarity or None (the vector leg did not return the row)."""
    for position, candidate in enumerate(response.gate_candidates, start=1):
        problem = (
            " was never added to this memory; report only seeded ids"
            if candidate.id not in seeded
            else _signal_problem("similarity", candidate.similarity)
        )
        if problem:
            at = f"{where}: gate candidate {position} ({shown_value(candidate.id)})"
            raise SystemOutputError(at + problem)


def _signal_problem(name: str, value: object) -> str | None:
    """What is wrong with a float signal `name` — it must be None or a finite number — as the
    end of a message naming the hit or candidate; None when nothing is. (Messages are built
    only for a failure: every hit and candidate of every search is checked.)"""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f": `{name}` must be a number or None, got {value!r}"
    if not math.isfinite(value):
        return (
            f" returned {name} {value}; a memory system must return finite scores (or None where "
            "a signal does not apply)"
        )
    return None


def _check_counts(where: str, response: SearchResponse, seeded: Collection[str]) -> None:
    for name in ("candidates", "filtered_out"):
        value = getattr(response, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SystemOutputError(
                f"{where}: `{name}` must be a non-negative int (0 without a gate), got {value!r}"
            )
    if not isinstance(response.min_relevance, int | float) or not math.isfinite(response.min_relevance):
        raise SystemOutputError(
            f"{where}: `min_relevance` must be the finite gate value used (0 = none), "
            f"got {response.min_relevance!r}"
        )
    unknown = [i for i in response.dropped_ids if i not in seeded]
    if unknown:
        raise SystemOutputError(f"{where}: `dropped_ids` names ids never added to this memory: {unknown[:5]}")
