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
A system must be a `MemorySystem` and its memories `ScenarioMemory`s (`evalkit.systems.base`);
a system declaring `deletion` or `update` must override the method, and one declaring
`supersession` or `contradiction` must override `add_edges` (AdapterErrors when it opens).
Each search call is timed (wall clock, milliseconds, the system's call only); the searches of one
`search_many` call each get the call's time divided by their number (a memory that does not
override `search_many` is asked one search at a time). A `search_many` that returns another
number of responses than it was asked is an AdapterError.

Every call into the system (`open` and the exit of its context, `add_thoughts`, `add_edges`,
`search`, `search_many`, `delete_thoughts`, `update_thought`, and through `call_system` the
runner's `settle` and `describe`) goes through `call_system`: whatever it raises becomes one
MemorySystemError naming the system, the method, the scenario and the query (where there is
one) and the fix, with the original as `__cause__`. A TypeError from a call its signature cannot
take is told as such, with the signature to write, formatted from its definition in
`evalkit.systems.base` (`PROTOCOL_METHODS`). An error of evalkit's own HTTP or MCP adapter
(an AdapterError: a refused connection, a timeout, a bad reply) keeps its message, which names
the endpoint or tool and the fix. evalkit's other errors (a bad store option, a missing model)
are about the run, not the system, and pass as they are. When a scenario's call failed and the
exit of open()'s context fails too, the first failure is raised and the second is a note on it.
"""

from __future__ import annotations

import inspect
import math
import time
import traceback
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from evalkit.errors import (
    TRACEBACK_ENV,
    AdapterError,
    AdapterWarning,
    EvalkitError,
    MemorySystemError,
    SystemOutputError,
    leaf_exceptions,
    sole_evalkit_error,
)
from evalkit.records import HIT_FIELDS, MATCH_SOURCES, STANDINGS, Edge, Hit, SearchResponse, Thought
from evalkit.systems.base import (
    PROTOCOL_METHODS,
    MemorySystem,
    OpenContext,
    ScenarioMemory,
    SearchOptions,
    SearchRequest,
    overrides,
)
from evalkit.systems.capabilities import declared_capabilities
from evalkit.validation import shown_value

_FLOAT_SIGNALS = tuple(f.name for f in HIT_FIELDS if f.annotation == float | None)
"""The optional float signals of a `Hit` (every field declared `float | None`): each must be
finite when given."""

R = TypeVar("R")

MAX_PROBLEM = 300
"""The most characters of a system's own exception message that a MemorySystemError shows."""


@dataclass(frozen=True)
class TimedResponse:
    """A checked search response and how long the system took to produce it (wall, ms)."""

    response: SearchResponse
    latency_ms: float


class CheckedMemory:
    """A `ScenarioMemory` whose calls are checked: seeded ids are remembered so that hits can be
    checked against them."""

    def __init__(self, system: MemorySystem, memory: object, scenario: str | None = None) -> None:
        name = system_name(system)
        if not isinstance(memory, ScenarioMemory):
            raise AdapterError(
                f"system {name!r}: the object yielded by open() ({type(memory).__name__}) is not an "
                "evalkit.ScenarioMemory; subclass it (add_thoughts, search, and the hooks it declares)"
            )
        capabilities = declared_capabilities(system)
        for capability, method in _DECLARED_METHODS.items():
            if capability in capabilities and not overrides(memory, ScenarioMemory, method):
                raise AdapterError(
                    f"system {name!r} declares the {capability!r} capability, but its memory "
                    f"({type(memory).__name__}) does not define {method}(); define it (see "
                    f"evalkit.systems.base) or leave {capability!r} out of `capabilities`"
                )
        self._name = name
        self._scenario = scenario
        self._memory = memory
        self._batches = overrides(memory, ScenarioMemory, "search_many")
        self._seeded: set[str] = set()
        self._by_content: dict[str, list[str]] | None = {} if system.hits_by == "content" else None
        self._content_of: dict[str, str] = {}

    @property
    def system(self) -> str:
        """The name of the system this memory is of."""
        return self._name

    def add_thoughts(self, thoughts: Sequence[Thought]) -> None:
        self._call("add_thoughts", self._memory.add_thoughts, (thoughts,))
        self._seeded.update(t.id for t in thoughts)
        for thought in thoughts:
            self._remember_content(thought.id, thought.content)

    def add_edges(self, edges: Sequence[Edge]) -> None:
        self._call("add_edges", self._memory.add_edges, (edges,))

    def delete_thoughts(self, ids: Sequence[str]) -> None:
        """The memory's `delete_thoughts` (capability `deletion`). The ids stay known as seeded:
        a deleted thought returned later is scored (a stale hit), not an adapter error."""
        self._call("delete_thoughts", self._memory.delete_thoughts, (list(ids),))

    def update_thought(self, id: str, *, content: str | None = None, status: str | None = None) -> None:
        """The memory's `update_thought` (capability `update`)."""
        self._call(
            "update_thought", self._memory.update_thought, (id,), {"content": content, "status": status}
        )
        if content is not None:
            self._remember_content(id, content)

    def _remember_content(self, id: str, content: str) -> None:
        """Which thought `content` names now (a system declaring `hits_by = "content"`)."""
        if self._by_content is None:
            return
        old = self._content_of.get(id)
        if old is not None:
            self._by_content[old].remove(id)
        self._by_content.setdefault(content, []).append(id)
        self._content_of[id] = content

    def _matched(self, response: object, asked: str) -> object:
        """`response` with each hit's id the seeded thought whose content it carries, for a system
        declaring `hits_by = "content"` (thoughts of equal content in seeding order, each once);
        SystemOutputError naming a hit whose content matches none. Anything else as it is."""
        if self._by_content is None or not isinstance(response, SearchResponse):
            return response
        taken: set[str] = set()
        hits = []
        for position, hit in enumerate(response.hits, start=1):
            content = hit.content if isinstance(hit, Hit) else None
            free = [i for i in self._by_content.get(content, ()) if i not in taken] if content else []
            if not free:
                raise SystemOutputError(
                    f"system {self._name!r}: search() for {self._asked(asked)}: hit {position} has content "
                    f"{shown_value(content)}, which matches no thought seeded in this memory (none left "
                    'unmatched in this response); a system declaring hits_by = "content" returns '
                    "each hit's exact content"
                )
            taken.add(free[0])
            hits.append(replace(hit, id=free[0]))
        return replace(response, hits=tuple(hits))

    def _call(
        self,
        method: str,
        function: Callable[..., R],
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any] | None = None,
        query: str | None = None,
    ) -> R:
        """`call_system` for this memory's scenario."""
        return call_system(self._name, method, function, args, kwargs, scenario=self._scenario, query=query)

    def _asked(self, query: str) -> str:
        """Where a search comes from, for output errors: the scenario and `query`."""
        scenario = f"scenario {self._scenario!r}" if self._scenario is not None else ""
        return ", ".join(part for part in (scenario, query) if part)

    def search_all(self, searches: Sequence[tuple[str, str, SearchOptions]]) -> list[TimedResponse]:
        """Each of `searches` ((query, asked, options), see `search`), checked and timed, in order:
        in one `search_many` call when the memory overrides it, else one search each."""
        if not self._batches or len(searches) < 2:
            return [self.search(query, options, asked=asked) for query, asked, options in searches]
        requests = [SearchRequest(query, options) for query, _, options in searches]
        start = time.perf_counter()
        responses = list(self._call("search_many", self._memory.search_many, (requests,)))
        latency_ms = (time.perf_counter() - start) * 1000.0 / len(requests)
        if len(responses) != len(requests):
            raise AdapterError(
                f"system {self._name!r}: search_many() returned {len(responses)} responses for "
                f"{len(requests)} searches; it must return one per search, in order"
            )
        return [
            TimedResponse(
                checked_response(
                    self._name, self._matched(r, asked), options.top_k, self._seeded, self._asked(asked)
                ),
                latency_ms,
            )
            for r, (_, asked, options) in zip(responses, searches, strict=True)
        ]

    def search(self, query: str, options: SearchOptions, *, asked: str = "") -> TimedResponse:
        """The system's search with `options`, checked and timed; `asked` names the query in the
        scenario (e.g. "query 2 ('...')") for error messages."""
        start = time.perf_counter()
        response = self._matched(
            self._call("search", self._memory.search, (query, options), None, asked or None), asked
        )
        latency_ms = (time.perf_counter() - start) * 1000.0
        return TimedResponse(
            checked_response(self._name, response, options.top_k, self._seeded, self._asked(asked)),
            latency_ms,
        )


_DECLARED_METHODS = {
    "deletion": "delete_thoughts",
    "update": "update_thought",
    "supersession": "add_edges",
    "contradiction": "add_edges",
}
"""A capability → the `ScenarioMemory` method a system declaring it must define."""


def system_name(system: MemorySystem) -> str:
    """The name a system is told by: its `name`, else its class's name."""
    return system.name or type(system).__name__


@contextmanager
def open_checked(system: MemorySystem, context: OpenContext) -> Iterator[CheckedMemory]:
    """`system.open(context)` as a context manager yielding a CheckedMemory; AdapterError when
    open() does not return a context manager; MemorySystemError when open(), or the exit of its
    context, raises (see the module docstring)."""
    name = system_name(system)
    scenario = context.scenario
    manager = call_system(name, "open", system.open, (context,), scenario=scenario)
    if not isinstance(manager, AbstractContextManager):
        raise AdapterError(
            f"system {name!r}: open(context) returned {type(manager).__name__}, not a context manager; "
            "decorate open with @contextlib.contextmanager and `yield` the memory (or return an object "
            "with __enter__/__exit__)"
        )
    memory = call_system(name, "open", manager.__enter__, (), scenario=scenario, defined=system.open)
    try:
        yield CheckedMemory(system, memory, scenario)
    except BaseException as exc:
        try:
            suppressed = manager.__exit__(type(exc), exc, exc.__traceback__)
        except Exception as closing:
            if closing is exc or not isinstance(exc, Exception):
                raise
            exc.add_note(f"the exit of open()'s context raised too: {_shown_exception(closing)}")
            raise exc from exc.__cause__  # keeps its cause; the exit's error is the note
        if not suppressed:
            raise
    else:
        call_system(
            name, "close", manager.__exit__, (None, None, None), scenario=scenario, defined=system.open
        )


def call_system(
    system: str,
    method: str,
    function: Callable[..., R],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any] | None = None,
    *,
    scenario: str | None = None,
    query: str | None = None,
    defined: object = None,
) -> R:
    """`function(*args, **kwargs)`, the protocol method `method` (a `PROTOCOL_METHODS` key, or
    "close": the exit of open()'s context) of the system named `system`, called for `scenario`
    and `query` (None: no scenario, no query). Whatever it raises is raised as a
    MemorySystemError (see the module docstring) whose `__cause__` is the original; a
    MemorySystemError (a nested call's) and evalkit's errors that are not AdapterErrors pass as
    they are, also as the only error of an exception group (an async client's task group), and
    an AdapterError alone in a group is told by its message. `defined` is where the failing code
    is defined, named in the fix (default: `function`; the exit of a `@contextmanager` context
    names its `open`)."""
    try:
        return function(*args, **(kwargs or {}))
    except Exception as exc:
        sole = sole_evalkit_error(exc) if isinstance(exc, ExceptionGroup) else exc
        if isinstance(sole, MemorySystemError) or (
            isinstance(sole, EvalkitError) and not isinstance(sole, AdapterError)
        ):
            raise
        failed = _failure(system, method, function, args, kwargs, sole or exc, scenario, query, defined)
        raise failed from exc


def _failure(
    system: str,
    method: str,
    function: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any] | None,
    exc: Exception,
    scenario: str | None,
    query: str | None,
    defined: object,
) -> MemorySystemError:
    """The MemorySystemError telling that `function` (`method` of `system`) raised `exc` (see
    `call_system`), carrying `exc`'s notes and traceback text."""
    mismatch = _signature_mismatch(method, function, args, kwargs) if isinstance(exc, TypeError) else None
    if mismatch is not None:
        problem, fix = mismatch
    elif isinstance(exc, AdapterError):  # evalkit's HTTP or MCP adapter: its message says what to do
        problem, fix = _one_line(str(exc)).removeprefix(f"system {system!r}: "), ""
    else:
        problem, fix = _shown_exception(exc), _fix(exc, defined or function)
    error = MemorySystemError(system, method, scenario, query, problem, fix)
    error.origin = "".join(traceback.format_exception(exc))
    for note in getattr(exc, "__notes__", ()):
        error.add_note(note)
    return error


def _signature_mismatch(
    method: str, function: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any] | None
) -> tuple[str, str] | None:
    """(problem, fix) when `function`'s signature cannot take `args` and `kwargs` (the TypeError
    came from the call itself, not from inside the function), else None."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a C function: nothing to compare
        return None
    try:
        signature.bind(*args, **(kwargs or {}))
    except TypeError as exc:
        expected = protocol_signature(method)
        fix = f"define it as {expected}" if expected else "give it the signature evalkit calls it with"
        return f"{_qualified(function)}{_written_signature(function)} cannot take evalkit's call ({exc})", fix
    return None


def protocol_signature(method: str) -> str | None:
    """`method`'s signature as `evalkit.systems.base` defines it (`PROTOCOL_METHODS`), as one
    would write it: `search(self, query: str, *, top_k: int, …) -> SearchResponse`; None for a
    name the protocol does not define."""
    function = PROTOCOL_METHODS.get(method)
    if function is None:
        return None
    signature = inspect.signature(function)  # the protocol's annotations are strings (postponed)
    shown = signature.replace(
        parameters=[
            p.replace(annotation=_Written(p.annotation)) if p.annotation is not p.empty else p
            for p in signature.parameters.values()
        ],
        return_annotation=_Written(signature.return_annotation),
    )
    return f"{method}{shown}"


def _written_signature(function: Callable[..., Any]) -> inspect.Signature:
    """`function`'s signature as written: a bound method's with `self`."""
    try:
        return inspect.signature(getattr(function, "__func__", function))
    except (TypeError, ValueError):
        return inspect.signature(function)


class _Written:
    """An annotation shown as it is written (`inspect` shows an object by its repr)."""

    def __init__(self, text: object) -> None:
        self.text = str(text)

    def __repr__(self) -> str:
        return self.text


def _fix(exc: Exception, defined: object) -> str:
    """What to do about an exception of the system's own code."""
    if isinstance(exc, ConnectionError):
        return "nothing answers where it connects: start the server it needs, or fix the address it is given"
    if isinstance(exc, TimeoutError):
        return "it timed out: is the server it needs up, and not overloaded or stuck?"
    return f"fix {_qualified(defined)} ({TRACEBACK_ENV}=1 prints the traceback)"


def _qualified(function: object) -> str:
    """`module.Class.method` of a function or bound method (its class's name for anything else)."""
    target = getattr(function, "__func__", function)
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    module = getattr(target, "__module__", None)
    return f"{module}.{name}" if module else name


def _shown_exception(exc: BaseException) -> str:
    """`Type: message` of `exc` on one line, its message cut to MAX_PROBLEM characters; for an
    exception group, followed by its first few leaves, each so."""
    message = _one_line(str(exc))
    if len(message) > MAX_PROBLEM:
        message = message[: MAX_PROBLEM - 3] + "..."
    shown = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    if isinstance(exc, BaseExceptionGroup):
        shown += ": " + "; ".join(_shown_exception(leaf) for leaf in leaf_exceptions(exc)[:3])
    return shown


def _one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines included) made one space."""
    return " ".join(text.split())


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
