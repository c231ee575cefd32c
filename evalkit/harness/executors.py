"""Where units of work run: here one after another, on local worker processes, on threads of
this process (scenarios in flight against a remote system), or on Ray.

An `Executor` maps a function over units of work (a scenario shard, a mutation) and yields the
results in the order of the units, whatever order they finish in; a failing unit raises its
exception when its result is reached. The runner, the benchmarks and the mutation suite only
ever call `map`, so a run is the same computation on every executor and its report is identical
(tests/harness/test_executors.py checks serial, processes and Ray against each other).

Decisions:
- Execution settings are not part of `RunConfig`: they cannot change a result (that is tested),
  so a report does not record them and re-running a report's configuration on another machine
  or cluster reproduces it. An executor is also a live resource (a pool, a Ray connection), not
  data. The API and CLI take it beside the configuration (`executor=`, `--workers`/`--executor`).
- `fn` and the units travel to the workers by pickling (cloudpickle on Ray). Systems that hold
  live resources pickle without them and reopen them in the worker: the HTTP adapter its
  connection pool, an MCP system its server (each worker starts its own; see
  `evalkit.systems.mcp.adapter`), real mode its embedding cache connection and its model (loaded
  once per worker, on one torch thread, so the similarities of vectors a worker encodes can differ
  from a serial run's in the last float32 bits; see `evalkit.embedders.sentence_transformer`). A
  system that cannot be pickled (an open file) cannot run on workers, and the executor says so
  with a UsageError before running anything.
- Local workers are never forked from the calling process: they start from multiprocessing's
  `forkserver` (`start_method`; `spawn` where there is none, i.e. Windows). A fork copies only
  the calling thread, so a lock that another thread holds at that moment (SQLite's mutex,
  malloc's, an import lock, a library's own) stays held in the worker for ever, and the worker
  deadlocks when it needs it: beside a thread working in SQLite, 6 of 20 runs of the built-in
  suite on 2 forked workers hung, a worker waiting in `sqlite3_open_v2` (50 of 300 bare forks).
  Other threads are the rule, not the exception: a Jupyter kernel's, Ray's, an in-process
  `evalkit serve`'s store thread, LanceDB's, tqdm's monitor, pytest-xdist's, and even the CLI's
  (numpy's OpenBLAS pool), so "fork when single-threaded" would almost never fork. Python 3.12
  warns at a fork from a threaded process, and 3.14 made forkserver its default on Linux.
  The forkserver is a clean process that this process starts once, when it makes its first
  `ProcessExecutor` (so that its imports overlap the caller's loading of the suite), and that
  forks every worker of every later map; it imports `FORKSERVER_PRELOAD` (the harness) first, so
  its workers start with evalkit imported, as forked ones did. What it costs, measured on this
  2-core machine (figures on the docs' benchmarks page): the first map of a process waits for
  the server's start (a fresh interpreter importing the harness), which the early start hides in
  the CLI (the built-in suite on 2 workers: 3.5 s forking or not, at load 5-6); later maps in the
  same process (a notebook, the mutation suite) start their workers as fast as fork did (0.1 s).
  A worker starts with the caller's environment as it is at `map` (`_start_worker`; the
  forkserver's dates from its start), working folder and `sys.path` (multiprocessing sends them),
  and imports afresh the modules of `fn` that are not preloaded (a user's system module). It
  does not see what the caller changed in memory: a monkeypatched function, or an evalkit
  module reloaded in a notebook after the forkserver started (restart the kernel). A script
  needs multiprocessing's usual `if __name__ == "__main__":` guard (its workers import it
  again; without the guard they die, and the error says so), and a class or function defined
  interactively (a notebook cell, the REPL: a `__main__` without a file) cannot reach the
  workers: a UsageError before anything runs (`_check_importable`), not a broken pool.
  A forkserver that this process's own code started before evalkit's first map is used as it
  is (its workers then import evalkit themselves). Units go out in chunks of about a quarter
  of a worker's share, so thousands of small scenarios do not pay one round trip each. A
  unit's error and Ctrl-C let the workers finish (and stop what they started; a worker takes
  Ctrl-C only inside a unit, `_Interruptible`, so none dies while it waits); when the
  consumer drops the iterator or a test's timeout fires, the workers get `STOP_GRACE` seconds
  and are then terminated, so a stuck worker cannot hold the caller for ever.
- A unit's EvalkitError (a memory system's failure among them) reaches the caller as the unit
  raised it, on every executor: from a local worker as the unit's result (`_Raised`), from Ray
  out of its RayTaskError (the tasks after it are cancelled); its message is the whole story,
  the worker's traceback is not added. Any other exception keeps the pool's or Ray's wrapping,
  which holds the worker's traceback.
- Scenarios in flight: a system whose calls wait on another process (an HTTP service, an MCP
  server: `evalkit.systems.base.in_flight`) spends a scenario's time waiting, not computing,
  so its scenarios run N at once on threads of this process (`ThreadExecutor`), not on worker
  processes: no process start, no pickling, one connection pool (HTTP) or one MCP session per
  slot. `for_system` makes that choice where the system is known (the runner): the same
  `--workers N` means N scenarios in flight on either, and when nobody chose (`--workers` not
  given, `executor=None`) such a system gets its own default (`in_flight`; never more than its
  scenarios, so a default never cuts a scenario into shards) while an in-process one stays
  serial. Results come back in the units' order, as from every executor. A unit's error stops
  new units from starting; the ones in flight finish (each call is bounded by the system's
  deadline) before the first failing unit's error, in units order, is raised. Ctrl-C cannot
  interrupt a call on another thread: no unit starts any more, the ones in flight get
  `INTERRUPT_GRACE` seconds to end (and drop their namespaces), and the interrupt goes on; a
  thread still waiting on a hung server is a daemon, left to its call's deadline or the
  process's exit.
- Ray: `RayExecutor` uses the Ray instance this process is connected to, or connects to
  `address` (e.g. "auto" or "ray://host:10001"; a HOST:PORT where nothing listens is a
  UsageError after `RAY_PROBE_TIMEOUT` — Ray itself retried for minutes), or starts a local
  instance with `workers` CPUs: a new one (`address="local"`), never a cluster that RAY_ADDRESS
  or Ray's `ray_current_cluster` file names (which failed with num_cpus given), shut down with
  this process. Ray 2.x on Linux advertises such a node under the machine's IP even when told
  127.0.0.1 (`resolve_ip_for_localhost`), so evalkit does not try to pin it.
  Ray workers import evalkit as installed where they run: on a cluster, install the same
  evalkit version on every node; a local instance inherits this process's environment
  (PYTHONPATH included). `ray` is the optional extra `evalkit-memory[ray]`.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import pickle
import signal
import socket
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, get_args

from evalkit.errors import EvalkitError, UsageError

T = TypeVar("T")
R = TypeVar("R")

ExecutorKind = Literal["serial", "processes", "ray"]
EXECUTORS: tuple[str, ...] = get_args(ExecutorKind)
"""Executor names for `make_executor` and the CLI's `--executor`."""


class Executor(Protocol):
    """Runs `fn` on each unit and yields the results in the units' order. `workers` is how many
    units run at once (callers use it to size their units, e.g. shards of one big scenario)."""

    @property
    def workers(self) -> int: ...

    def map(self, fn: Callable[[T], R], units: Sequence[T]) -> Iterator[R]: ...


class SerialExecutor:
    """Every unit in this process, one after another (nothing is pickled). `chosen` False: the
    serial default of `make_executor` when no worker count was given, which `for_system` turns
    into the default number of scenarios in flight of a system that waits on a service; True:
    serial because the caller said so (`--workers 1`, `make_executor("serial")`)."""

    workers = 1

    def __init__(self, chosen: bool = True) -> None:
        self.chosen = chosen

    def map(self, fn: Callable[[T], R], units: Sequence[T]) -> Iterator[R]:
        return (fn(unit) for unit in units)


class ProcessExecutor:
    """`workers` local worker processes (a pool per `map` call, closed when it ends). Making one
    starts this process's forkserver (see the module docstring), if it has none yet, so that the
    server imports the harness while the caller goes on (loading the suite, starting a system)."""

    def __init__(self, workers: int) -> None:
        self._workers = check_workers(workers)
        if start_method() == "forkserver":
            _start_forkserver()

    @property
    def workers(self) -> int:
        return self._workers

    def map(self, fn: Callable[[T], R], units: Sequence[T]) -> Iterator[R]:
        _check_picklable(fn, "the process executor", pickle.dumps)
        method = start_method()
        _check_importable(fn, method)
        if method == "forkserver":
            _start_forkserver()
        chunk = max(1, len(units) // (self._workers * 4))
        pool = ProcessPoolExecutor(
            self._workers,
            mp_context=multiprocessing.get_context(method),
            initializer=_start_worker,
            initargs=(dict(os.environ),),
        )
        try:
            for result in pool.map(_Interruptible(fn), units, chunksize=chunk):
                if isinstance(result, _Raised):
                    raise result.error
                yield result
        except (Exception, KeyboardInterrupt) as exc:  # a unit's error, Ctrl-C (the workers got it too)
            pool.shutdown(wait=True)  # each worker ends its unit and runs its Finalize callbacks
            if isinstance(exc, BrokenProcessPool):
                exc.add_note(BROKEN_POOL_HINT)
            raise
        except BaseException:  # the consumer dropped the iterator, or a test's timeout fired
            _stop_workers(pool)
            raise
        pool.shutdown(wait=True)


class ThreadExecutor:
    """`workers` units in flight on threads of this process (daemon threads started per `map`
    call), for units that wait on another process (see the module docstring). Nothing is
    pickled: every thread calls the same `fn`, which must be safe to call from several threads at
    once (the runner's `ShardRunner` over a system with `in_flight` is: one scenario per thread
    at a time). Units start in order; once one fails, none starts any more, the ones in flight
    finish, and the first failure in units order is raised. On Ctrl-C (or when the consumer
    drops the iterator) no unit starts any more and the ones in flight get `INTERRUPT_GRACE`
    seconds to end before the interrupt goes on: a call that hangs cannot be interrupted on
    another thread, and its daemon thread is left to its call's deadline or the process's exit."""

    def __init__(self, workers: int) -> None:
        self._workers = check_workers(workers)

    @property
    def workers(self) -> int:
        return self._workers

    def map(self, fn: Callable[[T], R], units: Sequence[T]) -> Iterator[R]:
        futures: list[Future[Any]] = [Future() for _ in units]
        pending = iter(enumerate(units))
        taking = threading.Lock()
        stop = threading.Event()

        def work() -> None:
            while not stop.is_set():
                with taking:
                    item = next(pending, None)
                if item is None:
                    return
                at, unit = item
                futures[at].set_running_or_notify_cancel()
                try:
                    futures[at].set_result(fn(unit))
                except BaseException as exc:
                    stop.set()  # units are taken in order: every unit before this one has started
                    futures[at].set_exception(exc)

        threads = [
            threading.Thread(target=work, name=f"evalkit-slot-{n}", daemon=True)
            for n in range(min(self._workers, len(units)))
        ]
        for thread in threads:
            thread.start()
        try:
            for future in futures:
                yield future.result()
        except Exception:  # a unit's error: the units in flight end (each call within its deadline)
            stop.set()
            for thread in threads:
                thread.join()
            raise
        except BaseException:  # Ctrl-C, or the consumer dropped the iterator
            stop.set()
            deadline = time.monotonic() + INTERRUPT_GRACE
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))
            raise
        for thread in threads:
            thread.join()


INTERRUPT_GRACE = 2.0
"""Seconds the units in flight on a `ThreadExecutor` get to end after Ctrl-C (as long as a
scenario's cleanup after a failure: `evalkit.systems.http.client.CLEANUP_TIMEOUT`)."""


def for_system(executor: Executor | None, in_flight: int, scenarios: int) -> Executor:
    """The executor that runs a suite of `scenarios` scenarios on a system that takes `in_flight`
    scenarios at once by default (0: an in-process system; see the module docstring). For a
    system that waits on a service: `ThreadExecutor` with the worker count the caller chose
    (`--workers N`: a `ProcessExecutor`, or a `SerialExecutor` chosen serial), or `in_flight` (at
    most `scenarios`) when nobody chose (`executor` None or the default `SerialExecutor`); a
    `RayExecutor` or a `ThreadExecutor` is used as it is; one in flight is `SerialExecutor` (the
    scenario in this thread, where Ctrl-C interrupts it). For an in-process system: `executor`,
    serial when None."""
    if in_flight < 1:
        return executor or SerialExecutor()
    if executor is None or (isinstance(executor, SerialExecutor) and not executor.chosen):
        count = min(in_flight, scenarios)
    elif isinstance(executor, ProcessExecutor | SerialExecutor):
        count = executor.workers
    else:
        return executor
    return ThreadExecutor(count) if count > 1 else SerialExecutor()


def start_method() -> str:
    """The multiprocessing start method of the local workers: "forkserver" where the platform has
    it (Linux, macOS), else "spawn" (Windows); never "fork". See the module docstring for why."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


FORKSERVER_PRELOAD = ("evalkit.harness.runner", "evalkit.suites.mutations")
"""What the forkserver imports once, at its start, so that its workers start with it imported:
the harness (the runner's shards and, through it, the stores, metrics and systems) and the
mutation suite. The only thread that importing them starts is OpenBLAS's pool (numpy's), which
OpenBLAS itself stops before any fork (a pthread_atfork handler; tested), so the forkserver stays
a process that is safe to fork."""

_PRELOAD_LOCK = threading.Lock()


def _start_forkserver() -> None:
    """Start multiprocessing's forkserver of this process, if it is not running, with
    `FORKSERVER_PRELOAD` added to what it imports at its start (it keeps what is listed already:
    "__main__" by default). A forkserver that this process's own code started earlier is used as
    it is. Returns at once: the server imports while this process goes on, and a worker's start
    waits for it."""
    from multiprocessing import forkserver

    with _PRELOAD_LOCK:
        listed = list(getattr(forkserver._forkserver, "_preload_modules", None) or ["__main__"])
        missing = [name for name in FORKSERVER_PRELOAD if name not in listed]
        if missing:
            forkserver.set_forkserver_preload([*listed, *missing])
        forkserver.ensure_running()


def _start_worker(environment: dict[str, str]) -> None:
    """A worker's start: the environment of the process that called `map`, at that call (a
    forked or spawned worker has it anyway; one from the forkserver would otherwise have the
    environment of the process when its forkserver started, e.g. without an
    $EVALKIT_SYSTEM_TIMEOUT set since), and Ctrl-C ignored but in a unit (`_Interruptible`)."""
    os.environ.clear()
    os.environ.update(environment)
    global _UNIT_SIGINT
    _UNIT_SIGINT = signal.signal(signal.SIGINT, signal.SIG_IGN)


_UNIT_SIGINT: Any = signal.default_int_handler
"""A worker's own SIGINT handler (KeyboardInterrupt, unless its caller ignored SIGINT), which
`_Interruptible` puts back while a unit runs."""


class _Interruptible:
    """`fn`, run in a local worker with Ctrl-C raising KeyboardInterrupt as it does in the
    caller: the unit stops, its `finally` blocks run, and the pool hands the error back. Between
    units (waiting for the next, sending a result) and while it exits (its `Finalize` callbacks
    stopping what it started, e.g. an MCP system's servers) the worker ignores Ctrl-C: the
    caller, which gets it too, ends the pool. A worker that Ctrl-C reached while it waited for
    a unit used to die there (a KeyboardInterrupt traceback on stderr), and the pool took that
    for a crash: it marked itself broken and killed the other workers with SIGTERM, so a worker
    still finishing its interrupted unit never stopped its MCP server."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def __call__(self, unit: Any) -> Any:
        signal.signal(signal.SIGINT, _UNIT_SIGINT if _UNIT_SIGINT is not None else signal.SIG_DFL)
        try:
            return self.fn(unit)
        except EvalkitError as exc:
            return _Raised(exc)
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


@dataclass(frozen=True)
class _Raised:
    """A unit's EvalkitError, sent back as its result so that the caller raises it as it was
    raised: its own pickling (a MemorySystemError's fields and cause), not the pool's, which
    would replace its `__cause__` with the worker's traceback text (an EvalkitError's message
    says all there is to say; a MemorySystemError carries its system's traceback as `origin`)."""

    error: EvalkitError


BROKEN_POOL_HINT = (
    "a worker process died. A script that runs evalkit on workers must make that call under "
    '`if __name__ == "__main__":` (the workers import the script again; its stderr then shows '
    "multiprocessing's RuntimeError about the bootstrapping phase); otherwise the worker was killed "
    "(out of memory?) or crashed: see its stderr, or run serially (--workers 1)"
)
"""The note added to a BrokenProcessPool from `ProcessExecutor.map`."""

STOP_GRACE = 10.0
"""Seconds the workers of a map that ended early get to finish their current unit and exit on
their own (running their `multiprocessing.util.Finalize` callbacks, e.g. an MCP system's server
stop) before they are terminated."""


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """End `pool` without waiting on a stuck worker: no unit starts any more; each worker gets
    `STOP_GRACE` s to finish its unit and exit, then SIGTERM, then SIGKILL after 5 s. Python 3.14
    has `terminate_workers()`; before it the workers and the pool's manager thread are reachable
    only through the pool's private attributes (unchanged since 3.9)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + STOP_GRACE
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)
        if process.is_alive():
            process.kill()
            process.join(timeout=5)
    if manager is not None:
        manager.join(timeout=5)


class RayExecutor:
    """Units as Ray tasks, one CPU each (see the module docstring for where Ray comes from).

    `address`: the cluster to connect to when this process is not connected yet (None = start
    a local instance with `workers` CPUs, or all of them when `workers` is None). `workers`
    (default: the cluster's CPU count) sizes the units; how many run at once is the cluster's
    scheduling. UsageError when `ray` is not installed.
    """

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        ray = _import_ray()
        if not ray.is_initialized():
            if address is None:  # "local": never a cluster that RAY_ADDRESS or Ray's files point to
                options = {"address": "local", "num_cpus": workers, "include_dashboard": False}
            else:
                _check_reachable(address)
                options = {"address": address}
            try:
                ray.init(log_to_driver=False, **options)
            except (ConnectionError, ValueError, RuntimeError, TimeoutError) as exc:
                where = f"the Ray cluster at {address}" if address else "a local Ray instance"
                raise UsageError(
                    f"cannot start or connect to {where} ({type(exc).__name__}: {exc}); check the address "
                    "(--executor ray:ADDRESS) or run on local processes with --workers N"
                ) from None
        self._ray = ray
        self._workers = check_workers(workers) if workers is not None else _cluster_cpus(ray)

    @property
    def workers(self) -> int:
        return self._workers

    def map(self, fn: Callable[[T], R], units: Sequence[T]) -> Iterator[R]:
        from ray import cloudpickle

        _check_picklable(fn, "the Ray executor", cloudpickle.dumps)
        task = self._ray.remote(num_cpus=1)(_call)
        shared = self._ray.put(fn)
        return self._results([task.remote(shared, unit) for unit in units])

    def _results(self, pending: list[Any]) -> Iterator[Any]:
        """The tasks' results in order. A task's EvalkitError is raised as it was raised in the
        task (Ray's RayTaskError around it holds the task's traceback), after the tasks after it
        are cancelled and collected, so that Ray logs no "unhandled error" for them."""
        from ray.exceptions import RayTaskError

        for at, ref in enumerate(pending):
            try:
                result = self._ray.get(ref)
            except Exception as exc:
                self._drop(pending[at + 1 :])
                cause = getattr(exc, "cause", None)
                if isinstance(exc, RayTaskError) and isinstance(cause, EvalkitError):
                    raise cause from cause.__cause__
                raise
            yield result

    def _drop(self, pending: list[Any]) -> None:
        """Cancel `pending` tasks (a running one gets Ctrl-C: its `finally` blocks run) and wait
        for each, its error ignored: the first failure is what the run reports."""
        for ref in pending:
            with suppress(Exception):
                self._ray.cancel(ref)
        for ref in pending:
            with suppress(Exception):
                self._ray.get(ref)


RAY_PROBE_TIMEOUT = 5.0
"""Seconds to wait for a TCP answer from a Ray address before giving up (Ray itself retries
for minutes, rewriting the address)."""


def _check_reachable(address: str) -> None:
    """UsageError when nothing accepts a TCP connection at `address` ("HOST:PORT" or
    "ray://HOST:PORT"); "auto" and other forms are left to Ray."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit() or "/" in host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=RAY_PROBE_TIMEOUT).close()
    except OSError as exc:
        raise UsageError(
            f"nothing answers at the Ray address {address} ({exc.strerror or exc}); start the cluster "
            f"there (e.g. `ray start --head --port {port}`) or fix the address of --executor"
        ) from None


def _call(fn: Callable[[T], R], unit: T) -> R:
    """A Ray task: `fn(unit)` (Ray resolves the shared `fn` from the object store)."""
    return fn(unit)


def check_workers(workers: object) -> int:
    """`workers` when it is a positive integer, else UsageError."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise UsageError(f"workers must be a positive integer, got {workers!r}")
    return workers


def make_executor(
    kind: str = "processes", workers: int | None = None, address: str | None = None
) -> Executor:
    """The executor the CLI flags name. `processes`: `workers` local processes, serial when
    `workers` is None or 1 (no pool; None is the unchosen default, which `for_system` turns into
    the system's default number of scenarios in flight for a system that waits on a service, and
    `workers` into that many scenarios in flight on threads); `serial`: one after another;
    `ray`: see `RayExecutor` (`workers` None = the cluster's CPUs). `address` goes only with
    `ray`. UsageError for an unknown kind, workers that are not a positive integer, or an
    address without Ray."""
    if kind not in EXECUTORS:
        raise UsageError(f"unknown executor {kind!r}; use one of: {', '.join(EXECUTORS)}")
    if workers is not None:
        check_workers(workers)
    if address is not None and kind != "ray":
        raise UsageError(f"an address ({address}) needs the ray executor; add --executor ray")
    if kind == "ray":
        return RayExecutor(address, workers)
    if kind == "processes" and workers and workers > 1:
        return ProcessExecutor(workers)
    return SerialExecutor(chosen=kind == "serial" or workers is not None)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(
            "the ray executor needs Ray: pip install 'evalkit-memory[ray]' (or run on local processes with "
            "--workers N)"
        ) from None
    return ray


def _cluster_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _check_importable(fn: Callable[..., Any], method: str) -> None:
    """UsageError when `fn` refers to classes or functions of an interactive `__main__` (a notebook
    cell, the REPL), which `method` ("forkserver"/"spawn") workers cannot import (a script's
    `__main__` is imported again by them, as `__mp_main__`)."""
    main = sys.modules.get("__main__")
    if main is None or getattr(main, "__file__", None):
        return
    finder = _MainFinder()
    finder.dump(fn)  # it pickles: `_check_picklable` passed
    if finder.names:
        names = ", ".join(sorted(set(finder.names)))
        raise UsageError(
            f"the process executor cannot ship this run to its workers: it uses {names}, defined "
            f"interactively (in __main__, e.g. a notebook cell), which workers started with {method!r} "
            "cannot import (workers are not forked: a fork could deadlock on a lock another thread "
            "holds). Define it in a module, or run serially (--workers 1)"
        )


class _MainFinder(pickle.Pickler):
    """A pickler that records the classes and functions of `__main__` it meets (`names`)."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO())
        self.names: list[str] = []

    def persistent_id(self, obj: Any) -> None:
        if isinstance(obj, type | types.FunctionType) and getattr(obj, "__module__", None) == "__main__":
            self.names.append(f"__main__.{obj.__qualname__}")
        return None


def _check_picklable(fn: Callable[..., Any], where: str, dumps: Callable[[Any], bytes]) -> None:
    try:
        dumps(fn)
    except Exception as exc:  # pickle raises TypeError, AttributeError, PicklingError, ...
        raise UsageError(
            f"{where} cannot ship this run to its workers ({type(exc).__name__}: {exc}); a system "
            "holding a live resource that it does not reopen in the worker (an open file, a "
            "connection) cannot be pickled: run it serially (--workers 1)"
        ) from None
