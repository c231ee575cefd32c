"""Interrupts and cleanup of the remote-system clients: Ctrl-C against a hanging server exits 130
within seconds, a server that crashes mid-search is reported for the search (not the cleanup),
a namespace from the server never escapes its URL segment, and the MCP server process is
stopped on every failure path.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts). Servers
are on 127.0.0.1 (or stdio children); every wait is bounded."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fastapi.responses import JSONResponse

from evalkit import run_eval
from evalkit.errors import AdapterError
from tests.fault_matrix.common import assert_refused, cli, fake_mcp_mapping, gone, run_args
from tests.processes import started as running
from tests.servers import contract_app, raw_server, serving
from tests.shared import DATASETS, ROOT


def _contract(hang: threading.Event, search_started: threading.Event, *, crash: bool = False):
    """A raw-socket contract server whose search (and DELETE) hangs until `hang` is set, or, with
    `crash`, closes the connection without an answer."""

    def send(conn: socket.socket, status: str, body: dict | None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        conn.sendall(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                     "Connection: close\r\n\r\n".encode() + data)  # fmt: skip

    def answer(conn: socket.socket, line: str) -> None:
        path = line.split(" ")[1]
        if path == "/info":
            send(conn, "200 OK", {"name": "hanging", "capabilities": []})
        elif path == "/namespaces":
            send(conn, "201 Created", {"namespace": "n1"})
        elif path.endswith(("/thoughts", "/edges")):
            send(conn, "200 OK", {"added": 0})
        elif crash:
            search_started.set()
            conn.shutdown(socket.SHUT_RDWR)
        else:
            search_started.set()
            hang.wait(30)

    return answer


def test_ctrl_c_against_a_hanging_server_exits_130_within_seconds(tmp_path: Path) -> None:
    """Ctrl-C waited for the cleanup DELETE's 60 s and then exited 2; now 130 within a few s."""
    (tmp_path / "data" / "scenarios").mkdir(parents=True)
    from tests.fault_matrix.common import TINY

    (tmp_path / "data" / "scenarios" / "tiny.yaml").write_text(TINY)
    hang, started = threading.Event(), threading.Event()
    with raw_server(_contract(hang, started)) as url:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "EVALKIT_FORBID_SKIPS": ""}
        with running(
            [sys.executable, "-m", "evalkit", *run_args("--system", url, "--out", "r.json")],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        ) as child:  # fmt: skip
            try:
                assert started.wait(60), child.communicate(timeout=5)
                signalled = time.monotonic()
                child.send_signal(signal.SIGINT)
                _, err = child.communicate(timeout=30)
                took = time.monotonic() - signalled
            finally:
                hang.set()
    assert child.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert took < 8, took  # the cleanup DELETE gets 2 s
    assert not (tmp_path / "r.json").exists()


def test_a_server_crashing_mid_search_is_reported_for_the_search() -> None:
    hang, started = threading.Event(), threading.Event()
    with raw_server(_contract(hang, started, crash=True)) as url, pytest.raises(AdapterError) as caught:
        run_eval(datasets=DATASETS, scenarios=["explicit-fact"], system=url, thresholds=None, gated=False)
    message = str(caught.value)
    assert "POST /namespaces/n1/search: the server closed the connection without a complete answer" in message
    assert "DELETE" not in message


@pytest.mark.parametrize("namespace", ["../info", "a/b", "n 1", "", "%2e%2e"])
def test_a_namespace_that_is_not_a_plain_id_is_refused(namespace: str) -> None:
    app = contract_app(lambda: JSONResponse({"hits": []}), namespace=namespace)
    with (
        serving(app) as url,
        pytest.raises(AdapterError, match=r"POST /namespaces: the server returned the namespace"),
    ):
        run_eval(datasets=DATASETS, scenarios=["explicit-fact"], system=url, thresholds=None, gated=False)


def test_an_mcp_server_crashing_mid_search_is_reported_for_the_search(ws, capsys) -> None:
    pidfile = ws / "server.pid"
    code, _, err = cli(capsys, *run_args("--system", f"mcp:{fake_mcp_mapping(ws, 'crash', pidfile)}"))
    assert_refused(code, err, "tool 'search' failed")
    assert "'drop'" not in err
    assert gone(int(pidfile.read_text()))


def test_ctrl_c_against_a_hanging_mcp_server_exits_130_and_stops_it(tmp_path: Path) -> None:
    from tests.fault_matrix.common import TINY

    (tmp_path / "data" / "scenarios").mkdir(parents=True)
    (tmp_path / "data" / "scenarios" / "tiny.yaml").write_text(TINY)
    pidfile = tmp_path / "server.pid"
    mapping = fake_mcp_mapping(tmp_path, "slow", pidfile)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EVALKIT_FORBID_SKIPS": ""}
    with running(
        [sys.executable, "-m", "evalkit", *run_args("--system", f"mcp:{mapping}")],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as child:  # fmt: skip
        deadline = time.monotonic() + 60
        while not Path(f"{pidfile}.search").exists():
            assert child.poll() is None and time.monotonic() < deadline, child.communicate(timeout=5)
            time.sleep(0.05)
        signalled = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
        took = time.monotonic() - signalled
    assert child.returncode == 130, err
    assert "Traceback" not in err and took < 10, (took, err)
    assert gone(int(pidfile.read_text()))
