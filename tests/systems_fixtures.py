"""Memory systems for the tests of the system protocol: a limited reference store and
deliberately broken adapters. Importable as `--system tests.systems_fixtures:NAME`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from evalkit import Hit, MemorySystem, ReferenceSystem, ScenarioMemory, SearchOptions, SearchResponse
from evalkit.systems.base import OpenContext

LIMITED_CAPABILITIES = frozenset({"global_thoughts", "supersession", "contradiction", "relevance_gate"})
"""Everything but recency, projects and confidence."""


class LimitedSystem(ReferenceSystem):
    """The reference store declaring no recency, no projects and no confidence signal."""

    name = "limited"
    capabilities = LIMITED_CAPABILITIES


def limited_system() -> LimitedSystem:
    return LimitedSystem()


class Wrapping(ScenarioMemory):
    """A memory over another one (`memory`): its seeding and searches pass through, and a
    subclass changes what its test needs (the search, mostly). Deletion and update do not pass
    through: a system yielding it declares neither, or its subclass defines them."""

    def __init__(self, memory: ScenarioMemory) -> None:
        self.memory = memory

    def add_thoughts(self, thoughts: Any) -> None:
        self.memory.add_thoughts(thoughts)

    def add_edges(self, edges: Any) -> None:
        self.memory.add_edges(edges)

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        return self.memory.search(query, options)


class _Rewriting(Wrapping):
    """The reference store's memory asked for `extra` more hits than top_k, whose search
    responses pass through `rewrite`."""

    def __init__(self, memory: Any, rewrite: Any, extra: int) -> None:
        super().__init__(memory)
        self._rewrite, self._extra = rewrite, extra

    def search(self, query: str, options: SearchOptions) -> Any:
        wider = replace(options, top_k=options.top_k + self._extra)
        return self._rewrite(self.memory.search(query, wider))


class RewritingSystem(MemorySystem):
    """The reference store with every search response rewritten (to inject adapter mistakes),
    optionally returning `extra` hits beyond top_k."""

    def __init__(self, rewrite: Any = lambda response: response, *, extra: int = 0) -> None:
        self.name = "rewriting"
        self._reference = ReferenceSystem()
        self._rewrite, self._extra = rewrite, extra

    def describe(self) -> dict[str, Any]:
        return {"system": self.name}

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[_Rewriting]:
        with self._reference.open(context) as memory:
            yield _Rewriting(memory, self._rewrite, self._extra)


def with_first_hit(response: SearchResponse, **changes: Any) -> SearchResponse:
    """`response` with its first hit changed."""
    first = replace(response.hits[0], **changes)
    return replace(response, hits=(first, *response.hits[1:]))


def ids_only(response: SearchResponse) -> SearchResponse:
    """`response` with every signal dropped: hits carry only their ids."""
    return SearchResponse(hits=tuple(Hit(id=h.id) for h in response.hits))


class ClosingSystem(LimitedSystem):
    """A limited system that records being closed (the API closes systems it built from a spec)."""

    built: list[ClosingSystem] = []  # noqa: RUF012 - the instances built, for the test to inspect

    def __init__(self) -> None:
        super().__init__()
        self.closed = False
        ClosingSystem.built.append(self)

    def close(self) -> None:
        self.closed = True


class SlowSystem(ReferenceSystem):
    """The reference store whose searches take `SlowSystem.seconds` (30) unless interrupted,
    like a long SQLite statement: `interrupt()` ends the wait at once (and the search raises)."""

    name = "slow"
    seconds = 30.0

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[Any]:
        with super().open(context) as memory:
            yield _Slow(memory, self.seconds)


class _Slow(Wrapping):
    def __init__(self, memory: Any, seconds: float) -> None:
        import threading

        super().__init__(memory)
        self._seconds, self._stop = seconds, threading.Event()

    def interrupt(self) -> None:
        self._stop.set()

    def search(self, query: str, options: SearchOptions) -> Any:
        if self._stop.wait(self._seconds):
            self._stop.clear()
            raise RuntimeError("interrupted")
        return self.memory.search(query, options)


class LongStatementSystem(ReferenceSystem):
    """The reference store, served on `evalkit serve`'s event loop (it declares `inline_calls`),
    whose searches run an SQL statement that never ends by itself, like a pathological query:
    only the store's `watch` (the server's deadline, its shutdown) or `interrupt` stops it."""

    name = "long-statement"
    inline_calls = True

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[Any]:
        with super().open(context) as memory:
            yield _LongStatement(memory)


class _LongStatement(Wrapping):
    def __init__(self, memory: Any) -> None:
        super().__init__(memory)
        self.watch, self.interrupt = memory.watch, memory.interrupt  # type: ignore[method-assign]

    def search(self, query: str, options: SearchOptions) -> Any:
        endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT max(x) FROM n"
        self.memory._store._conn.execute(endless).fetchone()  # type: ignore[attr-defined]
        raise AssertionError("the endless statement ended")


class _TaskGroupFailing(ScenarioMemory):
    """A memory wrapping an async client the usual way (an anyio portal): its search raises an
    AdapterError (and, when `second` is set, also a ValueError) inside a task group, so the
    error reaches the harness wrapped in an ExceptionGroup."""

    def __init__(self, second: bool) -> None:
        self._second = second

    def add_thoughts(self, thoughts: Any) -> None:
        pass

    def add_edges(self, edges: Any) -> None:
        pass

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        import anyio
        import anyio.from_thread

        from evalkit.errors import AdapterError

        async def fail_adapter() -> None:
            raise AdapterError("system 'async-client': the service answered 503 for search")

        async def fail_other() -> None:
            raise ValueError("a bug in the client")

        async def search() -> None:
            async with anyio.create_task_group() as group:
                group.start_soon(fail_adapter)
                if self._second:
                    group.start_soon(fail_other)

        with anyio.from_thread.start_blocking_portal() as portal:
            portal.call(search)
        return SearchResponse()


class TaskGroupFailingSystem(MemorySystem):
    """A system whose search fails inside a task group with one AdapterError."""

    name = "async-client"
    capabilities = frozenset[str]()
    second = False

    def describe(self) -> dict[str, Any]:
        return {"system": self.name}

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[_TaskGroupFailing]:
        yield _TaskGroupFailing(self.second)


class TaskGroupFailingTwiceSystem(TaskGroupFailingSystem):
    """The same with a second, non-evalkit error in the group."""

    second = True


class _ShuffledTiesMemory(ScenarioMemory):
    """Thoughts scored by the words they share with the query (many equal scores), ties put in a
    random order drawn afresh for every search."""

    def __init__(self, draws: Iterator[int]) -> None:
        self._words: dict[str, set[str]] = {}
        self._draws = draws

    def add_thoughts(self, thoughts: Any) -> None:
        for thought in thoughts:
            self._words[thought.id] = set(thought.content.lower().split())

    def add_edges(self, edges: Any) -> None:
        pass

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        import random

        asked = set(query.lower().split())
        rows = [(len(asked & words), id_) for id_, words in self._words.items()]
        random.Random(next(self._draws)).shuffle(rows)  # the tie-break: any order of equal scores
        rows.sort(key=lambda row: -row[0])  # stable: tied rows keep their shuffled order
        best = rows[: options.top_k]
        hits = tuple(Hit(id=id_, relevance=shared / max(1, len(asked))) for shared, id_ in best)
        return SearchResponse(hits=hits)


class ShuffledTiesSystem(MemorySystem):
    """A system that breaks ties randomly (like a vector store returning hits tied at similarity
    0.0 in any order): each search draws its tie order from a seed counter shared by all its
    memories, so two runs order their ties differently, reproducibly."""

    name = "shuffled-ties"
    capabilities = frozenset[str]()

    def __init__(self) -> None:
        import itertools

        self._draws = itertools.count(1)

    def describe(self) -> dict[str, Any]:
        return {"system": self.name}

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[_ShuffledTiesMemory]:
        yield _ShuffledTiesMemory(self._draws)


class _Quiet(ScenarioMemory):
    """A memory that takes what it is given and finds nothing (the base of the failing ones)."""

    def add_thoughts(self, thoughts: Any) -> None:
        pass

    def add_edges(self, edges: Any) -> None:
        pass

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        return SearchResponse()


class _PositionalSearch(_Quiet):
    """A search written as `search(self, query, *, top_k)`: it cannot take evalkit's call."""

    def search(self, query, *, top_k):  # type: ignore[no-untyped-def, override]
        return SearchResponse()


class _MissingKey(_Quiet):
    """A search with a bug: it looks an option up under a name the harness never sends."""

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        return SearchResponse(hits=vars(options)["limit"])


class FailingSystem(MemorySystem):
    """A system failing as `failure` says: "signature" (its search is `search(self, query, *,
    top_k)`), "key" (a KeyError in search), "open" (open raises ConnectionRefusedError) or
    "close" (the exit of open()'s context raises OSError)."""

    name = "failing"

    def __init__(self, failure: str) -> None:
        self.failure = failure

    def describe(self) -> dict[str, Any]:
        return {"system": self.name}

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[_Quiet]:
        (context.workdir / "store.db").write_text("litter")  # the runner must remove it all the same
        if self.failure == "open":
            raise ConnectionRefusedError(111, "Connection refused")
        yield {"signature": _PositionalSearch, "key": _MissingKey}.get(self.failure, _Quiet)()
        if self.failure == "close":
            raise OSError("the index could not be flushed")


def wrong_signature_system() -> FailingSystem:
    return FailingSystem("signature")


def missing_key_system() -> FailingSystem:
    return FailingSystem("key")


def failing_open_system() -> FailingSystem:
    return FailingSystem("open")


def failing_close_system() -> FailingSystem:
    return FailingSystem("close")
