"""Isolated memories of one system, by namespace: what `evalkit serve` (HTTP and MCP) keeps.

Each namespace is a fresh `system.open(workdir)` memory in its own temporary directory, created
on demand and removed on `drop` or `close` (none for a system declaring `needs_workdir = False`,
such as the reference store `evalkit serve` serves: it gets `evalkit.systems.base.NO_WORKDIR`).
Every call on a memory (open, add, search, close) goes through `run`, one at a time, on one
thread, so that SQLite connections stay in the thread that opened them:
- for a system declaring `inline_calls` (the reference store: `ReferenceSystem.inline_calls`), the
  server's event loop itself, which saves two thread hand-offs per request (a wake-up of the
  store thread, then of the loop: about a third of a request's cost beside the store's work).
  Each memory is given `watch(overdue)`: its running SQL statement stops once the request's
  deadline has passed or the server is stopping, and since that check is Python code run during
  the statement, a signal's handler runs at once too. While such a call runs, the loop answers
  nothing else: the reference store's calls are bounded (query, batch and body limits) and short;
- for any other system, a worker thread, the store thread: the event loop only waits for it
  (`await namespaces.run(...)`), so it keeps answering signals and other connections during a
  call of any length.
A server for evaluation, not for throughput.

Limits (`Limits`), so that no client can exhaust the server:
- `request_timeout`: the deadline of one call on a memory (default 60 s, the clients' own
  deadline: a batch a client would still wait for is not cut off). On the store thread, when it
  passes, the caller gets `RequestTimeout` at once and the memory is interrupted if it can be (a
  memory with an `interrupt()` method, such as the reference store's, which aborts its running
  SQLite statement); the store thread is free again as soon as the call returns. On the event loop
  (`inline_calls`), the call's next SQL statement step past the deadline stops it, and the caller
  gets `RequestTimeout` then (work between statements, such as embedding, is not cut: a call
  that finishes late without running SQL after its deadline answers normally).
- `max_namespaces`: how many may be open at once (about 140 KiB each for the reference store).
  Creating one more first drops those idle for over `idle_timeout` seconds (abandoned by a
  client that died), then raises `NamespaceLimit` when none could go.
"""

from __future__ import annotations

import asyncio
import queue
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from concurrent.futures import Executor, Future
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from evalkit.errors import UsageError
from evalkit.systems.base import NO_WORKDIR, MemorySystem, OpenContext, ScenarioMemory

T = TypeVar("T")

_SHUTTING_DOWN = "the server is shutting down; the request was stopped"


@dataclass(frozen=True)
class Limits:
    """The server's bounds (see the module docstring); the defaults are `evalkit serve`'s."""

    request_timeout: float = 60.0
    max_namespaces: int = 256
    idle_timeout: float = 600.0


class UnknownNamespace(UsageError):
    """A request named a namespace that does not exist (never created, dropped, or dropped
    after being idle for too long)."""


class NamespaceLimit(UsageError):
    """`max_namespaces` are open and none has been idle long enough to be dropped."""


class RequestTimeout(UsageError):
    """A call on a memory ran past `request_timeout`, or was stopped because the server is
    shutting down."""


class Namespaces:
    """Memories of `system` by namespace id, their calls on the store thread."""

    def __init__(self, system: MemorySystem, limits: Limits | None = None) -> None:
        self.system = system
        self.limits = limits or Limits()
        self.lock = threading.RLock()
        self._open: dict[str, ExitStack] = {}
        self._memories: dict[str, ScenarioMemory] = {}
        self._used: dict[str, float] = {}
        self._workdirs = system.needs_workdir
        self._inline = system.inline_calls
        self._thread = _StoreThread()  # started by its first call: never with `inline_calls`
        self._stopping = False
        self._deadline: float | None = None  # of the call running inline, if any

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` on the store thread or, for a system with `inline_calls`, here on the
        event loop; within `request_timeout`: RequestTimeout when it runs longer, and when the
        server is stopping (see the module docstring)."""
        if self._inline:
            return self._run_inline(fn, *args)
        future = asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)
        try:
            async with asyncio.timeout(self.limits.request_timeout):  # no task per call, as wait_for makes
                return await asyncio.shield(future)
        except TimeoutError:
            future.add_done_callback(lambda done: done.exception())  # its failure is reported here
            self.interrupt()
            raise RequestTimeout(self._took_too_long()) from None
        except Exception:
            if not self._stopping:
                raise
            raise RequestTimeout(_SHUTTING_DOWN) from None

    def _run_inline(self, fn: Callable[..., T], *args: Any) -> T:
        if self._stopping:
            raise RequestTimeout(_SHUTTING_DOWN)
        self._deadline = time.monotonic() + self.limits.request_timeout
        try:
            return fn(*args)
        except Exception:
            if self._stopping:
                raise RequestTimeout(_SHUTTING_DOWN) from None
            if self._overdue():
                raise RequestTimeout(self._took_too_long()) from None
            raise
        finally:
            self._deadline = None

    def _overdue(self) -> bool:
        """Whether the call running inline must stop (the `watch` of every inline memory)."""
        deadline = self._deadline
        return self._stopping or (deadline is not None and time.monotonic() > deadline)

    def _took_too_long(self) -> str:
        return (
            f"the request took over {self.limits.request_timeout:g} s (the server's request "
            "timeout) and was stopped; send a smaller batch or a shorter query"
        )

    def stop(self) -> None:
        """The server is shutting down: interrupt the running call (its caller gets
        RequestTimeout) so that shutdown does not wait for it."""
        self._stopping = True
        self.interrupt()

    def interrupt(self) -> None:
        """Ask every memory that can to stop its running statement (thread-safe)."""
        with self.lock:
            memories = list(self._memories.values())
        for memory in memories:
            memory.interrupt()

    def create(self, name: str | None = None) -> str:
        """Open a fresh memory under `name` (default: a random id) and return the name.
        UsageError when `name` is already open; NamespaceLimit when the cap is reached. Call it
        on the store thread (`run`)."""
        namespace = name or uuid.uuid4().hex
        with self.lock:
            if namespace in self._open:
                raise UsageError(f"namespace {namespace!r} already exists; drop it first or use another name")
            if len(self._open) >= self.limits.max_namespaces:
                self.evict_idle()
            if len(self._open) >= self.limits.max_namespaces:
                raise NamespaceLimit(
                    f"{len(self._open)} namespaces are open, the server's limit; drop the ones you no "
                    f"longer use (idle ones go after {self.limits.idle_timeout:g} s), or restart the "
                    "server with a higher --max-namespaces"
                )
            stack = ExitStack()
            try:
                workdir = NO_WORKDIR
                if self._workdirs:
                    workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evalkit-serve-")))
                memory: ScenarioMemory = stack.enter_context(self.system.open(OpenContext(workdir)))
                if self._inline:
                    memory.watch(self._overdue)
                self._memories[namespace] = memory
            except BaseException:
                stack.close()
                raise
            self._open[namespace] = stack
            self._used[namespace] = time.monotonic()
        return namespace

    def evict_idle(self) -> list[str]:
        """Drop the namespaces no call has used for over `idle_timeout` seconds; their names.
        Call it on the store thread."""
        cutoff = time.monotonic() - self.limits.idle_timeout
        with self.lock:
            idle = [name for name, used in self._used.items() if used < cutoff]
            for name in idle:
                self.drop(name)
        return idle

    def ensure(self, namespace: str) -> ScenarioMemory:
        """The memory of `namespace`, opened first if it is not open yet (MCP tools name their
        namespace in every call instead of creating one). Call it on the store thread."""
        with self.lock:
            if namespace not in self._memories:
                self.create(namespace)
            return self.get(namespace)

    def get(self, namespace: str) -> ScenarioMemory:
        """The memory of `namespace` (marked as used now); UnknownNamespace when it is not open."""
        with self.lock:
            if namespace not in self._memories:
                raise UnknownNamespace(
                    f"no namespace {namespace!r} (never created, dropped, or dropped after "
                    f"{self.limits.idle_timeout:g} s idle); create one first"
                )
            self._used[namespace] = time.monotonic()
            return self._memories[namespace]

    def drop(self, namespace: str) -> None:
        """Close `namespace` and delete its files; UnknownNamespace when it is not open. Call it
        on the store thread."""
        with self.lock:
            if namespace not in self._open:
                raise UnknownNamespace(f"no namespace {namespace!r}; create one first")
            del self._memories[namespace]
            del self._used[namespace]
            self._open.pop(namespace).close()

    def __len__(self) -> int:
        return len(self._open)

    def close(self) -> None:
        """Drop every namespace and end the store thread (server shutdown). A call still
        running is interrupted first; once it has returned (or was interrupted), the namespaces
        are dropped on the store thread, calls still queued behind them are cancelled and the
        thread is joined: none is left when `close` returns. A call that ignores the interrupt
        is waited for at most `request_timeout` (drops and join together); then the namespaces'
        files are removed from this thread and the store thread is left to end by itself when
        that call returns: a daemon (`_StoreThread`), so it holds neither the shutdown nor the
        process's exit. With `inline_calls` (no store thread) the memories are closed from this
        thread at once: a call still running on the loop stops at its next step; from a thread
        other than the loop's, the driver refuses to close their connections, which go with the
        process, and their files are removed."""
        self.interrupt()
        if self._inline:
            self._stopping = True
            self._forget_all()
            return
        deadline = time.monotonic() + self.limits.request_timeout

        def drop_all() -> None:
            with self.lock:
                for namespace in list(self._open):
                    self.drop(namespace)

        try:
            self._thread.submit(drop_all).result(timeout=self.limits.request_timeout)
        except TimeoutError:  # a call that ignores interrupts: remove the files from here
            self._forget_all()
        self._thread.shutdown(wait=False, cancel_futures=True)
        self._thread.join(max(0.0, deadline - time.monotonic()))

    def _forget_all(self) -> None:
        """Close every namespace from this thread, whatever fails (their files are removed)."""
        with self.lock:
            for stack in self._open.values():
                with suppress(Exception):
                    stack.close()
            self._open.clear()
            self._memories.clear()
            self._used.clear()


class _StoreThread(Executor):
    """The store thread of `Namespaces`: one thread, started by the first call, running the
    submitted calls in order (as `ThreadPoolExecutor(1)` did). A daemon, unlike a pool's threads,
    which the interpreter joins at exit: a call that ignores interrupts, left running by
    `Namespaces.close`, would have held the process's exit until it returned. As a pool's, the
    thread also ends once the executor is garbage (`Namespaces` never closed: `create_server`'s
    own), after the calls already submitted."""

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._shut = False
        self._garbage = weakref.finalize(self, self._calls.put, None)  # the thread holds the queue only

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Run `fn(*args, **kwargs)` after the calls already submitted; RuntimeError after shutdown."""
        future: Future[T] = Future()
        with self._lock:
            if self._shut:
                raise RuntimeError("cannot schedule new futures after shutdown")
            if self._thread is None:
                self._thread = threading.Thread(
                    target=_work, args=(self._calls,), name="evalkit-store", daemon=True
                )
                self._thread.start()
            self._calls.put((future, lambda: fn(*args, **kwargs)))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """No more calls: the thread ends after the running one (and, unless `cancel_futures`,
        the queued ones); `wait`: join it."""
        with self._lock:
            self._shut = True
            while cancel_futures:
                try:
                    call = self._calls.get_nowait()
                except queue.Empty:
                    break
                if call is not None:
                    call[0].cancel()
            self._calls.put(None)
        if wait:
            self.join()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread to end (at most `timeout` seconds); at once when it never started."""
        if self._thread is not None:
            self._thread.join(timeout)


def _work(calls: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None]) -> None:
    """The store thread: run `calls` in order until None."""
    while (call := calls.get()) is not None:
        future, fn = call
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(fn())
            except BaseException as exc:  # the caller's, as a pool's thread hands it over
                future.set_exception(exc)
        del call, future, fn  # no reference to the last call's result while idle
