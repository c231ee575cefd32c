"""`evalkit.systems.namespaces`: the store thread at shutdown (`Namespaces.close`)."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import threading
import time

import httpx
import pytest

from evalkit import ReferenceSystem
from evalkit.systems.http_server import create_app
from evalkit.systems.namespaces import Limits, Namespaces, RequestTimeout
from tests.processes import started
from tests.servers import serving
from tests.shared import ROOT


def _store_threads(before: frozenset[threading.Thread] = frozenset()) -> list[threading.Thread]:
    """The store threads alive now, but those in `before` (other tests' servers may be running)."""
    return [t for t in threading.enumerate() if t.name.startswith("evalkit-store") and t not in before]


def test_a_clean_close_leaves_no_store_thread():
    before = frozenset(_store_threads())
    namespaces = Namespaces(ReferenceSystem())
    asyncio.run(namespaces.run(namespaces.create, "a"))
    assert len(_store_threads(before)) == 1 and len(namespaces) == 1
    namespaces.close()
    assert not _store_threads(before) and len(namespaces) == 0
    with pytest.raises(RuntimeError, match="after shutdown"):
        asyncio.run(namespaces.run(len, ()))
    Namespaces(ReferenceSystem()).close()  # never used: no thread was started, none to end
    assert not _store_threads(before)


def test_the_store_thread_of_namespaces_never_closed_ends_once_they_are_garbage():
    """As a pool's thread did: `create_server(system)` keeps namespaces that nobody closes."""
    before = frozenset(_store_threads())
    namespaces = Namespaces(ReferenceSystem())
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
    with serving(create_app(ReferenceSystem())) as url:
        namespace = httpx.post(f"{url}/namespaces").json()["namespace"]
        httpx.post(f"{url}/namespaces/{namespace}/thoughts", json={"thoughts": [{"id": "a", "content": "b"}]})
        assert len(_store_threads(before)) == 1
    assert not _store_threads(before)


def test_a_call_that_ignores_the_interrupt_holds_close_for_the_request_timeout_only():
    """Such a call is left running (its files removed from the closing thread); the store thread
    ends by itself once the call returns, and nothing queued behind it runs."""
    before = frozenset(_store_threads())
    namespaces = Namespaces(ReferenceSystem(), Limits(request_timeout=0.3))
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
        "namespaces = Namespaces(ReferenceSystem(), Limits(request_timeout=0.3))\n"
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
