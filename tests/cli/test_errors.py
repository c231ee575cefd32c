"""How the CLI reports errors (evalkit.cli.main): a memory system's failure in one line and
exit 2, on every executor; errors that reach it wrapped in exception groups."""

from __future__ import annotations

import os
import pickle
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.api import run_eval
from evalkit.cli import sole_evalkit_error
from evalkit.errors import AdapterError, MemorySystemError, UsageError
from evalkit.systems.checked import protocol_signature
from tests.shared import FIXTURES, ROOT, cli
from tests.systems_fixtures import FailingSystem

TINY = [
    "--datasets",
    str(FIXTURES / "datasets_tiny"),
    "--top-k",
    "3",
    "--thresholds",
    "none",
    "--history",
    "none",
]
"""A suite with no lint finding at top_k 3 (so a failure is the only line on stderr)."""

FIRST = "scenario 'alone', query 1 ('What is the rate limit?')"
"""The first search of that suite."""

FIRST_FACT = "scenario 'facts', query 1 ('Which port does the API listen on?')"
"""The first search of that suite for a system without the `contradiction` capability."""

TRACEBACK_HINT = "(EVALKIT_TRACEBACK=1 prints the traceback)"


@pytest.fixture
def temp_dir(tmp_path, monkeypatch) -> Path:
    """The folder this process makes its temporary directories in, for the test alone."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(folder))
    return folder


def _one_line(capsys, tmp_path, spec: str, *more: str) -> str:
    """`evalkit run --system spec` on the tiny suite: it must exit 2 with one line on stderr, returned."""
    code, _, err = cli(capsys, "run", "--system", spec, *TINY, "--out", str(tmp_path / "r.json"), *more)
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    return err.strip()


def test_a_search_whose_signature_cannot_take_the_call_is_one_line_with_the_protocol_signature(
    capsys, tmp_path, temp_dir
):
    line = _one_line(capsys, tmp_path, "tests.systems_fixtures:wrong_signature_system")
    assert line == (
        f"evalkit: error: system 'failing': search() in {FIRST}: "
        "tests.systems_fixtures._PositionalSearch.search(self, query, *, top_k) cannot take evalkit's call "
        f"(too many positional arguments); define it as {protocol_signature('search')}"
    )
    assert list(temp_dir.iterdir()) == []


def test_the_expected_signature_is_the_protocols_as_written():
    assert (
        protocol_signature("search") == "search(self, query: str, options: SearchOptions) -> SearchResponse"
    )
    assert (
        protocol_signature("open")
        == "open(self, context: OpenContext) -> AbstractContextManager[ScenarioMemory]"
    )
    assert protocol_signature("not_a_method") is None


def test_a_key_error_in_search_is_one_line_naming_the_code_to_fix(capsys, tmp_path, temp_dir):
    line = _one_line(capsys, tmp_path, "tests.systems_fixtures:missing_key_system")
    assert line == (
        f"evalkit: error: system 'failing': search() in {FIRST}: KeyError: 'limit'; "
        f"fix tests.systems_fixtures._MissingKey.search {TRACEBACK_HINT}"
    )
    assert list(temp_dir.iterdir()) == []


def test_a_failing_open_is_one_line_and_a_refused_connection_says_to_start_the_server(
    capsys, tmp_path, temp_dir
):
    line = _one_line(capsys, tmp_path, "tests.systems_fixtures:failing_open_system")
    assert line == (
        "evalkit: error: system 'failing': open() in scenario 'alone': ConnectionRefusedError: [Errno 111] "
        "Connection refused; nothing answers where it connects: start the server it needs, or fix the "
        "address it is given"
    )
    assert list(temp_dir.iterdir()) == []


def test_a_failing_close_is_one_line(capsys, tmp_path, temp_dir):
    line = _one_line(capsys, tmp_path, "tests.systems_fixtures:failing_close_system")
    assert line == (
        "evalkit: error: system 'failing': the exit of open()'s context in scenario 'alone': OSError: "
        f"the index could not be flushed; fix tests.systems_fixtures.FailingSystem.open {TRACEBACK_HINT}"
    )
    assert list(temp_dir.iterdir()) == []


def test_the_traceback_is_printed_on_request(capsys, tmp_path, temp_dir, monkeypatch):
    monkeypatch.setenv("EVALKIT_TRACEBACK", "1")
    spec = "tests.systems_fixtures:missing_key_system"
    code, _, err = cli(capsys, "run", "--system", spec, *TINY, "--out", str(tmp_path / "r.json"))
    assert code == 2
    assert err.startswith("Traceback (most recent call last):")
    assert 'return SearchResponse(hits=vars(options)["limit"])' in err
    assert err.splitlines()[-1].startswith("evalkit: error: system 'failing': search() in scenario 'alone'")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def short_temp() -> Iterator[Path]:
    """A temporary folder with a short path: the workers' forkserver puts its socket there, and
    pytest's `tmp_path` under xdist can exceed the 108 bytes of an AF_UNIX path."""
    temp = Path(tempfile.mkdtemp(prefix="ek-"))
    yield temp
    shutil.rmtree(temp, ignore_errors=True)


def _run_in_a_process(tmp_path: Path, temp: Path, spec: str, *more: str) -> subprocess.CompletedProcess[str]:
    """`evalkit run --system spec` on the tiny suite in a new process whose temporary folder is
    `temp` (so the workers' is too)."""
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT)}
    argv = ["run", "--system", spec, *TINY, "--out", str(tmp_path / "r.json"), *more]
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _refused(url: str) -> str:
    return (
        f"evalkit: error: system {url!r}: connecting: GET /info: cannot reach the server after 3 retries "
        "([Errno 111] Connection refused); start it (e.g. `evalkit serve --port PORT`) or fix the URL"
    )


def test_an_http_system_on_a_closed_port_is_one_line(capsys, tmp_path, temp_dir):
    url = f"http://127.0.0.1:{_closed_port()}"
    assert _one_line(capsys, tmp_path, url) == _refused(url)
    assert list(temp_dir.iterdir()) == []


def test_an_http_system_on_a_closed_port_is_one_line_on_workers_too(tmp_path, short_temp):
    url = f"http://127.0.0.1:{_closed_port()}"
    done = _run_in_a_process(tmp_path, short_temp, url, "--workers", "2")
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [_refused(url)]
    assert list(short_temp.iterdir()) == []


def test_a_system_failing_on_worker_processes_is_one_line_and_leaves_no_temp_store(tmp_path, short_temp):
    done = _run_in_a_process(
        tmp_path, short_temp, "tests.systems_fixtures:missing_key_system", "--workers", "2"
    )
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("evalkit: error: system 'failing': search() in scenario '")
    assert line.endswith(f"KeyError: 'limit'; fix tests.systems_fixtures._MissingKey.search {TRACEBACK_HINT}")
    assert list(short_temp.iterdir()) == []


def test_run_eval_raises_one_memory_system_error_with_its_fields_and_the_original_as_cause(temp_dir):
    with pytest.raises(MemorySystemError) as caught:
        run_eval(datasets=FIXTURES / "datasets_tiny", system=FailingSystem("key"), top_k=3, progress=False)
    error = caught.value
    assert (error.system, error.method, error.scenario, error.query) == (
        "failing",
        "search",
        "alone",
        "query 1 ('What is the rate limit?')",
    )
    assert error.problem == "KeyError: 'limit'"
    assert error.fix == f"fix tests.systems_fixtures._MissingKey.search {TRACEBACK_HINT}"
    assert isinstance(error.__cause__, KeyError)
    assert isinstance(error, AdapterError) and 'vars(options)["limit"]' in error.origin
    assert list(temp_dir.iterdir()) == []


def test_a_memory_system_error_pickles_whole_and_shows_one_line_in_a_notebook():
    error = MemorySystemError("s", "search", "sc", "query 1 ('q')", "KeyError: 'x'", "fix m.f")
    error.__cause__ = KeyError("x")
    error.origin = "Traceback ..."
    error.add_note("a second failure")
    copy = pickle.loads(pickle.dumps(error))
    assert (
        str(copy)
        == str(error)
        == "system 's': search() in scenario 'sc', query 1 ('q'): KeyError: 'x'; fix m.f"
    )
    assert (copy.fix, copy.origin, copy.__notes__) == ("fix m.f", "Traceback ...", ["a second failure"])
    assert isinstance(copy.__cause__, KeyError)
    assert copy._render_traceback_() == [f"MemorySystemError: {error}"]


def test_an_adapter_error_inside_a_task_group_is_one_line_and_exit_2(capsys, tmp_path):
    line = _one_line(capsys, tmp_path, "tests.systems_fixtures:TaskGroupFailingSystem")
    told = f"system 'async-client': search() in {FIRST_FACT}: the service answered 503 for search"
    assert line == f"evalkit: error: {told}"


def test_a_group_with_anything_else_is_one_line_too(capsys, tmp_path):
    line = _one_line(capsys, tmp_path, "tests.systems_fixtures:TaskGroupFailingTwiceSystem")
    assert line.startswith(
        f"evalkit: error: system 'async-client': search() in {FIRST_FACT}: ExceptionGroup: unhandled errors "
        "in a TaskGroup (2 sub-exceptions): AdapterError: system 'async-client': the service answered 503 "
        "for search; ValueError: a bug in the client"
    )


def test_an_error_evalkit_did_not_mean_is_exit_2_with_its_traceback(capsys, monkeypatch):
    def broken(args: object) -> int:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("evalkit.cli.summary.summary_command", broken)
    code, _, err = cli(capsys, "summary", "r.json")
    assert code == 2
    assert "Traceback (most recent call last):" in err
    assert err.splitlines()[-1].startswith("evalkit: internal error: ZeroDivisionError: a bug; this is a bug")


def test_nested_groups_are_looked_through_and_only_a_sole_evalkit_error_counts():
    error = UsageError("bad")
    assert sole_evalkit_error(ExceptionGroup("outer", [ExceptionGroup("inner", [error])])) is error
    assert sole_evalkit_error(ExceptionGroup("two", [error, UsageError("other")])) is None
    assert sole_evalkit_error(ExceptionGroup("other", [ValueError("x")])) is None
