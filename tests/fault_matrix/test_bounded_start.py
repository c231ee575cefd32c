"""Bounded start: a system that never answers, or dies, at start fails the run with one line
naming the server, the step that did not answer and the setting that raises the deadline, and no
process it started outlives evalkit, whatever ends it (an error, SIGTERM, even SIGKILL).

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts). MCP
servers are `mcp_fake.py` stdio children or URLs on 127.0.0.1; deadlines are set short by the
test and only the outcome is asserted."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.fault_matrix.common import TINY, assert_refused, cli, fake_mcp_mapping, gone, run_args
from tests.processes import started
from tests.shared import ROOT


def _wait_for(path: Path, child: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists() or not path.read_text():
        assert child.poll() is None and time.monotonic() < deadline, child.communicate(timeout=5)
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("mode", "step"), [("hang", "initialize"), ("hang-list", "tools/list"), ("thread", "initialize")]
)
def test_a_server_that_never_answers_the_handshake_names_the_step_and_is_stopped(
    ws, capsys, monkeypatch, mode, step
):
    """It held `evalkit run` for the whole default deadline (120 s) and outlived it."""
    monkeypatch.setenv("EVALKIT_SYSTEM_TIMEOUT", "1")
    pidfile = ws / "server.pid"
    code, _, err = cli(capsys, *run_args("--system", f"mcp:{fake_mcp_mapping(ws, mode, pidfile)}"))
    assert_refused(
        code, err, "system 'fake' (MCP", "(no answer within 1 s)", f"it did not answer '{step}'",
        "$EVALKIT_SYSTEM_TIMEOUT",
    )  # fmt: skip
    assert len(err.strip().splitlines()) == 1, err
    assert gone(int(pidfile.read_text()))


def test_the_default_start_deadline_is_well_under_the_call_deadline():
    from evalkit.systems import client_limits

    assert client_limits.MCP_START_TIMEOUT < client_limits.MCP_TIMEOUT


def test_a_server_exiting_at_start_names_its_status_not_an_exception_group(ws, capsys):
    code, _, err = cli(capsys, *run_args("--system", f"mcp:{fake_mcp_mapping(ws, 'exit')}"))
    assert_refused(code, err, "the server exited with status 3 before answering 'initialize'")
    assert "ExceptionGroup" not in err and "TaskGroup" not in err


def test_a_url_on_a_closed_port_names_the_url(ws, capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    mapping = fake_mcp_mapping(ws, "ok")
    text = mapping.read_text()
    start, end = text.index("command ="), text.index("[namespace]")
    mapping.write_text(text[:start] + f'url = "{url}"\n' + text[end:])
    code, _, err = cli(capsys, *run_args("--system", f"mcp:{mapping}"))
    assert_refused(code, err, f"cannot connect to {url}")
    assert "ExceptionGroup" not in err


@pytest.mark.parametrize(
    ("setting", "needles"),
    [
        ('cwd = "no-such-folder"\n', ["[server] cwd 'no-such-folder' is not a folder"]),
        ('command = "no-such-server-command"\n', ["[server] command 'no-such-server-command' is not found"]),
    ],
)
def test_a_missing_cwd_or_command_is_named_before_anything_starts(ws, capsys, setting, needles):
    """A missing cwd read as a missing command (FileNotFoundError)."""
    mapping = fake_mcp_mapping(ws, "ok")
    lines = mapping.read_text().splitlines(keepends=True)
    key = setting.split(" ")[0]
    lines = [line for line in lines if not line.startswith(f"{key} =")]
    lines.insert(lines.index("[server]\n") + 1, setting)
    mapping.write_text("".join(lines))
    code, _, err = cli(capsys, *run_args("--system", f"mcp:{mapping}"))
    assert_refused(code, err, *needles)


def _evalkit_against_a_hanging_server(folder: Path, mode: str):
    (folder / "data" / "scenarios").mkdir(parents=True)
    (folder / "data" / "scenarios" / "tiny.yaml").write_text(TINY)
    pidfile = folder / "server.pid"
    mapping = fake_mcp_mapping(folder, mode, pidfile)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EVALKIT_FORBID_SKIPS": ""}
    argv = [sys.executable, "-m", "evalkit", *run_args("--system", f"mcp:{mapping}")]
    popen = {"cwd": folder, "env": env, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    return pidfile, argv, popen


@pytest.mark.parametrize(("signum", "expected"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_the_handshake_stops_the_server(tmp_path, signum, expected):
    pidfile, argv, popen = _evalkit_against_a_hanging_server(tmp_path, "hang")
    with started(argv, **popen) as child:
        _wait_for(pidfile, child)
        child.send_signal(signum)
        _, err = child.communicate(timeout=60)
    assert child.returncode == expected, err
    assert "Traceback" not in err
    assert gone(int(pidfile.read_text()))


def test_a_killed_evalkit_leaves_no_server_behind(tmp_path):
    """SIGKILL runs no clean-up: the kernel ends the server with evalkit (it ran on, orphaned)."""
    pidfile, argv, popen = _evalkit_against_a_hanging_server(tmp_path, "hang")
    with started(argv, **popen) as child:
        _wait_for(pidfile, child)
        child.kill()
        child.wait(timeout=30)
    assert gone(int(pidfile.read_text()))


_INTERRUPTED_START = """
import sys, tempfile
import pgserver.postgres_server as server
from evalkit.cli.signals import Terminated
from evalkit.systems.stores.pgvector import PgvectorSystem

tempfile.tempdir = sys.argv[1]
real = server.pg_ctl

def interrupted(*args, **kwargs):  # the postmaster is up when the signal lands
    real(*args, **kwargs)
    raise {signal}

server.pg_ctl = interrupted
try:
    PgvectorSystem().url()
except BaseException as exc:
    print(type(exc).__name__)
"""


@pytest.mark.parametrize("interrupt", ["KeyboardInterrupt", "Terminated(15)"])
def test_an_interrupted_private_postgres_start_leaves_no_folder_or_process(interrupt):
    """Ctrl-C or SIGTERM (`Terminated`) while pgserver starts left `evalkit-pg-*` (24-38 MB) in
    the temp folder and its postmaster running. (A folder under /tmp, not pytest's tmp_path: run
    as root, pgserver runs PostgreSQL as its own user, who cannot enter pytest's folders.)"""
    import psutil

    folder = tempfile.mkdtemp(prefix="evalkit-test-pg-start-")
    try:
        os.chmod(folder, 0o755)
        script = _INTERRUPTED_START.replace("{signal}", interrupt)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", script, folder],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.stdout.strip() == interrupt.split("(")[0], done.stderr
        assert os.listdir(folder) == [], "the private server's folder was left behind"
        assert not [
            p for p in psutil.process_iter(attrs=["cmdline"]) if folder in " ".join(p.info["cmdline"] or ())
        ]
        assert "Traceback" not in done.stderr, done.stderr
    finally:
        shutil.rmtree(folder, ignore_errors=True)
