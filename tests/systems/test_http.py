"""The HTTP contract end to end: `evalkit serve`'s app on a real uvicorn server on loopback, the
HTTP adapter against it, and a fake server answering malformed responses."""

from __future__ import annotations

import json

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from evalkit import Edge, ReferenceSystem, run_eval
from evalkit.cli import main
from evalkit.errors import AdapterError
from evalkit.systems.http_client import HttpSystem
from evalkit.systems.http_server import create_app
from evalkit.systems.wire import NamespaceOut
from tests.servers import serving
from tests.shared import DATASETS, comparable_file
from tests.systems_fixtures import LimitedSystem


@pytest.fixture(scope="module")
def reference_url():
    with serving(create_app(ReferenceSystem())) as url:
        yield url


def test_builtin_suite_over_http_equals_the_in_process_run(reference_url, tmp_path):
    # no baselines: the built-in ones are the in-process store's, and a served one is another system
    common = ["--datasets", str(DATASETS), "--thresholds", "none"]
    assert main(["run", *common, "--out", str(tmp_path / "local.json")]) == 0
    assert main(["run", *common, "--out", str(tmp_path / "http.json"), "--system", reference_url]) == 0
    assert comparable_file(tmp_path / "http.json") == comparable_file(tmp_path / "local.json")
    remote = json.loads((tmp_path / "http.json").read_text())
    assert remote["system"] == reference_url
    assert remote["provenance"]["config"]["system"] == reference_url
    assert remote["provenance"]["system"]["server"]["name"] == "reference"
    assert remote["provenance"]["embedder"] is None


def test_two_worker_processes_over_http_give_the_serial_report(reference_url, tmp_path):
    common = ["--datasets", str(DATASETS), "--thresholds", str(DATASETS / "thresholds.json")]
    common += ["--system", reference_url]
    assert main(["run", *common, "--out", str(tmp_path / "serial.json")]) == 0
    assert main(["run", *common, "--out", str(tmp_path / "workers.json"), "--workers", "2"]) == 0
    assert comparable_file(tmp_path / "workers.json") == comparable_file(tmp_path / "serial.json")


def test_capabilities_come_from_the_server():
    with serving(create_app(LimitedSystem())) as url:
        run = run_eval(datasets=DATASETS, system=url, thresholds=None, gated=False)
    assert set(run.result.not_applicable) == {
        "contradiction-flagged", "no-match", "project-scope-global", "project-scope", "recency-gentle",
        "recency", "supersession-history",
    }  # fmt: skip


def test_openapi_document_describes_every_endpoint(reference_url):
    import httpx

    paths = httpx.get(f"{reference_url}/openapi.json").json()["paths"]
    assert set(paths) == {
        "/info",
        "/namespaces",
        "/namespaces/{namespace}",
        "/namespaces/{namespace}/thoughts",
        "/namespaces/{namespace}/edges",
        "/namespaces/{namespace}/search",
    }


def test_server_errors_name_the_field_and_status(reference_url, tmp_path):
    system = HttpSystem(reference_url)
    with pytest.raises(AdapterError, match=r"POST /namespaces/nope/search: HTTP 404: no namespace 'nope'"):
        system.call("POST", "/namespaces/nope/search", None, _search_body())
    with (
        system.open(tmp_path) as memory,
        pytest.raises(AdapterError, match=r"/edges: HTTP 422: edge 'a' -\[replaces\]-> 'b': no thought"),
    ):
        memory.add_edges([Edge("a", "b", "replaces")])


def test_token_is_required_when_set(monkeypatch):
    with serving(create_app(ReferenceSystem(), token="s3cret")) as url:
        with pytest.raises(AdapterError, match=r"GET /info: HTTP 401: missing or wrong bearer token"):
            HttpSystem(url)
        monkeypatch.setenv("EVALKIT_SYSTEM_TOKEN", "s3cret")
        assert HttpSystem(url).info.name == "reference"


def test_oversized_bodies_and_batches_are_413_and_422():
    import httpx

    with serving(create_app(ReferenceSystem(), max_body_bytes=1000)) as url:
        namespace = httpx.post(f"{url}/namespaces").json()["namespace"]
        big = {"thoughts": [{"id": f"t{i}", "content": "x" * 50} for i in range(40)]}
        reply = httpx.post(f"{url}/namespaces/{namespace}/thoughts", json=big)
        assert reply.status_code == 413 and "over 1000 bytes" in reply.json()["detail"]
    with serving(create_app(ReferenceSystem())) as url:
        namespace = httpx.post(f"{url}/namespaces").json()["namespace"]
        many = {"edges": [{"source": "a", "target": "b"}] * 10_001}
        reply = httpx.post(f"{url}/namespaces/{namespace}/edges", json=many)
        assert reply.status_code == 422 and "10000" in reply.text


def test_a_request_the_server_rejects_names_the_field(reference_url):
    from pydantic import BaseModel

    class Loose(BaseModel):
        thoughts: list[dict]

    system = HttpSystem(reference_url)
    namespace = system.call("POST", "/namespaces", NamespaceOut).namespace
    body = Loose(thoughts=[{"id": "a", "content": "alpha", "importance": 3.0}])
    message = r"/thoughts: HTTP 422: body\.thoughts\.0\.importance: Input should be less than or equal to 1"
    with pytest.raises(AdapterError, match=message):
        system.call("POST", f"/namespaces/{namespace}/thoughts", None, body)


def test_unreachable_server_is_a_clear_error():
    with pytest.raises(AdapterError, match=r"GET /info: cannot reach the server after 3 retries"):
        HttpSystem("http://127.0.0.1:9")


def _search_body():
    from datetime import UTC, datetime

    from evalkit.systems.wire import SearchIn

    return SearchIn(query="q", top_k=5, now=datetime(2026, 1, 1, tzinfo=UTC))


def _fake(search_reply):
    """A server that speaks the contract except for its search reply."""
    app = FastAPI()

    @app.get("/info")
    async def info():
        return {"name": "fake", "capabilities": ["projects"]}

    @app.post("/namespaces", status_code=201)
    async def create():
        return {"namespace": "n1"}

    @app.delete("/namespaces/n1", status_code=204)
    async def drop():
        return None

    @app.post("/namespaces/n1/thoughts")
    async def thoughts(request: Request):
        return {"added": len((await request.json())["thoughts"])}

    @app.post("/namespaces/n1/edges")
    async def edges(request: Request):
        return {"added": len((await request.json())["edges"])}

    @app.post("/namespaces/n1/search")
    async def search():
        return search_reply

    return app


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (PlainTextResponse("oops"), r"POST /namespaces/n1/search: the reply is not JSON \(text/plain"),
        (JSONResponse({"results": []}), r"does not match SearchOut: .*hits.*missing"),
        (
            JSONResponse({"hits": [{"id": 3}]}),
            r"does not match SearchOut: hits\[0\]\.id: Input should be a valid string \(got 3\)",
        ),
        (JSONResponse({"hits": [{"id": "orders-api-port", "similarty": 0.5}]}), r"unknown key 'similarty'"),
        (JSONResponse({"hits": [{"id": "never-seeded"}]}), r"id 'never-seeded' was never added"),
        (JSONResponse({"detail": "boom"}, status_code=500), r"POST /namespaces/n1/search: HTTP 500: boom"),
    ],
)
def test_malformed_search_replies_are_clear_errors(reply, message):
    with serving(_fake(reply)) as url, pytest.raises(AdapterError, match=message):
        run_eval(datasets=DATASETS, scenarios=["explicit-fact"], system=url, thresholds=None, gated=False)


def test_a_fake_reply_with_nan_scores_is_an_error():
    body = '{"hits": [{"id": "orders-api-port", "relevance": NaN}]}'
    app = _fake(PlainTextResponse(body, media_type="application/json"))
    with (
        serving(app) as url,
        pytest.raises(AdapterError, match=r"hit 1 \('orders-api-port'\) returned relevance nan"),
    ):
        run_eval(datasets=DATASETS, scenarios=["explicit-fact"], system=url, thresholds=None, gated=False)


def test_evalkit_serve_in_a_subprocess_reproduces_the_in_process_run(tmp_path):
    import socket
    import subprocess
    import sys
    import time

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "evalkit", "serve", "--port", str(port)])
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/info")
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, "evalkit serve did not start"
                time.sleep(0.2)
        common = ["--datasets", str(DATASETS), "--thresholds", str(DATASETS / "thresholds.json")]
        assert main(["run", *common, "--scenario", "supersession", "--out", str(tmp_path / "a.json")]) == 0
        assert (
            main(
                [
                    "run",
                    *common,
                    "--scenario",
                    "supersession",
                    "--out",
                    str(tmp_path / "b.json"),
                    "--system",
                    url,
                ]
            )
            == 0
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert comparable_file(tmp_path / "b.json") == comparable_file(tmp_path / "a.json")


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--host", "0.0.0.0"], {}, "is not loopback; add --allow-remote"),
        (
            ["--host", "0.0.0.0", "--allow-remote"],
            {},
            "--allow-remote needs a bearer token: set $EVALKIT_SERVE_TOKEN",
        ),
    ],
)
def test_serve_refuses_other_addresses_without_flag_and_token(monkeypatch, capsys, args, env, message):
    monkeypatch.delenv("EVALKIT_SERVE_TOKEN", raising=False)
    assert main(["serve", *args]) == 2
    assert message in capsys.readouterr().err
