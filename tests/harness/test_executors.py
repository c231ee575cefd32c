"""Executors (evalkit.harness.executors) and the units of work they run: serial, local processes
and Ray give identical reports, in the same order, for `run`, `bench` and `mutants`."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import pickle
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import pytest
import ray
from nbclient import NotebookClient

import evalkit
from evalkit import EvalRun, MemorySystem, load_suite, run_eval
from evalkit.benchmarks import run_beir, run_locomo
from evalkit.cli import main
from evalkit.errors import MemorySystemError, UsageError
from evalkit.harness.executors import (
    ProcessExecutor,
    RayExecutor,
    SerialExecutor,
    ThreadExecutor,
    check_workers,
    for_system,
    make_executor,
    start_method,
)
from evalkit.harness.runner import plan_shards
from evalkit.scenarios.model import BUILTIN_CATEGORIES
from evalkit.suites.mutations import run_mutants
from evalkit.systems import OpenContext
from tests.harness import units
from tests.processes import started
from tests.shared import BEIR_TINY, DATASETS, LOCOMO_TINY, ROOT, comparable

THRESHOLDS = DATASETS / "thresholds.json"


def _report(run: EvalRun) -> dict[str, Any]:
    """The run's report without what legitimately differs between two runs (see `comparable`)."""
    return comparable(json.loads(run.result.model_dump_json()))


def _slow_square(n: int) -> int:
    time.sleep(0.05 * (n % 3))  # later units often finish first
    return n * n


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray instance for this module's tests (2 CPUs, no dashboard), shut down after."""
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",
    )
    try:
        yield
    finally:
        ray.shutdown()


# ------------------------------------------------------------------------------ the executors

EXECUTED = [SerialExecutor(), ProcessExecutor(2), ThreadExecutor(3)]


@pytest.mark.parametrize("executor", EXECUTED, ids=["serial", "processes", "threads"])
def test_results_come_back_in_the_order_of_the_units(executor):
    assert list(executor.map(_slow_square, list(range(9)))) == [n * n for n in range(9)]


def test_the_ray_executor_keeps_the_order_and_counts_the_cluster_cpus(local_ray):
    executor = RayExecutor()
    assert executor.workers == 2
    assert list(executor.map(_slow_square, list(range(9)))) == [n * n for n in range(9)]


def _evalkit_file(_: object) -> str:
    return evalkit.__file__


def test_ray_workers_import_the_same_evalkit_as_this_process(local_ray):
    assert list(RayExecutor().map(_evalkit_file, [0, 1])) == [evalkit.__file__] * 2


def _fail_on_three(n: int) -> int:
    if n == 3:
        raise UsageError("unit three failed")
    return n


@pytest.mark.parametrize("executor", EXECUTED, ids=["serial", "processes", "threads"])
def test_a_failing_unit_raises_its_own_error(executor):
    with pytest.raises(UsageError, match="unit three failed"):
        list(executor.map(_fail_on_three, list(range(6))))


def _system_fails_on_three(n: int) -> int:
    if n == 3:
        try:
            {}["limit"]
        except KeyError as exc:
            raise MemorySystemError("s", "search", "three", None, "KeyError: 'limit'", "fix it") from exc
    return n


@pytest.mark.parametrize("kind", ["serial", "processes", "ray"])
def test_a_units_memory_system_error_reaches_the_caller_whole(kind, request):
    executor = {"serial": SerialExecutor, "processes": lambda: ProcessExecutor(2), "ray": RayExecutor}
    if kind == "ray":
        request.getfixturevalue("local_ray")
    with pytest.raises(MemorySystemError) as caught:
        list(executor[kind]().map(_system_fails_on_three, list(range(6))))
    assert str(caught.value) == "system 's': search() in scenario 'three': KeyError: 'limit'; fix it"
    assert isinstance(caught.value.__cause__, KeyError)


def test_threads_keep_units_in_flight_at_once_and_start_none_after_a_failure():
    gate = threading.Barrier(3, timeout=30)  # passes only once three units wait at once
    started: list[int] = []

    def unit(n: int) -> int:
        started.append(n)
        if n < 3:
            gate.wait()
        if n == 4:
            raise UsageError("unit four failed")
        return n

    executor = ThreadExecutor(3)
    assert executor.workers == 3
    assert list(executor.map(unit, [0, 1, 2])) == [0, 1, 2]  # three in flight, or the barrier breaks
    started.clear()
    gate.reset()
    with pytest.raises(UsageError, match="unit four failed"):
        list(ThreadExecutor(1).map(unit, [3, 4, 5, 6, 7]))
    assert started == [3, 4]  # nothing starts after the failure


def test_threads_raise_the_first_failure_in_unit_order_not_time_order():
    later_failed = threading.Event()

    def unit(n: int) -> int:
        if n == 1:  # fails last in time, first in order
            later_failed.wait(timeout=30)
            raise UsageError("unit one failed")
        if n == 2:
            later_failed.set()
            raise UsageError("unit two failed")
        return n

    with pytest.raises(UsageError, match="unit one failed"):
        list(ThreadExecutor(3).map(unit, [0, 1, 2, 3]))


@pytest.mark.parametrize(
    ("executor", "in_flight", "scenarios", "expected", "workers"),
    [(None, 0, 15, SerialExecutor, 1), (ProcessExecutor(2), 0, 15, ProcessExecutor, 2),
     (None, 8, 15, ThreadExecutor, 8), (None, 8, 3, ThreadExecutor, 3), (None, 2, 15, ThreadExecutor, 2),
     (make_executor("processes", None), 8, 15, ThreadExecutor, 8),
     (make_executor("processes", 1), 8, 15, SerialExecutor, 1),
     (make_executor("serial"), 8, 15, SerialExecutor, 1), (None, 8, 1, SerialExecutor, 1),
     (ProcessExecutor(4), 8, 15, ThreadExecutor, 4), (ProcessExecutor(32), 2, 100, ThreadExecutor, 32)],
)  # fmt: skip
def test_workers_mean_scenarios_in_flight_on_threads_for_a_system_that_waits_on_a_service(
    executor, in_flight, scenarios, expected, workers
):
    chosen = for_system(executor, in_flight, scenarios)
    assert type(chosen) is expected and chosen.workers == workers


def test_ctrl_c_leaves_a_unit_hung_on_another_thread_after_the_grace():
    hung, release = threading.Event(), threading.Event()

    def unit(n: int) -> int:
        if n == 1:
            hung.set()
            release.wait(timeout=60)  # a call to a server that does not answer
        return n

    results = ThreadExecutor(2).map(unit, [0, 1, 2])
    assert next(results) == 0
    assert hung.wait(timeout=30)
    try:
        with pytest.raises(KeyboardInterrupt):
            results.throw(KeyboardInterrupt())  # what Ctrl-C raises in the consumer
    finally:
        release.set()


def test_ray_stays_ray_for_a_system_that_waits_on_a_service(local_ray):
    executor = RayExecutor()
    assert for_system(executor, 8, 15) is executor


def test_a_unit_that_cannot_be_pickled_is_a_usage_error_before_running():
    with pytest.raises(UsageError, match=r"cannot ship this run to its workers.*--workers 1"):
        list(ProcessExecutor(2).map(lambda n: n, [1, 2]))


def test_a_stuck_worker_is_stopped_when_the_caller_stops_reading():
    """A worker stuck in its unit held the pool's shutdown (and the test waiting on it) for ever."""
    results = ProcessExecutor(2).map(units.sleep_then_return, [0.0, 3600.0])
    assert next(results) == 0.0
    workers = multiprocessing.active_children()
    stopped = time.monotonic()
    results.close()
    assert time.monotonic() - stopped < 30
    assert not any(worker.is_alive() for worker in workers)


def test_ctrl_c_lets_every_worker_end_cleanly_also_one_waiting_for_a_unit(tmp_path):
    """Ctrl-C reaches the caller and every worker (one process group). A worker waiting for its
    next unit died there (KeyboardInterrupt in the pool's queue), the pool took that for a crash
    and killed the other workers with SIGTERM: one still cleaning up its interrupted unit never
    ran its Finalize callbacks (an MCP system's server stop), 3 of 3 times before the fix."""
    code = (
        "import sys\n"
        "from evalkit.harness.executors import ProcessExecutor\n"
        "from tests.harness import units\n"
        "if __name__ == '__main__':\n"
        "    try:\n"
        "        list(ProcessExecutor(2).map(units.interrupted_late, [(0, sys.argv[1]), (1, sys.argv[1])]))\n"
        "    except KeyboardInterrupt:\n"
        "        print('interrupted')\n"
    )
    with started(
        [sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True,
    ) as child:  # fmt: skip
        deadline = time.monotonic() + 120
        while not (tmp_path / "returned-0").exists():
            assert time.monotonic() < deadline and child.poll() is None, child.communicate()
            time.sleep(0.05)
        time.sleep(0.5)  # the worker of job 0 waits for a next unit
        os.killpg(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=120)
    workers = sorted(path.name.rsplit("-", 1)[1] for path in tmp_path.glob("job-*"))
    assert len(set(workers)) == 2, workers  # the two jobs ran on two workers
    assert sorted(path.name.split("-")[1] for path in tmp_path.glob("finalized-*")) == workers, err
    assert out == "interrupted\n" and "Traceback" not in err, err


# ------------------------------------------------------------------ how local workers start


def _within(seconds: float, call: Callable[[], Any]) -> Any:
    """`call()` on a helper thread, or AssertionError after `seconds` (the workers it started, stuck,
    are killed first, so that the pool gives up and the test leaves no process behind)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("value", call()))
        except BaseException as exc:  # reported on the test's thread
            outcome.append(("error", exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for child in multiprocessing.active_children():
            child.kill()
        thread.join(60)
        raise AssertionError(f"no result within {seconds:g} s: the workers are stuck")
    kind, value = outcome[0]
    if kind == "error":
        raise value
    return value


def test_workers_do_not_start_with_a_lock_another_thread_holds():
    """A fork copies only the calling thread: a lock another thread holds at that moment (SQLite's
    mutex, malloc's, an import lock: here `units.LOCK`) is held in the worker for ever, and a
    forked worker that needs it never comes back (every run, before workers started from the
    forkserver). The workers must return while the caller's other thread still holds the lock."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with units.LOCK:
            held.set()
            release.wait()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert held.wait(10)
    try:
        results = _within(120, lambda: list(ProcessExecutor(2).map(units.needs_the_lock, [1, 2, 3, 4])))
    finally:
        release.set()
        holder.join()
    assert results == [1, 2, 3, 4]
    assert start_method() == "forkserver"


def test_workers_see_the_environment_of_the_call(monkeypatch):
    """The forkserver (started by an earlier map) has the environment of its start; workers do not."""
    assert list(ProcessExecutor(2).map(units.environment_variable, ["HOME"])) == [os.environ.get("HOME")]
    monkeypatch.setenv("EVALKIT_TEST_SET_LATER", "yes")
    assert list(ProcessExecutor(2).map(units.environment_variable, ["EVALKIT_TEST_SET_LATER"])) == ["yes"]


def _python(code: str) -> str:
    """The output of `code` run by a fresh Python (its own forkserver) in the repo."""
    with started(
        [sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ) as child:  # fmt: skip
        out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    return out


def test_workers_start_with_the_harness_imported_and_the_forkserver_forks_safely():
    """The forkserver preloads the harness, so a worker does not import evalkit again; the one
    thread that import starts (OpenBLAS's pool) is stopped by OpenBLAS before any fork, so the
    forkserver forks as a single-threaded process (a preloaded module that kept a thread running
    would make it as unsafe to fork as the caller)."""
    out = _python(
        "import os\n"
        "from evalkit.harness.executors import FORKSERVER_PRELOAD, ProcessExecutor\n"
        "from tests.harness import units\n"
        "print(list(ProcessExecutor(2).map(units.imported, list(FORKSERVER_PRELOAD))))\n"
        "for name in FORKSERVER_PRELOAD:\n"
        "    __import__(name)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "print(len(os.listdir('/proc/self/task')))\n"
    )
    assert out.splitlines() == ["[True, True]", "1"]


_IN_A_KERNEL = """
import json, multiprocessing, os, threading
import evalkit
from evalkit.harness.executors import make_executor
from evalkit.sqlite import connect
from tests.shared import DATASETS, comparable

stop = threading.Event()

def work_in_sqlite():
    while not stop.is_set():
        connection = connect(":memory:")
        connection.execute("create table t(a)")
        connection.close()

threading.Thread(target=work_in_sqlite, daemon=True).start()
threads = len(os.listdir("/proc/self/task"))
report = lambda run: comparable(json.loads(run.result.model_dump_json()))
options = {"datasets": DATASETS, "thresholds": DATASETS / "thresholds.json", "progress": False}
serial = report(evalkit.run_eval(**options))
outcomes = []

def on_workers():
    for _ in range(8):
        run = evalkit.run_eval(executor=make_executor("processes", 2), **options)
        outcomes.append(report(run) == serial)

runner = threading.Thread(target=on_workers, daemon=True)
runner.start()
runner.join(240)
if runner.is_alive():  # stuck workers: kill them, so that the kernel can end
    for child in multiprocessing.active_children():
        child.kill()
    runner.join(60)
stop.set()
print(threads > 2, outcomes)
"""


def test_a_jupyter_kernel_runs_on_workers_beside_a_thread_in_sqlite():
    """The analysts' case: a notebook's kernel runs threads of its own, and here one more works
    in SQLite. Forked workers hung in about 1 run in 3 of this (a worker waiting for SQLite's
    mutex, copied held); every one of 8 runs must give the serial report."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    notebook.cells = [nbformat.v4.new_code_cell(_IN_A_KERNEL)]
    NotebookClient(
        notebook, timeout=540, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    printed = "".join(output.get("text", "") for output in notebook.cells[0].outputs)
    assert printed.strip() == f"True {[True] * 8}"


_UNGUARDED = """
from concurrent.futures.process import BrokenProcessPool
from evalkit.harness.executors import ProcessExecutor
from tests.harness import units
try:
    list(ProcessExecutor(2).map(units.environment_variable, ["HOME"]))
except BrokenProcessPool as exc:
    print(*exc.__notes__)
"""


def test_a_script_without_the_main_guard_is_told_why_its_workers_died(tmp_path):
    """Its workers import it again and die starting workers of their own: the error says why."""
    script = tmp_path / "unguarded.py"
    script.write_text(_UNGUARDED, encoding="utf-8")
    with started(
        [sys.executable, str(script)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ) as child:  # fmt: skip
        out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    assert out.startswith("a worker process died. A script that runs evalkit on workers must make that call")
    assert 'if __name__ == "__main__":' in out
    assert "bootstrapping phase" in err  # multiprocessing's own error, in the worker


_INTERACTIVE = """
from evalkit.harness.executors import ProcessExecutor
from evalkit.errors import UsageError
class Square:
    def __call__(self, n):
        return n * n
try:
    list(ProcessExecutor(2).map(Square(), [1, 2]))
except UsageError as exc:
    print(exc)
"""


def test_a_class_defined_interactively_cannot_reach_the_workers():
    """`python -c` has a __main__ without a file, as a notebook has: workers started from the
    forkserver cannot import its class, which is said before anything runs."""
    refused = _python(_INTERACTIVE).strip()
    assert refused.startswith("the process executor cannot ship this run to its workers: it uses __main__.")
    assert "__main__.Square, defined interactively (in __main__, e.g. a notebook cell)" in refused
    assert "which workers started with 'forkserver' cannot import (workers are not forked" in refused
    assert refused.endswith("Define it in a module, or run serially (--workers 1)")


@pytest.mark.parametrize(
    ("kind", "workers", "expected"),
    [("processes", None, SerialExecutor), ("processes", 1, SerialExecutor), ("processes", 3, ProcessExecutor),
     ("serial", 4, SerialExecutor)],
)  # fmt: skip
def test_make_executor_picks_the_executor_the_flags_name(kind, workers, expected):
    executor = make_executor(kind, workers)
    assert type(executor) is expected
    assert executor.workers == (workers if expected is ProcessExecutor else 1)


@pytest.mark.parametrize(
    ("options", "message"),
    [({"kind": "threads"}, "unknown executor 'threads'"), ({"workers": 0}, "positive integer, got 0"),
     ({"workers": True}, "positive integer, got True"), ({"address": "auto"}, "needs the ray executor")],
)  # fmt: skip
def test_make_executor_rejects_bad_settings(options, message):
    with pytest.raises(UsageError, match=message):
        make_executor(**options)


def test_check_workers_accepts_positive_integers_only():
    assert check_workers(7) == 7
    with pytest.raises(UsageError):
        check_workers(2.0)


# ------------------------------------------------------------------------------ units of work


def test_a_suite_survives_pickling_with_read_only_sources():
    suite = load_suite(DATASETS)
    copy = pickle.loads(pickle.dumps(suite))
    assert copy == suite
    with pytest.raises(TypeError):
        copy.sources["x"] = Path("y")  # type: ignore[index]


def test_a_suite_with_its_own_categories_keeps_them_through_pickling(tmp_path):
    root = tmp_path / "suite"
    shutil.copytree(DATASETS, root)
    (root / "suite.yaml").write_text(
        "categories: [" + ", ".join(("billing-facts", *BUILTIN_CATEGORIES)) + "]\n"
    )
    scenario = root / "scenarios" / "explicit-fact.yaml"
    scenario.write_text(scenario.read_text().replace("category: explicit-fact", "category: billing-facts", 1))
    suite = load_suite(root)
    copy = pickle.loads(pickle.dumps(suite))
    assert copy.categories == suite.categories == ("billing-facts", *BUILTIN_CATEGORIES)
    assert copy == suite


def test_every_scenario_is_one_shard_when_there_are_enough_of_them():
    scenarios = load_suite(DATASETS).scenarios
    plan = plan_shards(scenarios, 4)
    assert [[(s.scenario.name, s.start, s.stop) for s in shards] for shards in plan] == [
        [(sc.name, 0, len(sc.queries))] for sc in scenarios
    ]


@pytest.mark.parametrize("workers", [2, 3, 50])
def test_one_big_scenario_is_cut_into_contiguous_shards_covering_every_query(workers):
    scenario = max(load_suite(DATASETS).scenarios, key=lambda s: len(s.queries))
    [shards] = plan_shards([scenario], workers)
    assert len(shards) == min(workers, len(scenario.queries))
    assert shards[0].start == 0 and shards[-1].stop == len(scenario.queries)
    assert all(a.stop == b.start for a, b in itertools.pairwise(shards))
    assert all(s.start < s.stop for s in shards)


# ------------------------------------------------------------------------------ identical reports


@pytest.fixture(scope="module")
def serial_run() -> EvalRun:
    return run_eval(datasets=DATASETS, thresholds=THRESHOLDS)


def test_two_worker_processes_give_the_serial_report(serial_run):
    parallel = run_eval(datasets=DATASETS, thresholds=THRESHOLDS, executor=ProcessExecutor(2))
    assert _report(parallel) == _report(serial_run)


def test_the_ray_executor_gives_the_serial_report(serial_run, local_ray):
    assert _report(run_eval(datasets=DATASETS, thresholds=THRESHOLDS, executor=RayExecutor())) == _report(
        serial_run
    )


def test_a_sharded_benchmark_gives_the_serial_report():
    serial = run_beir(BEIR_TINY, ks=(3, 10), gated=True, progress=False)
    assert len(serial.result.scenarios) == 1 and len(serial.result.scenarios[0].queries) > 2
    for executor in (ProcessExecutor(2), ProcessExecutor(3)):
        sharded = run_beir(BEIR_TINY, ks=(3, 10), gated=True, progress=False, executor=executor)
        assert _report(sharded) == _report(serial)


def test_worker_shards_record_the_gate_candidates_so_the_gate_sweep_is_the_serial_one(serial_run):
    parallel = run_eval(datasets=DATASETS, thresholds=THRESHOLDS, executor=ProcessExecutor(2))
    assert parallel.result.gated is not None
    recorded = [q.gate_candidates for s in parallel.result.gated.scenarios for q in s.queries]
    assert sum(1 for c in recorded if c) > 10  # the shards sent their candidates back
    values = (0.0, 0.3, 0.4, 0.7)
    pd.testing.assert_frame_equal(parallel.gate_sweep(values), serial_run.gate_sweep(values))
    pd.testing.assert_frame_equal(parallel.gate_comparison(), serial_run.gate_comparison())


def test_locomo_conversations_run_on_workers_as_they_run_serially(local_ray):
    serial = run_locomo(LOCOMO_TINY, progress=False)
    assert _report(run_locomo(LOCOMO_TINY, progress=False, executor=RayExecutor())) == _report(serial)


def test_mutants_on_workers_give_the_serial_outcomes_in_order(local_ray):
    suite = load_suite(DATASETS)
    names = ["vector-leg-off", "control-rrf-rewritten", "bm25-leg-off"]
    serial = run_mutants(suite, evalkit.RunConfig(thresholds=THRESHOLDS), names)
    assert [o.mutation for o in serial.outcomes] == names
    for executor in (ProcessExecutor(2), RayExecutor()):
        assert (
            run_mutants(suite, evalkit.RunConfig(thresholds=THRESHOLDS), names, executor=executor) == serial
        )


def test_cli_run_on_two_workers_or_ray_writes_the_serial_report(tmp_path, capsys, local_ray):
    outputs = {}
    variants = {"serial": [], "workers": ["--workers", "2"], "ray": ["--executor", "ray"]}
    for name, flags in variants.items():
        out = tmp_path / f"{name}.json"
        code = main(
            ["run", "--datasets", str(DATASETS), "--thresholds", str(THRESHOLDS), "--out", str(out), *flags]
        )
        assert code == 0
        outputs[name] = comparable(json.loads(out.read_text()))
    assert outputs["workers"] == outputs["serial"]
    assert outputs["ray"] == outputs["serial"]
    capsys.readouterr()


def test_cli_rejects_an_unknown_executor_naming_the_forms(capsys):
    assert main(["mutants", "--executor", "rays://auto"]) == 2
    assert "unknown executor 'rays://auto'; use processes, ray" in capsys.readouterr().err


class _OpenHandle(MemorySystem):
    """A memory system holding something that cannot be pickled (an open file)."""

    name = "unpicklable"

    def __init__(self, path: Path) -> None:
        self.handle = path.open("w")

    def describe(self) -> dict[str, Any]:
        return {}

    def open(self, context: OpenContext) -> AbstractContextManager[Any]:
        raise AssertionError("never opened: the executor refuses before running")


def test_a_system_that_cannot_be_pickled_cannot_run_on_workers(tmp_path):
    system = _OpenHandle(tmp_path / "handle")
    with pytest.raises(UsageError, match="cannot ship this run"):
        run_eval(datasets=DATASETS, thresholds=THRESHOLDS, system=system, executor=ProcessExecutor(2))
    system.handle.close()


def test_cli_bench_and_mutants_take_workers(tmp_path, capsys):
    reports = []
    for flags in ([], ["--workers", "2"]):
        out = tmp_path / f"beir{len(flags)}.json"
        assert main(["bench", "beir", str(BEIR_TINY), "--k", "3", "--out", str(out), *flags]) == 0
        reports.append(comparable(json.loads(out.read_text())))
    assert reports[0] == reports[1]
    mutants = [
        "mutants",
        "--datasets",
        str(DATASETS),
        "--thresholds",
        str(THRESHOLDS),
        "--mutation",
        "vector-leg-off",
        "--workers",
        "2",
    ]
    assert main(mutants) == 0
    assert "Every mutation was caught" in capsys.readouterr().out
