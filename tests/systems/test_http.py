"""The HTTP contract end to end: `evalkit serve`'s app on a real uvicorn server on loopback, the
HTTP adapter against it, and a fake server answering malformed responses."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from evalkit import Edge, ReferenceSystem, load_suite, run_eval
from evalkit.cli import main
from evalkit.errors import AdapterError, AdapterWarning
from evalkit.harness.executors import SerialExecutor
from evalkit.systems.base import NO_WORKDIR, MemorySystem, OpenContext
from evalkit.systems.capabilities import CAPABILITIES
from evalkit.systems.http.client import HttpSystem
from evalkit.systems.http.server import create_app
from evalkit.systems.http.wire import MAX_SEARCH_BATCH, NamespaceOut
from evalkit.systems.namespaces import Namespaces
from tests.processes import started
from tests.servers import contract_app, serving
from tests.shared import DATASETS, comparable_file
from tests.systems_fixtures import LimitedSystem

SERIAL = SerialExecutor()
"""One scenario at a time, chosen: the tests of the request sequence a run sends (several in
flight, the default for an HTTP system, hold a drop per thread)."""


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
    assert remote["system"] == "reference"  # /info's name; the URL is the configured system
    # a service embeds by itself: the run's mode is `system`, and the report names its embedder
    assert (
        remote["mode"] == "system"
        and json.loads((tmp_path / "local.json").read_text())["mode"] == "deterministic"
    )
    assert remote["provenance"]["declaration"]["embedder"] == ReferenceSystem().embedder.identity
    assert remote["provenance"]["config"]["system"] == reference_url
    assert remote["provenance"]["system"]["server"]["name"] == "reference"
    assert remote["provenance"]["embedder"] is None


def _overlapping(app):
    """`app` behind an ASGI wrapper that holds every request 20 ms and records the most requests
    it held at once (`most[0]`), so that scenarios in flight show as overlapping requests."""
    import asyncio

    most, now = [0], [0]

    async def held(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        now[0] += 1
        most[0] = max(most[0], now[0])
        try:
            await asyncio.sleep(0.02)
            await app(scope, receive, send)
        finally:
            now[0] -= 1

    return held, most


def test_scenarios_in_flight_over_http_give_the_serial_report_in_order(tmp_path):
    app, most = _overlapping(create_app(ReferenceSystem()))
    reports, overlap = {}, {}
    with serving(app) as url:
        common = ["--datasets", str(DATASETS), "--thresholds", str(DATASETS / "thresholds.json")]
        common += ["--system", url, "--history", "none"]
        for name, extra in (("serial", ["--workers", "1"]), ("default", []), ("three", ["--workers", "3"])):
            most[0] = 0
            assert main(["run", *common, "--out", str(tmp_path / f"{name}.json"), *extra]) == 0
            reports[name] = comparable_file(tmp_path / f"{name}.json")
            overlap[name] = most[0]
    assert reports["default"] == reports["serial"] and reports["three"] == reports["serial"]
    order = [s.name for s in load_suite(DATASETS).scenarios]
    assert [s["name"] for s in reports["default"]["scenarios"]] == order
    assert overlap["serial"] == 1  # one request at a time
    assert 1 < overlap["three"] <= 3 and 2 < overlap["default"] <= 8  # default: 8 in flight


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
        "/namespaces/{namespace}/search/batch",
        "/namespaces/{namespace}/thoughts/delete",
        "/namespaces/{namespace}/thoughts/update",
    }


def test_server_errors_name_the_field_and_status(reference_url, tmp_path):
    system = HttpSystem(reference_url)
    with pytest.raises(AdapterError, match=r"POST /namespaces/nope/search: HTTP 404: no namespace 'nope'"):
        system.call("POST", "/namespaces/nope/search", None, _search_body())
    with (
        system.open(OpenContext(tmp_path)) as memory,
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

    from evalkit.systems.http.wire import SearchIn

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
    import sys
    import time

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with started([sys.executable, "-m", "evalkit", "serve", "--port", str(port)]) as server:
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


# --- the contract, tightened (issue 23 item 4) ----------------------------------------------------


def test_openapi_document_has_enums_and_a_description_for_every_field(reference_url):
    import httpx

    document = httpx.get(f"{reference_url}/openapi.json").json()
    schemas = document["components"]["schemas"]
    undescribed = [
        f"{name}.{prop}"
        for name, schema in schemas.items()
        if not name.startswith(("HTTPValidationError", "ValidationError"))  # FastAPI's own, unused
        for prop, value in schema.get("properties", {}).items()
        if not value.get("description")
    ]
    assert undescribed == []
    hit, info = schemas["HitOut"]["properties"], schemas["SystemInfo"]["properties"]
    assert info["capabilities"]["items"]["enum"] == list(CAPABILITIES)
    assert all(name in info["capabilities"]["description"] for name in CAPABILITIES)
    assert hit["standing"]["enum"] == ["current", "contradicted", "superseded"]
    assert hit["match_source"]["items"]["enum"] == ["vector", "bm25"]
    assert "higher = more relevant" in hit["relevance"]["description"]
    assert schemas["ThoughtIn"]["properties"]["status"]["enum"] == ["active", "draft", "archived"]
    assert "replaces" in schemas["EdgeIn"]["properties"]["type"]["enum"]
    search = schemas["SearchIn"]["properties"]
    assert "null = search every project" in search["project"]["description"]
    assert "null = the system's own default gate" in search["min_relevance"]["description"]
    assert "0 = no gate" in search["min_relevance"]["description"]
    assert "is_global" in search["include_global"]["description"]
    hits = schemas["SearchOut"]["properties"]["hits"]["description"]
    assert "best first" in hits and "superseded" in hits
    paths = document["paths"]
    assert set(paths["/namespaces"]["post"]["responses"]) >= {"201", "401", "503"}
    assert (
        "201" in paths["/namespaces"]["post"]["responses"]
        and "200" not in paths["/namespaces"]["post"]["responses"]
    )
    assert "204" in paths["/namespaces/{namespace}"]["delete"]["responses"]
    for path in paths.values():
        for operation in path.values():
            error = operation["responses"]["422"]["content"]["application/json"]["schema"]
            assert error == {"$ref": "#/components/schemas/ErrorOut"}
    batch = paths["/namespaces/{namespace}/search/batch"]["post"]["responses"]["200"]
    assert batch["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/SearchBatchOut"}


def _counting(app):
    """`app` behind an ASGI wrapper that counts the requests per (method, path with the
    namespace as {ns})."""
    import re
    from collections import Counter

    seen: Counter[str] = Counter()

    async def counted(scope, receive, send):
        if scope["type"] == "http":
            seen[f"{scope['method']} {re.sub(r'/namespaces/[^/]+', '/namespaces/{ns}', scope['path'])}"] += 1
        await app(scope, receive, send)

    return counted, seen


def test_the_client_sends_each_scenarios_searches_in_one_batch_when_info_advertises_it(tmp_path):
    app, seen = _counting(create_app(ReferenceSystem()))
    options = dict(datasets=DATASETS, scenarios=["explicit-fact", "temporal"], thresholds=None)
    local = run_eval(**options)
    with serving(app) as url:
        assert HttpSystem(url).info.search_batch == MAX_SEARCH_BATCH
        batched = run_eval(system=HttpSystem(url), **options)
        assert seen["POST /namespaces/{ns}/search/batch"] == 2 and seen["POST /namespaces/{ns}/search"] == 0
        seen.clear()
        single = run_eval(system=HttpSystem(url, batch=False), **options)
        searches = sum(len(s.queries) for s in local.result.scenarios) * 2  # both passes
        assert (
            seen["POST /namespaces/{ns}/search"] == searches
            and seen["POST /namespaces/{ns}/search/batch"] == 0
        )
    assert batched.result.overall == single.result.overall == local.result.overall
    assert batched.result.scenarios == local.result.scenarios


def test_a_batch_reply_with_another_number_of_results_is_an_error():
    from fastapi.responses import JSONResponse

    app = contract_app(lambda: JSONResponse({"hits": []}), info={"search_batch": 8})

    @app.post("/namespaces/{name}/search/batch")
    async def batch():
        return {"results": [{"hits": []}]}

    with (
        serving(app) as url,
        pytest.raises(AdapterError, match=r"search/batch: the reply holds 1 results for 5 searches"),
    ):
        run_eval(datasets=DATASETS, scenarios=["explicit-fact"], system=url, thresholds=None)


def test_the_batch_endpoint_answers_in_order_and_refuses_too_many(reference_url):
    import httpx

    namespace = httpx.post(f"{reference_url}/namespaces").json()["namespace"]
    base = f"{reference_url}/namespaces/{namespace}"
    thoughts = [{"id": "a", "content": "alpha beta"}, {"id": "b", "content": "gamma delta"}]
    assert httpx.post(f"{base}/thoughts", json={"thoughts": thoughts}).json() == {"added": 2}
    one = {"top_k": 1, "min_relevance": 0.0, "now": "2026-01-01T00:00:00Z"}
    searches = [{"query": "gamma", **one}, {"query": "alpha", **one}]
    results = httpx.post(f"{base}/search/batch", json={"searches": searches}).json()["results"]
    assert [r["hits"][0]["id"] for r in results] == ["b", "a"]
    assert results[0] == httpx.post(f"{base}/search", json=searches[0]).json()
    reply = httpx.post(f"{base}/search/batch", json={"searches": [searches[0]] * (MAX_SEARCH_BATCH + 1)})
    assert reply.status_code == 422 and f"at most {MAX_SEARCH_BATCH} items" in reply.text


def test_unknown_reply_keys_are_ignored_with_one_warning_naming_them():
    hit = {"id": "orders-api-port", "similarty": 0.5, "score": 1}
    app = contract_app(lambda: JSONResponse({"hits": [hit], "took_ms": 3}))
    with serving(app) as url, pytest.warns(AdapterWarning) as caught:
        run = run_eval(datasets=DATASETS, scenarios=["explicit-fact"], system=url, thresholds=None)
    assert run.result.scenarios[0].queries[0].retrieved == ["orders-api-port"]
    mine = [
        w
        for w in caught
        if issubclass(w.category, AdapterWarning) and "contract does not define" in str(w.message)
    ]
    assert len(mine) == 1  # 5 searches, each with the same extras: one warning
    message = str(mine[0].message)
    assert "SearchOut.hits[*].similarty (did you mean 'similarity'?)" in message
    assert "SearchOut.hits[*].score" in message and "SearchOut.took_ms" in message


def test_a_field_error_repeated_in_every_hit_is_reported_once_with_a_count():
    hits = [{"id": i, "rank": str(n)} for n, i in enumerate(["orders-api-port", "b", "c"], start=1)]
    with (
        serving(contract_app(lambda: JSONResponse({"hits": hits}))) as url,
        pytest.raises(AdapterError) as caught,
    ):
        run_eval(datasets=DATASETS, scenarios=["explicit-fact"], system=url, thresholds=None, gated=False)
    message = str(caught.value)
    assert "hits[0].rank: Input should be a valid integer (got '1'); 2 more like it (hits[*].rank)" in message
    assert "hits[1]" not in message


def test_the_system_is_named_by_info_and_errors_give_its_url():
    with serving(contract_app(lambda: JSONResponse({"hits": [{"id": "never-seeded"}]}))) as url:
        system = HttpSystem(url)
        assert system.name == "fake" and system.describe()["url"] == url
        with pytest.raises(
            AdapterError, match=rf"^system 'fake' at {url}: GET /nothing: HTTP 404: Not Found"
        ):
            system.call("GET", "/nothing", None)


def test_a_servers_repeated_field_errors_are_shown_once_with_a_count(reference_url):
    from pydantic import BaseModel

    class Loose(BaseModel):
        thoughts: list[dict]

    system = HttpSystem(reference_url)
    namespace = system.call("POST", "/namespaces", NamespaceOut).namespace
    body = Loose(thoughts=[{"id": f"t{i}", "content": "x", "importance": 3.0} for i in range(3)])
    with pytest.raises(AdapterError) as caught:
        system.call("POST", f"/namespaces/{namespace}/thoughts", None, body)
    message = str(caught.value)
    assert "body.thoughts.0.importance: Input should be less than or equal to 1" in message
    assert "; 2 more like it (body.thoughts.*.importance)" in message and "thoughts.1" not in message


def test_served_connections_have_tcp_nodelay():
    # without it a reply written as head then body waits for the client's delayed ACK (~40 ms)
    import asyncio
    import socket

    from evalkit.systems.http.server import listening_socket

    async def accepted_nodelay() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport):
                option = transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                seen.set_result(option)
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=listening_socket("127.0.0.1", 0))
        async with server:
            _, writer = await asyncio.open_connection(*server.sockets[0].getsockname())
            try:
                return await asyncio.wait_for(seen, 10)
            finally:
                writer.close()

    assert asyncio.run(accepted_nodelay()) == 1


def test_a_server_with_seeded_create_gets_two_requests_per_scenario_the_old_path_five():
    app, seen = _counting(create_app(ReferenceSystem()))
    options = dict(datasets=DATASETS, scenarios=["explicit-fact", "supersession"], thresholds=None)
    local = run_eval(**options)
    with serving(app) as url:
        assert HttpSystem(url).info.seeded_create
        seen.clear()
        seeded = run_eval(system=HttpSystem(url), **options, executor=SERIAL)
        # the first scenario's drop went with the second's creation (`drop_with_create`)
        assert dict(seen) == {
            "GET /info": 1, "POST /namespaces": 2, "POST /namespaces/{ns}/search/batch": 2,
            "DELETE /namespaces/{ns}": 1,
        }  # fmt: skip
        seen.clear()
        plain = run_eval(system=HttpSystem(url, seeded_create=False), **options, executor=SERIAL)
        assert dict(seen) == {
            "GET /info": 1, "POST /namespaces": 2, "POST /namespaces/{ns}/thoughts": 2,
            "POST /namespaces/{ns}/edges": 1, "POST /namespaces/{ns}/search/batch": 2,
            "DELETE /namespaces/{ns}": 2,
        }  # fmt: skip
    assert seeded.result.overall == plain.result.overall == local.result.overall
    assert seeded.result.scenarios == local.result.scenarios


def test_a_seeded_create_the_system_rejects_is_its_error_and_leaves_no_namespace(tmp_path):
    from evalkit import Thought

    app = create_app(ReferenceSystem())
    with serving(app) as url, HttpSystem(url).open(OpenContext(tmp_path)) as memory:
        memory.add_thoughts([Thought("a", "alpha")])
        assert memory.path is None  # held until the next call
        with pytest.raises(AdapterError, match=r"POST /namespaces: HTTP 422: edge 'a' -\[replaces\]-> 'b'"):
            memory.add_edges([Edge("a", "b", "replaces")])
        assert len(app.state.namespaces) == 0


def test_a_memory_never_called_sends_nothing_and_one_with_held_thoughts_still_sends_them(tmp_path):
    from evalkit import Thought

    app, seen = _counting(create_app(ReferenceSystem()))
    with serving(app) as url:
        system = HttpSystem(url)
        seen.clear()
        with system.open(OpenContext(tmp_path)):
            pass
        assert not seen
        with system.open(OpenContext(tmp_path)) as memory:
            memory.add_thoughts([Thought("a", "alpha")])
        assert dict(seen) == {"POST /namespaces": 1, "DELETE /namespaces/{ns}": 1}


def test_the_busiest_endpoints_answer_valid_and_invalid_requests_with_the_contracts_statuses():
    """Every request, valid or not, goes through FastAPI's routes (a hand-routed path beside them
    was removed): the busiest endpoints' answers, errors included, and no namespace left open."""
    import httpx

    search = {"query": "alpha", "top_k": 2, "min_relevance": 0.0, "now": "2026-01-01T00:00:00Z"}
    two = [{"id": "a", "content": "alpha beta"}, {"id": "b", "content": "gamma"}]
    thoughts = {"thoughts": two}
    weak = {"thoughts": [{"id": "c", "content": "x", "importance": 3}]}
    replaces = {"edges": [{"source": "a", "target": "b", "type": "replaces"}]}
    dangling = {"edges": [{"source": "a", "target": "zz"}]}
    batch = {"searches": [search, {**search, "query": "gamma"}]}
    seed = {"thoughts": two, "edges": [{"source": "b", "target": "a"}]}
    bad_seed = {"thoughts": two, "edges": [{"source": "a", "target": "q"}]}
    js, text = {"content-type": "application/json"}, {"content-type": "text/plain"}
    ns = "/namespaces/{ns}"
    script: list[tuple[str, str, object, dict[str, str]]] = [
        ("POST", "/namespaces", None, {}),
        ("POST", f"{ns}/thoughts", thoughts, js),
        ("POST", f"{ns}/thoughts", thoughts, js),  # duplicate ids: the store's 422
        ("POST", f"{ns}/thoughts", weak, js),
        ("POST", f"{ns}/thoughts", b"{not json", js),
        ("POST", f"{ns}/thoughts", thoughts, text),
        ("POST", f"{ns}/edges", replaces, js),
        ("POST", f"{ns}/edges", dangling, js),
        ("POST", f"{ns}/search", search, js),
        ("POST", f"{ns}/search", {**search, "min_relevance": None}, js),
        ("POST", f"{ns}/search", {**search, "query": "al\ud800pha"}, js),
        ("POST", f"{ns}/search", {**search, "extra": 1}, js),
        ("POST", f"{ns}/search/batch", batch, js),
        ("POST", "/namespaces/nope/search", search, js),
        ("POST", f"{ns}/search/", search, js),
        ("POST", "/namespaces", seed, js),
        ("POST", "/namespaces", bad_seed, js),
        ("POST", "/namespaces", {"thoughts": "none"}, js),
        ("POST", "/namespaces", {"drop": "nope"}, js),  # an unknown namespace to drop: nothing created
        ("DELETE", ns, None, {}),
        ("DELETE", ns, None, {}),
        ("POST", f"{ns}/search", search, js),
    ]
    app = create_app(ReferenceSystem())
    got: list[tuple[str, int, str]] = []
    with serving(app) as url:
        namespace = "unset"
        for method, path, body, headers in script:
            content = body if isinstance(body, bytes | None) else json.dumps(body).encode()
            reply = httpx.request(method, url + path.format(ns=namespace), content=content, headers=headers)
            created = path == "/namespaces" and reply.status_code == 201
            if created and body is None:
                namespace = reply.json()["namespace"]
            got.append((method, reply.status_code, reply.headers.get("content-type", "")))
        got.append(("open namespaces", len(app.state.namespaces), ""))
    statuses = [status for _, status, _ in got]
    assert statuses[:15] == [201, 200, 422, 422, 400, 422, 200, 422, 200, 200, 422, 422, 200, 404, 307]
    assert statuses[15:] == [201, 422, 422, 404, 204, 404, 404, 1]
    assert all(kind == "application/json" for _, status, kind in got[:-1] if status not in (204, 307))


def test_every_request_meets_the_guard_once_and_a_bug_is_a_one_line_500(monkeypatch, capfd):
    """One `_Guard` in front of FastAPI: every request (`/info`, a trailing slash, a body that
    does not validate, the OpenAPI document, a 401, a search) is checked once; and the served
    system's bug is a one-line-logged 500, with the same connection still usable."""
    from evalkit.systems.http import server as http_server
    from tests.systems_fixtures import RewritingSystem

    calls: list[str] = []
    guard = http_server._Guard.__call__

    async def counted(self, scope, receive, send):
        if scope["type"] == "http":
            calls.append(scope["path"])
        await guard(self, scope, receive, send)

    monkeypatch.setattr(http_server._Guard, "__call__", counted)

    def broken(response: object) -> object:
        raise RuntimeError("search broke")

    search = {"query": "x", "top_k": 1, "now": "2026-01-01T00:00:00+00:00"}
    app = create_app(RewritingSystem(broken), token="t")
    auth = {"authorization": "Bearer t"}
    with serving(app) as url, httpx.Client(base_url=url, headers=auth) as client:
        namespace = client.post("/namespaces").json()["namespace"]
        replies = [
            client.get("/info"),
            client.get("/openapi.json"),
            client.post(f"/namespaces/{namespace}/search/", json=search),
            client.post(f"/namespaces/{namespace}/search", json={"query": "x"}),
            client.post(f"/namespaces/{namespace}/search", json=search),
            client.get("/info", headers={"authorization": "Bearer wrong"}),
            client.delete(f"/namespaces/{namespace}"),
        ]
    assert [r.status_code for r in replies] == [200, 200, 307, 422, 500, 401, 204]
    paths = ["/info", "/openapi.json", "/search/", "/search", "/search", "/info", namespace]
    assert len(calls) == 1 + len(paths) and all(c.endswith(p) for c, p in zip(calls[1:], paths, strict=True))
    failed = replies[4]
    assert failed.json()["detail"] == "internal error of the served system: RuntimeError: search broke"
    err = capfd.readouterr().err
    assert err.count("RuntimeError: search broke") == 1 and "Traceback" not in err


def test_openapi_document_describes_the_seeded_create_and_its_drop(reference_url):
    import httpx

    document = httpx.get(f"{reference_url}/openapi.json").json()
    body = document["paths"]["/namespaces"]["post"]["requestBody"]
    assert {"$ref": "#/components/schemas/NamespaceIn"} in body["content"]["application/json"]["schema"][
        "anyOf"
    ]
    assert not body.get("required")  # no body: an empty memory, as before
    schemas = document["components"]["schemas"]
    assert set(schemas["NamespaceIn"]["properties"]) == {"thoughts", "edges", "drop"}
    assert "seeds the new memory" in schemas["SystemInfo"]["properties"]["seeded_create"]["description"]
    drop = schemas["NamespaceIn"]["properties"]["drop"]["description"]
    assert "a namespace to drop in the same request, before this one is created" in drop
    assert "404 and nothing is created" in drop
    info = schemas["SystemInfo"]["properties"]
    assert "concurrent_connections" not in info
    assert (
        "drops a scenario's memory with the next scenario's creation"
        in info["drop_with_create"]["description"]
    )


class _Workdirs(MemorySystem):
    """The reference store, recording the workdir of each memory (and whether it was a
    directory); `needs_workdir` as given."""

    name = "workdirs"

    def __init__(self, needs: bool) -> None:
        self.needs_workdir = needs
        self.workdirs: list[tuple[Path, bool]] = []
        self.inner = ReferenceSystem()

    def describe(self) -> dict[str, object]:
        return {}

    @contextmanager
    def open(self, context: OpenContext):
        self.workdirs.append((context.workdir, context.workdir.is_dir()))
        with self.inner.open(context) as memory:
            yield memory


@pytest.mark.parametrize("needs", [True, False])
def test_a_namespace_gets_a_temporary_directory_only_when_its_system_needs_one(needs):
    system = _Workdirs(needs)
    namespaces = Namespaces(system)
    try:
        namespaces.create("a")
        (workdir, made), *_ = system.workdirs
        if needs:
            assert made and workdir.name.startswith("evalkit-serve-")
            namespaces.drop("a")
            assert not workdir.exists()
        else:
            assert (workdir, made) == (NO_WORKDIR, False)
            namespaces.drop("a")
    finally:
        namespaces.close()


def test_evalkit_serve_declares_its_reference_store_needs_no_folder_an_in_process_one_keeps_it():
    from evalkit.cli import build_parser
    from evalkit.cli import serve as serve_cli

    served = serve_cli._reference(build_parser().parse_args(["serve", "--port", "0"]))
    assert isinstance(served, ReferenceSystem) and not served.needs_workdir
    assert ReferenceSystem().needs_workdir  # the runner's scratch folder per scenario stays


class _Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


class _Cycle:
    response_started = False
    response_complete = False


def test_a_response_head_is_held_and_sent_with_the_first_piece_of_the_body():
    from types import SimpleNamespace

    from evalkit.systems.http.server import _HeldHead

    transport = _Transport()
    protocol = SimpleNamespace(cycle=None)
    held = _HeldHead(transport, protocol)  # type: ignore[arg-type]
    protocol.cycle = cycle = _Cycle()
    held.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # before the response: passes through
    cycle.response_started = True
    held.write(b"HEAD1")
    assert transport.writes == [b"HTTP/1.1 100 Continue\r\n\r\n"]
    held.write(b"body")
    held.write(b"more")
    assert transport.writes[1:] == [b"HEAD1body", b"more"]
    cycle.response_complete = True
    held.flush()
    assert len(transport.writes) == 3  # nothing was held
    protocol.cycle = cycle = _Cycle()  # the next request on the connection: its head is held too
    cycle.response_started = True
    held.write(b"HEAD2")
    held.flush()  # a reply without a body (HEAD): its head at completion
    assert transport.writes[3:] == [b"HEAD2"]
    protocol.cycle = cycle = _Cycle()
    cycle.response_started = True
    held.write(b"HEAD3")
    held.close()  # e.g. the app failed after starting its reply
    assert transport.writes[4:] == [b"HEAD3"] and transport.closed and held.is_closing()


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_evalkit_serves_protocol_answers_every_kind_of_reply_whole(parser, monkeypatch):
    """Through the protocol `evalkit serve` uses (held heads), on uvicorn's httptools and h11
    protocols: a run equal to the in-process one, a 204 without a body, a HEAD reply, a 404 and
    a 500 of the served system, each on one connection."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from evalkit.systems.http import server as http_server
    from evalkit.systems.http.server import header_timeout_protocol
    from tests.systems_fixtures import RewritingSystem

    if parser == "h11":
        monkeypatch.setattr(http_server, "_http_protocol", lambda: H11Protocol)
    else:
        assert http_server._http_protocol().__name__ == "HttpToolsProtocol"

    def broken(response: object) -> object:
        raise RuntimeError("search broke")

    options = dict(datasets=DATASETS, scenarios=["explicit-fact", "supersession"], thresholds=None)
    with serving(create_app(ReferenceSystem()), http=header_timeout_protocol(10)) as url:
        served = run_eval(system=HttpSystem(url), **options)
        with httpx.Client(base_url=url) as client:
            namespace = client.post("/namespaces").json()["namespace"]
            assert client.delete(f"/namespaces/{namespace}").status_code == 204
            assert client.head("/info").status_code == 405  # a reply without a body, on the slow path
            search = {"query": "x", "top_k": 1, "now": "2026-01-01T00:00:00+00:00"}
            missing = client.post(f"/namespaces/{namespace}/search", json=search)
            assert missing.status_code == 404 and namespace in missing.json()["detail"]
            assert client.get("/info").json()["name"] == "reference"
    assert served.result.overall == run_eval(**options).result.overall
    app = create_app(RewritingSystem(broken))
    with serving(app, http=header_timeout_protocol(10)) as url, httpx.Client(base_url=url) as client:
        namespace = client.post("/namespaces").json()["namespace"]
        failed = client.post(
            f"/namespaces/{namespace}/search",
            json={"query": "x", "top_k": 1, "now": "2026-01-01T00:00:00+00:00"},
        )
        assert failed.status_code == 500
        assert failed.json()["detail"] == "internal error of the served system: RuntimeError: search broke"
        assert client.get("/info").status_code == 200


def test_search_replies_are_ascii_json_of_the_same_values_and_refuse_what_json_cannot_carry():
    import math

    from evalkit import Hit, SearchResponse
    from evalkit.systems.http.wire import search_batch_json, search_json

    hits = (
        Hit(id="a", content='café 日本 "quoted" x:NaN', similarity=1e-05, relevance=0.1),
        Hit(id="b", content="plain", similarity=0.3333333333333333, match_source=("bm25",)),
    )
    response = SearchResponse(hits=hits, candidates=2, dropped_ids=("c",))
    for body in (search_json(response), search_json(SearchResponse(hits=hits[1:]))):
        assert body.isascii()
        assert json.loads(body)["hits"][-1]["similarity"] == 0.3333333333333333
    assert json.loads(search_json(response))["hits"][0]["content"] == 'café 日本 "quoted" x:NaN'
    assert json.loads(search_batch_json([response, response]))["results"][1]["dropped_ids"] == ["c"]
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
            search_json(SearchResponse(hits=(Hit(id="a", relevance=bad),)))
    with pytest.raises(TypeError, match="is not JSON serializable"):
        search_json(SearchResponse(hits=(Hit(id="a", relevance=object()),)))  # type: ignore[arg-type]


_REPLIES = [
    {"hits": []},
    {"hits": [{"id": "a"}]},
    {"hits": [{"id": "a", "rank": 1, "relevance": 1, "match_source": ["bm25"], "standing": "superseded"}]},
    {
        "hits": [{"id": "a", "similarity": None, "low_confidence": True, "superseded_by": ["b"]}],
        "cut_tied": True,
    },
    {
        "hits": [{"id": "a"}],
        "candidates": 3,
        "filtered_out": 2,
        "min_relevance": 0.4,
        "dropped_ids": ["b", "c"],
    },
    {"hits": [], "gate_candidates": [{"id": "a"}, {"id": "b", "bm25": True, "similarity": 0.25}]},
    {"hits": [{"id": "a", "relevance": True}]},
    {"hits": [{"id": "a", "rank": "1"}]},
    {"hits": [{"id": 1}]},
    {"hits": [{"content": "no id"}]},
    {"hits": [{"id": "a", "score": 0.5}]},
    {"hits": [], "extra": 1},
    {"hits": [], "candidates": 1.5},
    {"hits": [], "min_relevance": "0.4"},
    {"hits": [], "gate_candidates": [{"id": "a", "bm25": 1}]},
    {"hits": [{"id": "a", "match_source": "bm25"}]},
    {"hits": {"id": "a"}},
    {},
    [],
]


@pytest.mark.parametrize("reply", _REPLIES, ids=[json.dumps(r)[:60] for r in _REPLIES])
def test_the_plain_reader_accepts_exactly_what_the_reply_models_accept_and_reads_the_same(reply):
    from pydantic import ValidationError

    from evalkit.systems.http.wire import (
        SearchBatchOut,
        SearchOut,
        plain_reader,
        plain_search_response,
        search_response,
    )

    for shape, raw, unwrap in [
        (SearchOut, json.dumps(reply), lambda body: [body]),
        (SearchBatchOut, json.dumps({"results": [reply, reply]}), lambda body: body["results"]),
    ]:
        try:
            model = shape.model_validate_json(raw)
        except ValidationError:
            with pytest.raises(ValidationError):
                plain_reader(shape).validate_json(raw)
            continue
        plain = plain_reader(shape).validate_json(raw)
        models = [model] if shape is SearchOut else model.results
        expected = [search_response(m) for m in models]
        assert [plain_search_response(p) for p in unwrap(plain)] == expected
        assert [plain_search_response(p) for p in unwrap(model.model_dump())] == expected


def test_the_plain_reader_refuses_a_model_with_validators_of_its_own():
    from evalkit.systems.http.wire import SearchIn, plain_reader

    with pytest.raises(TypeError, match=r"SearchIn has validators of its own \(_few_terms\)"):
        plain_reader(SearchIn)


def _recording(app):
    """`app` behind an ASGI wrapper that records each request as (method, path with the namespace
    as {ns}, its JSON body or None), and counts them per (method, path) as `_counting` does."""
    import re
    from collections import Counter

    seen: Counter[str] = Counter()
    log: list[tuple[str, str, object]] = []

    async def recorded(scope, receive, send):
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        path = re.sub(r"/namespaces/[^/]+", "/namespaces/{ns}", scope["path"])
        parts, more = [], True
        while more:
            message = await receive()
            parts.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(parts)
        seen[f"{scope['method']} {path}"] += 1
        log.append((scope["method"], path, json.loads(body) if body else None))
        delivered = False

        async def replay():
            nonlocal delivered
            if delivered:
                return await receive()
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    return recorded, seen, log


def test_a_builtin_run_sends_two_requests_per_scenario_and_one_drop_at_the_end_leaving_nothing():
    """Each scenario's drop goes with the next scenario's creation (`drop_with_create`); only the
    last one is a DELETE, sent by settle() at the end of the run, on the runner's thread."""
    inner = create_app(ReferenceSystem())
    app, seen, log = _recording(inner)
    with serving(app) as url:
        system = HttpSystem(url)
        assert system.info.drop_with_create and system.drop_with_create
        seen.clear()
        log.clear()
        before = set(threading.enumerate())
        remote = run_eval(datasets=DATASETS, system=system, thresholds=None, executor=SERIAL)
        started = [t.name for t in set(threading.enumerate()) - before if t.is_alive()]
        others = ("evalkit-store", "tqdm_monitor")  # the served store's thread, the progress bar's
        assert [name for name in started if not name.startswith(others)] == []  # no drops' thread
        assert dict(seen) == {
            "POST /namespaces": 15, "POST /namespaces/{ns}/search/batch": 15, "DELETE /namespaces/{ns}": 1
        }  # fmt: skip
        assert log[-1][0] == "DELETE" and system._pending is None
        creates = [body for method, path, body in log if method == "POST" and path == "/namespaces"]
        assert isinstance(creates[0], dict) and "drop" not in creates[0]
        assert all(isinstance(body, dict) and body["drop"] for body in creates[1:])
        assert len(inner.state.namespaces) == 0  # before close(): the run left nothing behind
        system.close()
    local = run_eval(datasets=DATASETS, thresholds=None)
    assert remote.result.overall == local.result.overall and remote.result.scenarios == local.result.scenarios


def _failing_drops(app):
    """`app` whose DELETE answers 500 "drop broke" (the namespace stays)."""

    async def wrapped(scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "DELETE":
            await JSONResponse({"detail": "drop broke"}, status_code=500)(scope, receive, send)
            return
        await app(scope, receive, send)

    return wrapped


@pytest.mark.parametrize("scenarios", [["explicit-fact"], ["explicit-fact", "supersession"]])
def test_the_last_drop_fails_the_run_at_its_end_naming_scenario_and_namespace(scenarios):
    with serving(_failing_drops(create_app(ReferenceSystem()))) as url:
        system = HttpSystem(url)
        with pytest.raises(AdapterError) as caught:
            run_eval(datasets=DATASETS, scenarios=scenarios, system=system, thresholds=None, executor=SERIAL)
        assert system._pending is None
        system.close()
    message = str(caught.value)
    assert "DELETE /namespaces/" in message and "HTTP 500: drop broke" in message
    assert f"(the drop of scenario {scenarios[-1]!r}'s namespace /namespaces/" in message
    assert "sent on its own: no later scenario's creation carried it)" in message


def test_a_held_drop_goes_with_the_next_creation_or_is_sent_by_settle_or_close(tmp_path):
    from evalkit import Thought

    inner = create_app(ReferenceSystem())
    app, seen, log = _recording(inner)
    with serving(app) as url:
        system = HttpSystem(url)
        for finish in ("creation", "settle", "close"):
            seen.clear()
            log.clear()
            with system.open(OpenContext(tmp_path, "s")) as memory:
                memory.add_thoughts([Thought("a", "alpha")])
            held = system._pending
            assert (
                held is not None
                and held.namespace == memory.namespace
                and not seen["DELETE /namespaces/{ns}"]
            )
            assert len(inner.state.namespaces) == 1
            if finish == "creation":
                with system.open(OpenContext(tmp_path, "t")) as memory:
                    memory.add_thoughts([Thought("b", "beta")])
                assert log[-1] == ("POST", "/namespaces", {"thoughts": log[-1][2]["thoughts"], "edges": [],
                                                           "drop": held.namespace})  # fmt: skip
                assert system._pending is not None and system._pending.scenario == "t"
                system.settle()
            elif finish == "settle":
                system.settle()
            else:
                system.close()
            assert system._pending is None and len(inner.state.namespaces) == 0
            assert seen["DELETE /namespaces/{ns}"] == 1
        other = HttpSystem(url)
        seen.clear()
        with other.open(OpenContext(tmp_path)) as memory:  # opened without a scenario: its drop is waited for
            memory.add_thoughts([Thought("a", "alpha")])
        assert other._pending is None and seen["DELETE /namespaces/{ns}"] == 1
        other.close()


def _drops_that_wait_for_each_other(app, count):
    """`app` whose DELETEs each wait (at most 10 s) until `count` of them have arrived, then go
    on; one that waited in vain answers 500 "the drops came one at a time"."""
    import asyncio

    arrived = 0
    together = asyncio.Event()

    async def wrapped(scope, receive, send):
        nonlocal arrived
        if scope["type"] == "http" and scope["method"] == "DELETE":
            arrived += 1
            if arrived == count:
                together.set()
            try:
                await asyncio.wait_for(together.wait(), 10)
            except TimeoutError:
                await JSONResponse({"detail": "the drops came one at a time"}, status_code=500)(
                    scope, receive, send
                )
                return
        await app(scope, receive, send)

    return wrapped


def test_settle_sends_the_drops_held_by_several_threads_at_once(tmp_path):
    """With N scenarios in flight a run ends holding N drops; settle() sends them together, so
    the run ends after one round trip, not N: here each DELETE waits until all three are in."""
    from evalkit import Thought

    inner = create_app(ReferenceSystem())
    with serving(_drops_that_wait_for_each_other(inner, 3)) as url:
        system = HttpSystem(url)
        all_held = threading.Barrier(3)  # alive together: a thread id is not reused while it holds a drop

        def scenario(name):
            with system.open(OpenContext(tmp_path, name)) as memory:
                memory.add_thoughts([Thought(name, f"{name} text")])
            all_held.wait(timeout=30)

        threads = [threading.Thread(target=scenario, args=(name,)) for name in ("a", "b", "c")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert len(system._drops) == 3 and len(inner.state.namespaces) == 3
        system.settle()
        assert system._drops == {} and len(inner.state.namespaces) == 0
        system.close()


def test_a_drop_that_fails_with_the_next_creation_names_its_scenario_and_creates_nothing(tmp_path):
    from evalkit import Thought

    inner = create_app(ReferenceSystem())
    with serving(inner) as url:
        system = HttpSystem(url)
        with system.open(OpenContext(tmp_path, "first")) as memory:
            memory.add_thoughts([Thought("a", "alpha")])
        assert httpx.delete(url + memory.path).status_code == 204  # gone behind the client's back
        with system.open(OpenContext(tmp_path, "second")) as memory:
            memory.add_thoughts([Thought("b", "beta")])
            with pytest.raises(AdapterError) as caught:
                memory.add_edges([])
        assert memory.path is None and system._pending is None and len(inner.state.namespaces) == 0
        system.close()
    message = str(caught.value)
    assert "POST /namespaces: HTTP 404: drop: no namespace" in message
    assert "(the drop of scenario 'first''s namespace /namespaces/" in message
    assert "sent with scenario 'second''s creation: that namespace was not there to drop" in message
    assert "nothing was created" in message


def test_a_creation_that_fails_after_its_drop_is_its_own_error_and_leaves_nothing(tmp_path):
    """The server drops first, then creates: a rejected seed (422) leaves the held drop done; the
    failure path's DELETE of it gets a 404, which is no error, and the scenario's error is alone."""
    from evalkit import Thought

    inner = create_app(ReferenceSystem())
    app, _, log = _recording(inner)
    with serving(app) as url:
        system = HttpSystem(url)
        with system.open(OpenContext(tmp_path, "first")) as memory:
            memory.add_thoughts([Thought("a", "alpha")])
        held = memory.namespace
        with pytest.raises(AdapterError) as caught, system.open(OpenContext(tmp_path, "second")) as memory:
            memory.add_thoughts([Thought("a", "alpha")])
            memory.add_edges([Edge("a", "zz", "replaces")])
        assert log[-2][2]["drop"] == held and log[-1][:2] == ("DELETE", "/namespaces/{ns}")
        assert system._pending is None and len(inner.state.namespaces) == 0
        system.close()
    assert "POST /namespaces: HTTP 422: edge 'a' -[replaces]-> 'zz'" in str(caught.value)
    assert not getattr(caught.value, "__notes__", None)


def _refusing_second_create(app, *, drops_fail: bool = False):
    """`app` answering the second `POST /namespaces` with 503 "busy" before doing anything (the
    drop it carries is not done), and, with `drops_fail`, every DELETE with 500 "drop broke"."""
    creates = 0

    async def wrapped(scope, receive, send):
        nonlocal creates
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == "/namespaces":
            creates += 1
            if creates == 2:
                await JSONResponse({"detail": "busy"}, status_code=503)(scope, receive, send)
                return
        if drops_fail and scope["type"] == "http" and scope["method"] == "DELETE":
            await JSONResponse({"detail": "drop broke"}, status_code=500)(scope, receive, send)
            return
        await app(scope, receive, send)

    return wrapped


@pytest.mark.parametrize("drops_fail", [False, True])
def test_a_held_drop_whose_creation_failed_is_sent_by_the_failure_path(drops_fail):
    inner = create_app(ReferenceSystem())
    app, seen, log = _recording(_refusing_second_create(inner, drops_fail=drops_fail))
    options = dict(datasets=DATASETS, scenarios=["explicit-fact", "supersession"], thresholds=None)
    with serving(app) as url:
        system = HttpSystem(url)
        seen.clear()
        with pytest.raises(AdapterError, match=r"POST /namespaces: HTTP 503: busy") as caught:
            run_eval(system=system, **options, executor=SERIAL)
        assert seen["DELETE /namespaces/{ns}"] == 1 and system._pending is None
        refused = [body for method, path, body in log if path == "/namespaces"][1]
        assert isinstance(refused, dict) and refused["drop"]  # it went with the refused creation
        assert log[-1][:2] == ("DELETE", "/namespaces/{ns}")  # and again on its own
        assert len(inner.state.namespaces) == (1 if drops_fail else 0)
        system.close()
    notes = getattr(caught.value, "__notes__", [])
    if not drops_fail:
        assert not notes
    else:
        assert len(notes) == 1 and "HTTP 500: drop broke" in notes[0]
        assert "(the drop of scenario 'explicit-fact''s namespace /namespaces/" in notes[0]
        assert "sent on its own after the creation it went with failed)" in notes[0]


class _InterruptedAt(httpx.BaseTransport):
    """httpx's transport, raising KeyboardInterrupt (a Ctrl-C) instead of sending the `at`-th
    `POST /namespaces`."""

    def __init__(self, at: int) -> None:
        self.inner = httpx.HTTPTransport()
        self.at = at
        self.creates = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path == "/namespaces":
            self.creates += 1
            if self.creates == self.at:
                raise KeyboardInterrupt
        return self.inner.handle_request(request)


def test_an_interrupted_run_sends_the_held_drop_and_leaves_nothing_on_the_server():
    inner = create_app(ReferenceSystem())
    app, seen, _ = _recording(inner)
    with serving(app) as url:
        system = HttpSystem(url, transport=_InterruptedAt(3))
        seen.clear()
        with pytest.raises(KeyboardInterrupt):
            run_eval(datasets=DATASETS, system=system, thresholds=None, executor=SERIAL)
        # two scenarios ran: the first's drop went with the second's creation, the second's is the
        # DELETE of the third's failure path (its creation never went out)
        assert dict(seen) == {
            "POST /namespaces": 2, "POST /namespaces/{ns}/search/batch": 2, "DELETE /namespaces/{ns}": 1
        }  # fmt: skip
        assert system._pending is None and len(inner.state.namespaces) == 0
        system.close()


def _as_old_server(app):
    """`app` as a server from before `drop_with_create`: its /info lacks the flag and says
    `concurrent_connections` (this client's contract no longer defines it), and a creation
    carrying `drop` is refused with 422, as the strict body of such a server would."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or scope["path"] not in {"/info", "/namespaces"}:
            await app(scope, receive, send)
            return
        if scope["path"] == "/namespaces":
            message = await receive()
            if b'"drop"' in message.get("body", b""):
                await JSONResponse({"detail": "drop: extra inputs are not permitted"}, status_code=422)(
                    scope, receive, send
                )
                return

            async def replay():
                return message

            await app(scope, replay, send)
            return
        parts = []

        async def held(message):
            parts.append(message)

        await app(scope, receive, held)
        body = json.loads(b"".join(m.get("body", b"") for m in parts[1:]))
        body.pop("drop_with_create")
        body["concurrent_connections"] = True
        await JSONResponse(body)(scope, receive, send)

    return wrapped


def test_on_a_server_without_drop_with_create_every_drop_is_a_delete_waited_for(tmp_path):
    from evalkit import Thought

    inner = create_app(ReferenceSystem())
    app, seen = _counting(_as_old_server(inner))
    options = dict(datasets=DATASETS, scenarios=["explicit-fact", "supersession"], thresholds=None)
    with serving(app) as url:
        with pytest.warns(AdapterWarning, match=r"ignored: SystemInfo\.concurrent_connections \(each"):
            system = HttpSystem(url)
        assert system.seeded_create and not system.info.drop_with_create and not system.drop_with_create
        with system.open(OpenContext(tmp_path, "s")) as memory:
            memory.add_thoughts([Thought("a", "alpha")])
        assert system._pending is None and seen["DELETE /namespaces/{ns}"] == 1
        assert len(inner.state.namespaces) == 0
        seen.clear()
        run = run_eval(system=system, **options)
        assert dict(seen) == {
            "POST /namespaces": 2, "POST /namespaces/{ns}/search/batch": 2, "DELETE /namespaces/{ns}": 2
        }  # fmt: skip
        assert system._pending is None and len(inner.state.namespaces) == 0
    assert run.result.overall == run_eval(**options).result.overall
