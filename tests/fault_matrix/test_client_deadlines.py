"""Client deadlines and sizes (`--system http://…`): a slow or huge reply fails at the deadline or
the size cap with one line naming the system and endpoint; odd replies and settings are exit 2,
never a traceback; wire types are strict.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts). Slow
cases use small deadlines and caps set by the test, servers are on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import time
import zlib

import pytest
from fastapi.responses import JSONResponse, Response

from evalkit import run_eval
from evalkit.errors import AdapterError
from evalkit.systems.http.client import MAX_REPLY_OBJECTS, HttpSystem
from tests.fault_matrix.common import assert_refused, cli, fake_mcp_mapping, run_args
from tests.servers import contract_app, raw_server, serving
from tests.shared import DATASETS

PORT = "orders-api-port"
INFO = b'{"name": "fake", "capabilities": []}'


def _drip(what: bytes, pause: float):
    """An answer writing `what` one byte every `pause` seconds (bounded by its length)."""

    def answer(conn: socket.socket, _: str) -> None:
        for byte in what:
            conn.sendall(bytes([byte]))
            time.sleep(pause)

    return answer


def _reply(body: bytes, *headers: str) -> bytes:
    head = ["HTTP/1.1 200 OK", "Content-Type: application/json", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@pytest.mark.parametrize(
    "dripped",
    [
        _reply(INFO),  # the headers themselves, byte by byte
        _reply(INFO)[:-len(INFO)] + INFO + b" " * 200,  # a body that never ends in time
    ],
)  # fmt: skip
def test_a_server_dripping_bytes_fails_at_the_deadline(dripped):
    """The 60 s limit applied to each read, so one byte every 5 s hung a run; now the deadline is
    wall-clock over the whole request."""
    with raw_server(_drip(dripped, 0.05)) as url:
        started = time.monotonic()
        with pytest.raises(AdapterError, match=r"GET /info: no complete answer within 0\.5 s"):
            HttpSystem(url, timeout=0.5)
        assert time.monotonic() - started < 3


def test_the_deadline_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("EVALKIT_SYSTEM_TIMEOUT", "0.4")
    with raw_server(_drip(_reply(INFO), 0.05)) as url, pytest.raises(AdapterError, match=r"within 0\.4 s"):
        HttpSystem(url)
    monkeypatch.setenv("EVALKIT_SYSTEM_TIMEOUT", "soon")
    with pytest.raises(Exception, match=r"\$EVALKIT_SYSTEM_TIMEOUT must be a number, got 'soon'"):
        HttpSystem("http://127.0.0.1:9")


def _huge(size: int, *, gzip: bool = False):
    """An answer streaming `size` bytes of JSON-looking body (gzip: a bomb inflating to `size`)."""

    def answer(conn: socket.socket, _: str) -> None:
        if gzip:
            packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            body = packer.compress(b" " * size) + packer.flush()
            conn.sendall(_reply(body, "Content-Encoding: gzip"))
            return
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n"
        conn.sendall(head.encode())
        chunk = b" " * 65536
        for _ in range(size // len(chunk)):
            conn.sendall(chunk)

    return answer


@pytest.mark.parametrize("gzip", [False, True])
def test_a_huge_reply_stops_at_the_size_cap(gzip):
    """A 200 MB reply was read and parsed (3.0 GB peak); a gzip bomb took 4.3 GB."""
    with raw_server(_huge(200 << 20, gzip=gzip)) as url:
        started = time.monotonic()
        with pytest.raises(
            AdapterError, match=r"GET /info: the reply is over 1000000 bytes \(the client's limit"
        ):
            HttpSystem(url, max_reply_bytes=1_000_000)
        assert time.monotonic() - started < 20


def test_a_reply_of_millions_of_tiny_hits_stops_early():
    hits = b'{"hits": [' + b",".join([b'{"id":"a"}'] * (MAX_REPLY_OBJECTS + 10)) + b"]}"
    app = contract_app(lambda: Response(hits, media_type="application/json"))
    with (
        serving(app) as url,
        pytest.raises(AdapterError, match=rf"not JSON .*over {MAX_REPLY_OBJECTS} JSON objects"),
    ):
        run_eval(datasets=DATASETS, scenarios=["explicit-fact"], system=url, thresholds=None, gated=False)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        # case 8: replies that were tracebacks
        (Response(b"[" * 50_000 + b"]" * 50_000, media_type="application/json"), r"not JSON .*nested deeper"),
        (JSONResponse({"detail": [{"loc": 5, "msg": "bad"}]}, status_code=422), r"HTTP 422: 5: bad"),
        (JSONResponse({"detail": [{"loc": None}, "x"]}, status_code=422), r"HTTP 422: None: None"),
        (Response(b'{"hits": "\xff"}', media_type="application/json"), r"the reply is not JSON .*not UTF-8"),
        # case 9: silent coercion over HTTP
        (JSONResponse({"hits": [{"id": PORT, "relevance": True}]}), r"relevance: .*valid number"),
        (JSONResponse({"hits": [{"id": PORT, "relevance": "0.5"}]}), r"relevance: .*valid number"),
        (JSONResponse({"hits": [{"id": PORT, "rank": "1"}]}), r"rank: .*valid integer"),
        (JSONResponse({"hits": [{"id": PORT, "low_confidence": "yes"}]}), r"low_confidence: .*boolean"),
        (JSONResponse({"hits": [], "candidates": 1.5}), r"candidates: .*valid integer"),
    ],
)  # fmt: skip
def test_odd_search_replies_are_one_line_errors(reply, message):
    with serving(contract_app(lambda: reply)) as url, pytest.raises(AdapterError, match=message):
        run_eval(datasets=DATASETS, scenarios=["explicit-fact"], system=url, thresholds=None, gated=False)


def test_an_integer_is_still_a_float():
    reply = JSONResponse({"hits": [{"id": PORT, "relevance": 1, "similarity": 0}]})
    with serving(contract_app(lambda: reply)) as url:
        run = run_eval(
            datasets=DATASETS, scenarios=["explicit-fact"], system=url, thresholds=None, gated=False
        )
    assert run.result.system == "fake"  # named by /info


@pytest.mark.parametrize(
    ("spec", "needles"),
    [
        ("http://[::1", ["system 'http://[::1' is not a usable URL", "http://HOST:PORT"]),
        ("http://127.0.0.1:notaport", ["is not a usable URL"]),
    ],
)
def test_a_url_httpx_cannot_use_is_exit_2(ws, capsys, spec, needles):
    code, _, err = cli(capsys, *run_args("--system", spec))
    assert_refused(code, err, *needles)


def test_a_query_the_contract_cannot_carry_is_an_adapter_error(ws, capsys):
    (ws / "data" / "scenarios" / "tiny.yaml").write_text(
        (ws / "data" / "scenarios" / "tiny.yaml")
        .read_text()
        .replace(
            'query: "Which port does the billing API listen on?"', "query: " + json.dumps("port " * 1200)
        )
    )
    with serving(contract_app(lambda: JSONResponse({"hits": []}))) as url:
        code, _, err = cli(capsys, *run_args("--system", url))
    assert_refused(code, err, "/search: the contract cannot carry this request: query:", "1200 terms")


# --- the MCP adapter (a hand-written stdio server, tests/fault_matrix/mcp_fake.py) -----------------


@pytest.mark.parametrize(
    ("mode", "needles"),
    [
        ("banner", ["cannot start or reach the MCP server", "not a JSON-RPC message on stdout",
                    "my-memory-server v1.0 ready", "send banners and logs to stderr"]),
        ("null-id", ["tool 'search': hit 1 has a null id ('id')"]),
        ("deep", ["tool 'search': the text result is JSON nested deeper than Python's limit"]),
        ("huge", ["tool 'search' failed: a message from the server is over 16777216 bytes",
                  "EVALKIT_SYSTEM_MAX_REPLY_MB"]),
    ],
)  # fmt: skip
def test_odd_mcp_servers_are_one_line_errors(ws, capsys, mode, needles):
    started = time.monotonic()
    code, _, err = cli(capsys, *run_args("--system", f"mcp:{fake_mcp_mapping(ws, mode)}"))
    assert_refused(code, err, "system 'fake' (MCP", *needles)
    assert time.monotonic() - started < 60  # a 200 MB line took about 4.5 minutes in the SDK


def test_the_mcp_reply_cap_and_deadline_come_from_the_environment(ws, capsys, monkeypatch):
    monkeypatch.setenv("EVALKIT_SYSTEM_MAX_REPLY_MB", "1")
    code, _, err = cli(capsys, *run_args("--system", f"mcp:{fake_mcp_mapping(ws, 'huge')}"))
    assert_refused(code, err, "tool 'search' failed: a message from the server is over 1000000 bytes")
    monkeypatch.setenv("EVALKIT_SYSTEM_TIMEOUT", "5")  # the fake starts well within it, even when busy
    started = time.monotonic()
    code, _, err = cli(capsys, *run_args("--system", f"mcp:{fake_mcp_mapping(ws, 'slow')}"))
    assert_refused(code, err, "tool 'search': no answer within 5 s", "EVALKIT_SYSTEM_TIMEOUT")
    assert time.monotonic() - started < 40
