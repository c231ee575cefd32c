"""MCP systems on `--workers`: a copy pickles without its session, each worker starts its own
server(s), every server is stopped when the worker ends (normally, on an error, on Ctrl-C), and
the report equals the serial run's."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.errors import AdapterError
from evalkit.systems.mcp.adapter import McpSystem
from tests.shared import DATASETS, cli, comparable_file

REFERENCE = DATASETS / "mcp" / "reference.toml"


LINGER = (
    "import subprocess, sys, time; subprocess.run([sys.executable, '-m', 'evalkit', 'serve', '--mcp']); "
    "time.sleep(120)"
)
"""The reference server behind a process that outlives its stdin by two minutes (as a server with
other threads may): only evalkit stopping it (SIGTERM after its stdin closes) ends it in time."""


def _reference_in(folder: Path) -> Path:
    """`mcp:reference`'s mapping with its server started in `folder` (so its processes can be
    found by their working folder), behind `LINGER`."""
    folder.mkdir(exist_ok=True)
    text = REFERENCE.read_text(encoding="utf-8").replace(
        'inherit_env = ["PYTHONPATH"]', f'inherit_env = ["PYTHONPATH"]\ncwd = {json.dumps(str(folder))}'
    )
    text = text.replace('args = ["-m", "evalkit", "serve", "--mcp"]', f"args = ['-c', {json.dumps(LINGER)}]")
    assert LINGER in text
    path = folder.parent / "reference-here.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _servers_in(folder: Path) -> list[int]:
    """The processes whose working folder is `folder` (the mapping's servers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == folder:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _gone(folder: Path, seconds: float = 10.0) -> list[int]:
    """The servers still running in `folder` after waiting up to `seconds` for them to exit."""
    deadline = time.monotonic() + seconds
    while (left := _servers_in(folder)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


SLOW_START = (
    "import subprocess, sys; subprocess.run([sys.executable, '-c', "
    '\'import time; time.sleep(60); import runpy; runpy.run_module("evalkit", run_name="__main__")\', '
    "'serve', '--mcp']); import time; time.sleep(120)"
)
"""A wrapper (as npx or uvx are) whose server takes a minute to start, as a server importing its
code on a loaded machine may: it reads its stdin, and sees it closed, only after that."""


def test_a_server_stopped_while_it_starts_is_stopped_with_its_wrapper(tmp_path, monkeypatch):
    """Stopping the wrapper alone (SIGTERM) left the starting server running until it first read
    its closed stdin (a minute here; over the 10 s the tests wait, under load): evalkit signals
    the server's whole process group."""
    mapping = _reference_in(tmp_path / "srv")
    text = mapping.read_text(encoding="utf-8")
    mapping.write_text(text.replace(json.dumps(LINGER), json.dumps(SLOW_START)), encoding="utf-8")
    monkeypatch.setenv("EVALKIT_SYSTEM_TIMEOUT", "3")
    with pytest.raises(AdapterError, match="cannot start or reach the MCP server"):
        McpSystem.from_mapping(mapping)  # no handshake within 3 s: the session is closed
    left = _gone(tmp_path / "srv")
    for pid in left:  # this test's own leftovers, if it fails
        os.kill(pid, signal.SIGKILL)
    assert left == []


ORPHANING = (
    "import runpy, subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], "
    "stdin=subprocess.DEVNULL); sys.argv = ['evalkit', 'serve', '--mcp']; "
    "runpy.run_module('evalkit', run_name='__main__')"
)
"""The reference server, having started a child that it neither waits for nor stops (it exits at
once when its stdin closes; the child sleeps on in its process group)."""


def test_what_a_server_left_running_in_its_group_is_stopped_with_it(tmp_path):
    mapping = _reference_in(tmp_path / "srv")
    text = mapping.read_text(encoding="utf-8")
    mapping.write_text(text.replace(json.dumps(LINGER), json.dumps(ORPHANING)), encoding="utf-8")
    system = McpSystem.from_mapping(mapping)
    assert len(_servers_in(tmp_path / "srv")) == 2  # the server and the child it left
    system.close()
    left = _gone(tmp_path / "srv", seconds=5.0)
    for pid in left:  # this test's own leftovers, if it fails
        os.kill(pid, signal.SIGKILL)
    assert left == []


def test_a_pickled_copy_drops_its_session_and_shares_this_processes_server(tmp_path):
    system = McpSystem.from_mapping(_reference_in(tmp_path / "srv"))
    try:
        state = system.__getstate__()
        assert "_state" not in state  # the session and the seed map stay in this process
        running = _servers_in(tmp_path / "srv")
        copy = pickle.loads(pickle.dumps(system))
        assert copy.call("info", {}) == system.call("info", {})
        assert _servers_in(tmp_path / "srv") == running  # a copy in the same process: the same server
        copy.seeded("alpha", ["a1"])
        assert system.seeders("a1") == ["alpha"]
    finally:
        system.close()
    assert _gone(tmp_path / "srv") == []


COUNTED = (
    "import runpy, sys; open(sys.argv[1], 'a').write('started\\n'); "
    "sys.argv = ['evalkit', 'serve', '--mcp']; runpy.run_module('evalkit', run_name='__main__')"
)
"""The reference server, writing a line to the file named by its argument as it starts."""


def test_scenarios_in_flight_each_get_a_server_and_give_the_serial_report(tmp_path, capsys):
    mapping = _reference_in(tmp_path / "srv")
    log = tmp_path / "started.log"
    text = mapping.read_text(encoding="utf-8")
    counted = f"args = ['-c', {json.dumps(COUNTED)}, {json.dumps(str(log))}]"
    mapping.write_text(text.replace(f"args = ['-c', {json.dumps(LINGER)}]", counted), encoding="utf-8")
    reports, started = {}, {}
    for name, extra in (("serial", ["--workers", "1"]), ("three", ["--workers", "3"]), ("default", [])):
        log.write_text("")
        out = tmp_path / f"{name}.json"
        argv = ["run", "--system", f"mcp:{mapping}", *extra, "--out", str(out), "--history", "none"]
        code, _, err = cli(capsys, *argv)
        assert code == 0, err
        reports[name] = comparable_file(out)
        started[name] = len(log.read_text().splitlines())
        assert _gone(tmp_path / "srv") == []  # every server stopped
    assert reports["three"] == reports["serial"] and reports["default"] == reports["serial"]
    assert started["serial"] == 1  # one server, one scenario after another
    assert 1 < started["three"] <= 3  # a server process per scenario in flight
    assert started["default"] == min(8, os.cpu_count() or 1)  # IN_FLIGHT_PROCESSES


def test_server_memory_on_two_workers_gives_the_serial_report(tmp_path, capsys):
    reports = {}
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.json"
        code, _, err = cli(
            capsys, "run", "--system", "mcp:server-memory", "--workers", workers, "--out", str(out),
            "--history", "none",
        )  # fmt: skip
        assert code == 1, err  # its FAIL verdict (no whole question is a substring), the same on both
        reports[workers] = comparable_file(out)
    assert reports["2"] == reports["1"]


def test_a_failing_worker_stops_its_server(tmp_path, capsys):
    mapping = _reference_in(tmp_path / "srv")
    text = mapping.read_text(encoding="utf-8")
    mapping.write_text(text.replace('hits = "hits"', 'hits = "no-such-key"', 1), encoding="utf-8")
    code, _, err = cli(capsys, "run", "--system", f"mcp:{mapping}", "--workers", "2", "--history", "none")
    assert code == 2, err  # the workers' first search fails
    assert "no 'no-such-key' in the result" in err
    assert _gone(tmp_path / "srv") == []


def test_ctrl_c_stops_the_servers_of_every_worker(tmp_path):
    mapping = _reference_in(tmp_path / "srv")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), *sys.path])}
    run = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "run", "--system", f"mcp:{mapping}", "--workers", "2",
         "--out", str(tmp_path / "r.json"), "--history", "none"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while len(_servers_in(tmp_path / "srv")) < 4 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # the run's own server and at least one worker's (2 processes each)
        assert run.poll() is None, "the run ended before its workers started their servers"
        os.killpg(run.pid, signal.SIGINT)  # Ctrl-C reaches the run and its workers, not the servers
        run.wait(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    assert _gone(tmp_path / "srv") == []


def test_a_copy_reports_a_server_that_cannot_start_in_its_process(tmp_path):
    system = McpSystem.from_mapping(_reference_in(tmp_path / "srv"))
    copy = pickle.loads(pickle.dumps(system))
    system.close()
    copy.mapping = copy.mapping.model_copy(
        update={"server": copy.mapping.server.model_copy(update={"args": ["-c", "raise SystemExit(3)"]})}
    )
    with pytest.raises(AdapterError, match="cannot start or reach the MCP server"):
        copy.call("info", {})  # the copy starts its server on first use: this one exits at once


def test_tmpdir_is_a_new_folder_per_run_wide_server_removed_when_it_stops(tmp_path):
    mapping = _reference_in(tmp_path / "srv")
    mapping.write_text(
        mapping.read_text().replace(f"cwd = {json.dumps(str(tmp_path / 'srv'))}", 'cwd = "{tmpdir}"')
    )
    system = McpSystem.from_mapping(mapping)
    [first] = [slot.tmpdir for slot in system._state.slots]
    assert first is not None and first.is_dir() and _servers_in(first)  # the server runs in it
    with system._run_session(), system._run_session():  # two scenarios in flight: a second server
        folders = [slot.tmpdir for slot in system._state.slots]
    assert len(folders) == 2 and folders[0] == first and folders[1] != first
    assert folders[1] is not None and _servers_in(folders[1])  # each server in a folder of its own
    system.close()
    for folder in folders:
        assert not folder.exists()
        assert _gone(folder) == []
    process = mapping.read_text().replace('strategy = "namespace"', 'strategy = "process"')
    mapping.write_text(process.replace('argument = "namespace"\n', ""))
    with pytest.raises(AdapterError, match=r"\{tmpdir\} is the folder of a run-wide server.*use \{workdir\}"):
        McpSystem.from_mapping(mapping)
