"""`evalkit.systems.namespaces`, the memories `evalkit serve` keeps: where their calls run (the
event loop for a system with `inline_calls`, else the store thread), the deadline and the shutdown
of a call run on the loop, closing from another thread, and the store thread at shutdown
(`Namespaces.close`)."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from evalkit import ReferenceSystem, Thought
from evalkit.systems.base import OpenContext, SearchOptions
from evalkit.systems.http.server import create_app
from evalkit.systems.namespaces import Limits, Namespaces, RequestTimeout
from tests.processes import started
from tests.servers import serving
from tests.shared import ROOT
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
            on(lambda: memory.search("cache", SearchOptions(recency_half_life_days=30.0, **options)))
        )
        assert [hit.id for hit in found.hits] == ["a"]
        await namespaces.run(on(namespaces.drop), name)
        return threading.get_ident(), ran_on

    return asyncio.run(calls())


class _OwnOpen(ReferenceSystem):
    """A system built on the reference store with an `open` of its own (it wraps the memory)."""

    name = "own-open"

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[Any]:
        with super().open(context) as memory:
            yield memory


def test_the_reference_stores_calls_run_on_the_event_loop_any_other_systems_on_the_store_thread():
    assert ReferenceSystem().inline_calls and not _OwnOpen().inline_calls
    for system, inline in [(ReferenceSystem(), True), (_OwnOpen(), False)]:
        before = frozenset(_store_threads())
        namespaces = Namespaces(system)
        try:
            loop, ran_on = _seed_and_search(namespaces)
            started_one = bool(_store_threads(before))
        finally:
            namespaces.close()
        assert len(ran_on) == 1
        assert (ran_on == {loop}) is inline and started_one is not inline, system.name


def _endless_search(limits: Limits | None = None) -> tuple[Namespaces, Any]:
    namespaces = Namespaces(LongStatementSystem(), limits)
    memory = namespaces.get(namespaces.create())
    return namespaces, lambda: memory.search("anything", SearchOptions(top_k=5, now=datetime.now(UTC)))


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


# --- the store thread at shutdown (a system served from it) ---------------------------------------


def _store_threads(before: frozenset[threading.Thread] = frozenset()) -> list[threading.Thread]:
    """The store threads alive now, but those in `before` (other tests' servers may be running)."""
    return [t for t in threading.enumerate() if t.name.startswith("evalkit-store") and t not in before]


def test_a_clean_close_leaves_no_store_thread():
    before = frozenset(_store_threads())
    namespaces = Namespaces(_OwnOpen())
    asyncio.run(namespaces.run(namespaces.create, "a"))
    assert len(_store_threads(before)) == 1 and len(namespaces) == 1
    namespaces.close()
    assert not _store_threads(before) and len(namespaces) == 0
    with pytest.raises(RuntimeError, match="after shutdown"):
        asyncio.run(namespaces.run(len, ()))
    Namespaces(_OwnOpen()).close()  # never used: no thread was started, none to end
    assert not _store_threads(before)


def test_the_store_thread_of_namespaces_never_closed_ends_once_they_are_garbage():
    """As a pool's thread did: `create_server(system)` keeps namespaces that nobody closes."""
    before = frozenset(_store_threads())
    namespaces = Namespaces(_OwnOpen())
    asyncio.run(namespaces.run(len, ()))
    (thread,) = _store_threads(before)
    del namespaces
    gc.collect()
    thread.join(10)
    assert not thread.is_alive()


def test_an_in_process_evalkit_serve_leaves_no_store_thread_once_stopped():
    """The server in a thread, as tests and notebook users run it: stopped cleanly, it drops its
    namespaces and its store thread is gone as soon as the server's thread has ended."""
    before = frozenset(_store_threads())
    with serving(create_app(_OwnOpen())) as url:
        namespace = httpx.post(f"{url}/namespaces").json()["namespace"]
        httpx.post(f"{url}/namespaces/{namespace}/thoughts", json={"thoughts": [{"id": "a", "content": "b"}]})
        assert len(_store_threads(before)) == 1
    assert not _store_threads(before)


def test_a_call_that_ignores_the_interrupt_holds_close_for_the_request_timeout_only():
    """Such a call is left running (its files removed from the closing thread); the store thread
    ends by itself once the call returns, and nothing queued behind it runs."""
    before = frozenset(_store_threads())
    namespaces = Namespaces(_OwnOpen(), Limits(request_timeout=0.3))
    release, ran = threading.Event(), []

    async def stuck() -> None:
        await namespaces.run(namespaces.create, "a")
        with pytest.raises(RequestTimeout):
            await namespaces.run(release.wait, 30)  # ignores interrupt(): only `release` ends it
        namespaces._thread.submit(ran.append, "queued behind it")

    asyncio.run(stuck())
    began = time.monotonic()
    namespaces.close()
    assert time.monotonic() - began < 5 and len(namespaces) == 0
    (thread,) = _store_threads(before)
    assert thread.daemon and thread.is_alive()
    release.set()
    thread.join(10)
    assert not thread.is_alive() and ran == []


def test_a_call_that_ignores_the_interrupt_does_not_hold_the_process_exit(tmp_path):
    """A pool's thread is joined at the interpreter's exit: the process used to wait for the
    stuck call to return (here 60 s) after `close` had given up on it."""
    script = (
        "import asyncio, time\n"
        "from evalkit import ReferenceSystem\n"
        "from evalkit.systems.namespaces import Limits, Namespaces\n"
        "class Threaded(ReferenceSystem):  # served from the store thread\n"
        "    inline_calls = False\n"
        "namespaces = Namespaces(Threaded(), Limits(request_timeout=0.3))\n"
        "async def main():\n"
        "    try:\n"
        "        await namespaces.run(time.sleep, 60)\n"
        "    except Exception as exc:\n"
        "        print(type(exc).__name__, flush=True)\n"
        "asyncio.run(main())\n"
        "namespaces.close()\n"
        "print('closed', flush=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    began = time.monotonic()
    with started(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, stdout=subprocess.PIPE, text=True
    ) as child:
        out, _ = child.communicate(timeout=30)
    assert child.returncode == 0 and out.split() == ["RequestTimeout", "closed"]
    assert time.monotonic() - began < 20
