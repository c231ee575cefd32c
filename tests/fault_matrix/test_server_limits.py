"""Server limits (`evalkit serve`, HTTP and MCP; loopback only):
one request cannot stop the server, no input gives a 500, bodies, namespaces and half-open
connections are bounded, signals end it with 130/143, and the OpenAPI document tells the truth.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts). Slow
cases use small bounds set by the test (`Limits`, `max_body_bytes`, the header timeout)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit import ReferenceSystem
from evalkit.cli import main
from evalkit.memory.fts_query import MAX_FTS_TERMS, fts_terms
from evalkit.systems.http.server import create_app, header_timeout_protocol
from evalkit.systems.http.wire import MAX_QUERY_CHARS, MAX_QUERY_TERMS
from evalkit.systems.namespaces import Limits
from tests.fault_matrix.common import assert_refused
from tests.processes import read_line, started
from tests.servers import serving
from tests.shared import ROOT
from tests.systems_fixtures import LongStatementSystem, SlowSystem

NOW = "2026-01-01T00:00:00Z"


def _search(url: str, namespace: str, query: str, **extra: object) -> httpx.Response:
    body = {"query": query, "top_k": 5, "now": NOW, **extra}
    return httpx.post(f"{url}/namespaces/{namespace}/search", json=body, timeout=30)


@pytest.fixture(scope="module")
def reference_url():
    with serving(create_app(ReferenceSystem())) as url:
        yield url


def _namespace(url: str) -> str:
    return str(httpx.post(f"{url}/namespaces").json()["namespace"])


# --- case 1: query cost -----------------------------------------------------------------------------


def test_the_issue_query_is_refused_at_once(reference_url):
    """128,000 terms (0.9 MB) held the server 35 s; now a 422 naming the bound, in well under 1 s."""
    namespace = _namespace(reference_url)
    started = time.monotonic()
    reply = _search(reference_url, namespace, " ".join(f"q{i}" for i in range(128_000)))
    assert reply.status_code == 422, reply.text
    assert f"at most {MAX_QUERY_CHARS} characters" in reply.text
    assert time.monotonic() - started < 5
    many = _search(reference_url, namespace, " ".join("q" for _ in range(MAX_QUERY_TERMS + 1)))
    assert many.status_code == 422
    assert f"the query has {MAX_QUERY_TERMS + 1} terms, over the {MAX_QUERY_TERMS}" in many.text


def test_a_query_at_the_bounds_is_answered_quickly(reference_url):
    namespace = _namespace(reference_url)
    thoughts = [{"id": f"t{i}", "content": f"note {i} about q{i}"} for i in range(200)]
    assert httpx.post(
        f"{reference_url}/namespaces/{namespace}/thoughts", json={"thoughts": thoughts}
    ).is_success
    width = MAX_QUERY_CHARS // MAX_QUERY_TERMS - 1
    query = " ".join(f"q{i}".ljust(width, "x") for i in range(MAX_QUERY_TERMS))
    assert len(query) <= MAX_QUERY_CHARS
    started = time.monotonic()
    reply = _search(reference_url, namespace, query)
    assert reply.status_code == 200, reply.text
    assert time.monotonic() - started < 10  # about 0.3 s on a quiet machine


def test_the_store_ors_at_most_max_fts_terms():
    terms = fts_terms(" ".join(f"w{i}" for i in range(MAX_FTS_TERMS + 50)))
    assert len(terms) == MAX_FTS_TERMS and terms[-1] == f"w{MAX_FTS_TERMS - 1}"
    assert fts_terms("the billing api port") == ["billing", "api", "port"]


def test_a_request_on_the_event_loop_past_the_deadline_is_a_503():
    """The reference store's calls run on the server's loop (`inline_calls`): the deadline stops
    the SQL statement running past it, and the namespace keeps answering."""
    with serving(create_app(LongStatementSystem(), limits=Limits(request_timeout=0.3))) as url:
        namespace = _namespace(url)
        started = time.monotonic()
        reply = _search(url, namespace, "anything")
        assert time.monotonic() - started < 10
        assert reply.status_code == 503
        assert "took over 0.3 s (the server's request timeout)" in reply.json()["detail"]
        assert httpx.delete(f"{url}/namespaces/{namespace}").status_code == 204


def test_a_request_past_the_deadline_is_a_503_and_the_server_keeps_answering():
    app = create_app(SlowSystem(), limits=Limits(request_timeout=0.3))
    with serving(app) as url:
        namespace = _namespace(url)
        answers: list[httpx.Response] = []
        slow = threading.Thread(target=lambda: answers.append(_search(url, namespace, "anything")))
        started = time.monotonic()
        slow.start()
        time.sleep(0.1)
        assert httpx.get(f"{url}/info", timeout=5).status_code == 200  # not blocked by the search
        slow.join(10)
        assert time.monotonic() - started < 5
        assert answers[0].status_code == 503
        assert "took over 0.3 s (the server's request timeout)" in answers[0].json()["detail"]
        assert httpx.delete(f"{url}/namespaces/{namespace}").status_code == 204


# --- case 2: lone surrogates ------------------------------------------------------------------------


def test_lone_surrogates_are_422_and_the_connection_stays_usable(reference_url):
    namespace = _namespace(reference_url)
    headers = {"content-type": "application/json"}
    bodies = [
        ("search", '{"query": "q", "top_k": 5, "now": "NOW", "project": "\\ud800"}'.replace("NOW", NOW)),
        (
            "search",
            '{"query": "q", "top_k": "\\udfff", "now": "NOW"}'.replace("NOW", NOW),
        ),  # echoed by the 422
        ("thoughts", '{"thoughts": [{"id": "a", "content": "x\\ud83d"}]}'),
        ("search", '{"query": "q", "top_k": 5, "now": "NOW", "\\ud800": 1}'.replace("NOW", NOW)),
    ]
    with httpx.Client(base_url=reference_url) as client:
        for endpoint, body in bodies:
            reply = client.post(f"/namespaces/{namespace}/{endpoint}", content=body, headers=headers)
            assert reply.status_code == 422, (body, reply.text)
            reply.content.decode("ascii")  # every reply is ASCII JSON
            assert client.get("/info").status_code == 200  # the same connection, not reset
        detail = client.post(f"/namespaces/{namespace}/search", content=bodies[0][1], headers=headers).json()
    assert "project holds a lone UTF-16 surrogate" in json.dumps(detail)


def test_bodies_that_are_not_json_utf8_or_flat_are_400(reference_url):
    namespace = _namespace(reference_url)
    path = f"{reference_url}/namespaces/{namespace}/search"
    for body, reason in [
        (b"{not json", "the body is not JSON"),
        (b'{"query": "\xff"}', "cannot be parsed (not UTF-8, or nested too deeply)"),
        (b"[" * 100_000 + b"]" * 100_000, "cannot be parsed (not UTF-8, or nested too deeply)"),
    ]:
        reply = httpx.post(path, content=body, headers={"content-type": "application/json"})
        assert reply.status_code == 400 and reason in reply.json()["detail"], reply.text


def test_an_exception_of_the_served_system_is_a_500_naming_it(capfd):
    class Broken(ReferenceSystem):
        def describe(self):
            raise RuntimeError("describe broke")

    with serving(create_app(Broken())) as url, httpx.Client(base_url=url) as client:
        reply = client.get("/info")
        assert reply.status_code == 500
        assert reply.json()["detail"] == "internal error of the served system: RuntimeError: describe broke"
        assert client.post("/namespaces").status_code == 201  # still serving, same connection
    err = capfd.readouterr().err
    assert "GET /info: RuntimeError: describe broke" in err and "Traceback" not in err


# --- case 3: body size while streaming, namespaces, half-open connections ------------------------------


def test_a_chunked_upload_is_cut_off_at_the_limit():
    """A chunked 200 MiB upload was read whole before the 413; now the server answers once it has
    the limit (1 MiB here) and the client could not push much more."""
    with serving(create_app(ReferenceSystem(), max_body_bytes=1 << 20)) as url:
        namespace = _namespace(url)
        port = int(url.rsplit(":", 1)[1])
        sent = 0
        reply = b""
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(
                f"POST /namespaces/{namespace}/thoughts HTTP/1.1\r\nHost: x\r\n"
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
            )
            chunk = b"%x\r\n%s\r\n" % (65536, b"x" * 65536)
            sock.settimeout(0.05)
            try:
                while sent < 200 << 20 and not reply:
                    sock.sendall(chunk)
                    sent += 65536
                    try:
                        reply = sock.recv(65536)
                    except TimeoutError:
                        continue
            except (BrokenPipeError, ConnectionResetError):
                pass
            sock.settimeout(10)
            with contextlib.suppress(ConnectionResetError, TimeoutError):
                reply += sock.recv(65536)
        assert sent < 16 << 20, sent
        assert b" 413 " in reply.split(b"\r\n", 1)[0] and b"over 1048576 bytes" in reply


def test_namespaces_are_capped_and_idle_ones_evicted():
    app = create_app(ReferenceSystem(), limits=Limits(max_namespaces=2, idle_timeout=0.5))
    with serving(app) as url:
        first, _second = _namespace(url), _namespace(url)
        refused = httpx.post(f"{url}/namespaces")
        assert refused.status_code == 503
        assert "2 namespaces are open, the server's limit" in refused.json()["detail"]
        assert "--max-namespaces" in refused.json()["detail"]
        time.sleep(0.6)
        assert httpx.post(f"{url}/namespaces").status_code == 201  # the idle two were dropped
        gone = _search(url, first, "q")
        assert gone.status_code == 404 and "idle" in gone.json()["detail"]


def test_half_open_connections_are_closed_after_the_header_timeout():
    with serving(create_app(ReferenceSystem()), http=header_timeout_protocol(0.3)) as url:
        port = int(url.rsplit(":", 1)[1])
        sockets = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(20)]
        for sock in sockets:
            sock.sendall(b"GET /info HTTP/1.1\r\nHost: x\r\n")  # never the blank line
        started = time.monotonic()
        for sock in sockets:
            assert sock.recv(100) == b""  # closed by the server
            sock.close()
        assert time.monotonic() - started < 5
        with httpx.Client(base_url=url) as client:  # a complete request on a kept-alive connection
            assert client.get("/info").status_code == 200
            time.sleep(0.1)
            assert client.get("/info").status_code == 200


# --- case 5: tokens, OpenAPI, the serve command -----------------------------------------------------


def test_a_non_ascii_authorization_header_is_a_401():
    with serving(create_app(ReferenceSystem(), token="s3cret")) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET /info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s\xe9cret\r\n\r\n")
            assert b" 401 " in sock.recv(1000).split(b"\r\n", 1)[0]


@pytest.mark.parametrize("token", ["s\u00e9cret", "s3cret\n", "s3cret "])
def test_serve_refuses_a_token_that_cannot_travel_in_a_header(capsys, monkeypatch, token):
    monkeypatch.setenv("EVALKIT_SERVE_TOKEN", token)
    code = main(["serve", "--port", "0"])
    err = capsys.readouterr().err
    assert_refused(code, err, "$EVALKIT_SERVE_TOKEN holds", "the token is not shown")
    assert token.strip() not in err


def test_the_openapi_document_declares_every_status_the_422_shape_and_the_bearer_scheme():
    with serving(create_app(ReferenceSystem(), token="t")) as url:
        document = httpx.get(f"{url}/openapi.json", headers={"Authorization": "Bearer t"}).json()
    search = document["paths"]["/namespaces/{namespace}/search"]["post"]["responses"]
    assert {"200", "400", "401", "404", "408", "413", "422", "500", "503"} <= set(search)
    assert search["422"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorOut"}
    detail = document["components"]["schemas"]["ErrorOut"]["properties"]["detail"]
    assert {"type": "string"} in detail["anyOf"]
    assert document["components"]["securitySchemes"]["bearer"] == {
        "type": "http", "scheme": "bearer", "description": "EVALKIT_SERVE_TOKEN",
    }  # fmt: skip
    assert document["security"] == [{"bearer": []}]


def _serve(tmp_path: Path, *argv: str) -> contextlib.AbstractContextManager[subprocess.Popen[str]]:
    """`evalkit serve ARGV` in a subprocess, stopped when the `with` block ends (tests.processes)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path), "EVALKIT_FORBID_SKIPS": ""}
    env.pop("EVALKIT_SERVE_TOKEN", None)
    return started(
        [sys.executable, "-m", "evalkit", "serve", *argv], env=env, cwd=tmp_path,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.mark.parametrize(("signum", "expected"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_serve_prints_its_url_and_exits_130_or_143_dropping_its_namespaces(tmp_path, signum, expected):
    with _serve(tmp_path, "--port", "0") as child:
        line = read_line(child.stdout)
        assert line.startswith("evalkit serve: http://127.0.0.1:"), line
        url = line.split()[2]
        assert f"(OpenAPI document: {url}/openapi.json)" in line
        namespace = _namespace(url)
        httpx.post(f"{url}/namespaces/{namespace}/thoughts", json={"thoughts": [{"id": "a", "content": "b"}]})
        child.send_signal(signum)
        _, err = child.communicate(timeout=30)
    assert child.returncode == expected, err
    assert "Traceback" not in err
    assert list(tmp_path.glob("evalkit-serve-*")) == []


@pytest.mark.parametrize("system", ["SlowSystem", "LongStatementSystem"])  # store thread, event loop
def test_serve_stops_on_a_signal_during_a_long_request(tmp_path, system):
    with _serving_fixture(tmp_path, system, "--port", "0") as child:
        url = read_line(child.stdout).split()[2]
        namespace = _namespace(url)
        waiting = threading.Thread(target=lambda: _search_quietly(url, namespace), daemon=True)
        waiting.start()
        time.sleep(0.5)  # the search is running (it would take 30 s)
        _stop_with_sigint(child, tmp_path)


def _serving_fixture(tmp_path: Path, system: str, *argv: str) -> Any:
    """`evalkit serve ARGV` serving `tests.systems_fixtures.SYSTEM` instead of the reference store,
    started (stdin, stdout and stderr piped, text), its temporary files under `tmp_path`."""
    script = (
        "import sys\n"
        "from evalkit.cli import main\n"
        f"from tests.systems_fixtures import {system}\n"
        "import evalkit.cli.serve as serve\n"
        f"serve._reference = lambda args: {system}()\n"
        f"sys.exit(main(['serve', *{list(argv)!r}]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path), "EVALKIT_FORBID_SKIPS": ""}
    return started(
        [sys.executable, "-c", script], env=env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _stop_with_sigint(child: subprocess.Popen[str], tmp_path: Path) -> None:
    """Ctrl-C ends the server at once (exit 130, no traceback), its namespaces' folders removed."""
    signalled = time.monotonic()
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 130, err
    assert time.monotonic() - signalled < 15
    assert "Traceback" not in err
    assert list(tmp_path.glob("evalkit-serve-*")) == []


def _search_quietly(url: str, namespace: str) -> None:
    with contextlib.suppress(httpx.HTTPError):
        _search(url, namespace, "anything")


def test_serve_on_a_busy_port_is_exit_2_naming_it(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["serve", "--port", str(port)])
    assert_refused(
        code, capsys.readouterr().err, f"cannot listen on 127.0.0.1:{port}", "choose another --port"
    )


# --- case 4: serve --mcp ----------------------------------------------------------------------------

_CLIENT = {"name": "t", "version": "1"}
_INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": _CLIENT},
}  # fmt: skip


def _mcp_ready(child: subprocess.Popen[str]) -> None:
    assert child.stdin is not None
    child.stdin.write(json.dumps(_INIT) + "\n")
    child.stdin.flush()
    assert '"id":1' in read_line(child.stdout).replace(" ", "")


@pytest.mark.parametrize(("signum", "expected"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_serve_mcp_stops_on_a_signal_while_stdin_is_open(tmp_path, signum, expected):
    with _serve(tmp_path, "--mcp") as child:
        _mcp_ready(child)
        signalled = time.monotonic()
        child.send_signal(signum)
        child.wait(timeout=30)
        assert child.returncode == expected
        assert time.monotonic() - signalled < 10
        assert child.stderr is not None and "Traceback" not in child.stderr.read()


def test_serve_mcp_stops_on_a_signal_during_a_long_call_on_its_event_loop(tmp_path):
    """The reference store's calls run on the MCP server's loop (`inline_calls`), its signals
    are taken on the main thread: the endless statement is stopped from there."""
    with _serving_fixture(tmp_path, "LongStatementSystem", "--mcp") as child:
        _mcp_ready(child)
        assert child.stdin is not None
        search = {"name": "search", "arguments": {"namespace": "n", "query": "q", "top_k": 5, "now": NOW}}
        for message in [
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": search},
        ]:
            child.stdin.write(json.dumps(message) + "\n")
        child.stdin.flush()
        time.sleep(1.0)  # the search is running (it would run for the 60 s deadline)
        _stop_with_sigint(child, tmp_path)


def test_serve_mcp_ends_quietly_when_its_client_goes_away(tmp_path):
    with _serve(tmp_path, "--mcp") as child:
        _mcp_ready(child)
        assert child.stdin is not None and child.stdout is not None and child.stderr is not None
        child.stdout.close()  # the client is gone: nobody reads the replies
        tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        child.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        for _ in range(50):
            child.stdin.write(json.dumps(tools) + "\n")
        child.stdin.close()
        child.wait(timeout=30)
        err = child.stderr.read()
    assert child.returncode == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_serve_mcp_answers_every_request_and_names_evalkit_reasons(tmp_path):
    """Lines that are not JSON-RPC got no reply; tool errors said only "Error executing tool X"."""
    with _serve(tmp_path, "--mcp") as child:
        _mcp_ready(child)
        assert child.stdin is not None
        drop = {"name": "drop_namespace", "arguments": {"namespace": "zz"}}
        for line in ["not json", '{"jsonrpc": "2.0", "id": 5}', json.dumps(
            {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": drop}
        )]:  # fmt: skip
            child.stdin.write(line + "\n")
        child.stdin.flush()
        replies = [json.loads(read_line(child.stdout)) for _ in range(3)]
        child.stdin.close()
        child.wait(timeout=30)
    assert [r.get("error", {}).get("code") for r in replies[:2]] == [-32700, -32600]
    assert [r["id"] for r in replies] == [None, None, 9]
    assert replies[2]["result"]["isError"] is True
    assert "no namespace 'zz'" in replies[2]["result"]["content"][0]["text"]
