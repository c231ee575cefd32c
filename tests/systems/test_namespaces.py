"""`Namespaces`, the memories `evalkit serve` keeps: where their calls run (the event loop for a
system with `inline_calls`, else the store thread), the deadline and the shutdown of a call run
on the loop, and closing from another thread."""

from __future__ import annotations

import asyncio
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from evalkit import ReferenceSystem, Thought
from evalkit.systems.namespaces import Limits, Namespaces, RequestTimeout
from tests.systems_fixtures import LongStatementSystem

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _seed_and_search(namespaces: Namespaces) -> tuple[int, set[int]]:
    """Create, seed and search a namespace through `run` on a fresh event loop: the loop's
    thread and the threads each call ran on."""

    async def calls() -> tuple[int, set[int]]:
        ran_on: set[int] = set()

        def on(fn: Any) -> Any:
            def call(*args: Any) -> Any:
                ran_on.add(threading.get_ident())
                return fn(*args)

            return call

        name = await namespaces.run(on(namespaces.create))
        memory = namespaces.get(name)
        await namespaces.run(on(memory.add_thoughts), [Thought(id="a", content="the cache is Redis")])
        options = dict(top_k=5, project=None, min_relevance=0.0, recency_weight=0.0, now=NOW)
        found = await namespaces.run(
            on(lambda: memory.search("cache", recency_half_life_days=30.0, **options))
        )
        assert [hit.id for hit in found.hits] == ["a"]
        await namespaces.run(on(namespaces.drop), name)
        return threading.get_ident(), ran_on

    return asyncio.run(calls())


class _OwnOpen(ReferenceSystem):
    """A system built on the reference store with an `open` of its own (it wraps the memory)."""

    name = "own-open"

    @contextmanager
    def open(self, workdir: Path) -> Iterator[Any]:
        with super().open(workdir) as memory:
            yield memory


def test_the_reference_stores_calls_run_on_the_event_loop_any_other_systems_on_the_store_thread():
    assert ReferenceSystem().inline_calls and not _OwnOpen().inline_calls
    for system, inline in [(ReferenceSystem(), True), (_OwnOpen(), False)]:
        namespaces = Namespaces(system)
        try:
            loop, ran_on = _seed_and_search(namespaces)
        finally:
            namespaces.close()
        assert len(ran_on) == 1
        assert (ran_on == {loop}) is inline, system.name


def _endless_search(limits: Limits | None = None) -> tuple[Namespaces, Any]:
    namespaces = Namespaces(LongStatementSystem(), limits)
    memory = namespaces.get(namespaces.create())
    return namespaces, lambda: memory.search("anything")


def test_a_call_on_the_loop_past_the_deadline_is_stopped_in_its_sql_statement():
    namespaces, search = _endless_search(Limits(request_timeout=0.3))
    started = time.monotonic()
    try:
        with pytest.raises(RequestTimeout, match=r"took over 0\.3 s \(the server's request timeout\)"):
            asyncio.run(namespaces.run(search))
        assert time.monotonic() - started < 10
        assert asyncio.run(namespaces.run(lambda: "next")) == "next"  # the next call has its own deadline
    finally:
        namespaces.close()


def test_stop_from_another_thread_ends_the_call_on_the_loop_and_refuses_the_next():
    namespaces, search = _endless_search()  # the default deadline, 60 s
    stopper = threading.Timer(0.3, namespaces.stop)
    stopper.start()
    started = time.monotonic()
    try:
        with pytest.raises(RequestTimeout, match="the server is shutting down"):
            asyncio.run(namespaces.run(search))
        assert time.monotonic() - started < 10
        with pytest.raises(RequestTimeout, match="the server is shutting down"):
            asyncio.run(namespaces.run(namespaces.create))
    finally:
        stopper.join()
        namespaces.close()


def test_closing_from_another_thread_than_the_loops_removes_every_namespace_and_its_folder(
    tmp_path, monkeypatch
):
    """The MCP server closes its namespaces from the main thread, its loop runs on another one."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    namespaces = Namespaces(LongStatementSystem())  # a folder per namespace (needs_workdir)
    for _ in range(3):
        asyncio.run(namespaces.run(namespaces.create))
    assert len(list(tmp_path.glob("evalkit-serve-*"))) == 3
    closer = threading.Thread(target=namespaces.close)
    closer.start()
    closer.join(30)
    assert not closer.is_alive() and len(namespaces) == 0
    assert list(tmp_path.glob("evalkit-serve-*")) == []
