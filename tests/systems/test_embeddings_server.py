"""`evalkit serve --embeddings`: an OpenAI-compatible embeddings endpoint over the run's embedder,
asked by real clients (the `openai` package, httpx, mem0's own OpenAI embedder) on 127.0.0.1."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import numpy as np
import openai
import pytest

import evalkit
from evalkit.cli import main
from evalkit.embedders import HashingEmbedder
from evalkit.embedders.base import Vectors
from evalkit.systems.http.embeddings import MAX_INPUTS, create_embeddings_app
from evalkit.systems.libraries.mem0 import Mem0System, Memory  # mem0 imported with telemetry off
from tests.processes import read_line, started
from tests.servers import serving
from tests.shared import ROOT

TOKEN = "test-token-1"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TEXTS = ["the orders API listens on port 8443", "billing runs nightly", ""]


class Counting(HashingEmbedder):
    """The deterministic embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__(384)
        self.texts: list[str] = []

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        self.texts += texts
        return super().embed_passages(texts)


@pytest.fixture
def endpoint() -> Iterator[tuple[str, Counting]]:
    embedder = Counting()
    with serving(create_embeddings_app(embedder, token=TOKEN)) as url:
        yield f"{url}/v1", embedder


def test_the_openai_client_gets_the_embedders_vectors_in_floats_and_base64(endpoint):
    url, embedder = endpoint
    client = openai.OpenAI(api_key=TOKEN, base_url=url, max_retries=0)
    expected = HashingEmbedder(384).embed_passages(TEXTS)
    reply = client.embeddings.create(input=TEXTS, model="text-embedding-3-small")
    assert reply.model == "hashing-fnv1a-384"  # the model that answered, whatever was asked
    assert [item.index for item in reply.data] == [0, 1, 2]
    assert np.array_equal(np.asarray([item.embedding for item in reply.data], dtype=np.float32), expected)
    assert reply.usage.prompt_tokens == reply.usage.total_tokens == 10  # words
    encoded = client.embeddings.create(input=TEXTS[0], model="m", encoding_format="base64", dimensions=384)
    (item,) = encoded.data
    assert isinstance(item.embedding, str)
    assert np.array_equal(np.frombuffer(base64.b64decode(item.embedding), dtype="<f4"), expected[0])
    assert embedder.texts == [*TEXTS, TEXTS[0]]
    models = httpx.get(f"{url}/models", headers=AUTH).json()
    assert [model["id"] for model in models["data"]] == ["hashing-fnv1a-384"]


@pytest.mark.parametrize(
    ("body", "param", "message"),
    [
        ({"model": "m"}, "input", "`input` is required"),
        ({"input": [], "model": "m"}, "input", "non-empty list of strings"),
        ({"input": {"text": "a"}, "model": "m"}, "input", "non-empty list of strings"),
        ({"input": [[1, 2]], "model": "m"}, "input", "`input[0]` is a list; token arrays are not supported"),
        ({"input": ["a", None], "model": "m"}, "input", "`input[1]` is null; send strings only"),
        ({"input": ["a"] * (MAX_INPUTS + 1), "model": "m"}, "input", f"over {MAX_INPUTS}"),
        ({"input": "a"}, "model", "`model` is required"),
        ({"input": "a", "model": "m", "encoding_format": "int8"}, "encoding_format", "'float' or 'base64'"),
        ({"input": "a", "model": "m", "dimensions": 1536}, "dimensions", "gives 384: send 384 or leave"),
        (["a"], None, "the body is a list; send an object"),
    ],
)
def test_bad_input_is_a_400_in_openais_shape_naming_the_field(endpoint, body, param, message):
    url, embedder = endpoint
    reply = httpx.post(f"{url}/embeddings", json=body, headers=AUTH)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert message in error["message"]
    assert embedder.texts == []


def test_the_openai_client_raises_the_endpoints_message(endpoint):
    url, _ = endpoint
    client = openai.OpenAI(api_key=TOKEN, base_url=url, max_retries=0)
    with pytest.raises(openai.BadRequestError, match="`dimensions` is 8") as raised:
        client.embeddings.create(input="a", model="m", dimensions=8)
    assert raised.value.param == "dimensions"


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": b"Bearer \xe9"}]
)
def test_every_request_needs_the_token(endpoint, headers):
    url, embedder = endpoint
    for reply in (
        httpx.post(f"{url}/embeddings", json={"input": "a", "model": "m"}, headers=headers),
        httpx.get(f"{url}/models", headers=headers),
        httpx.get(f"{url}/elsewhere", headers=headers),
    ):
        assert reply.status_code == 401
        error = reply.json()["error"]
        assert error["code"] == "invalid_api_key" and "Authorization: Bearer <token>" in error["message"]
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(api_key="wrong", base_url=url, max_retries=0).embeddings.create(input="a", model="m")
    assert embedder.texts == []


def test_other_paths_bodies_and_sizes_are_refused_in_openais_shape(endpoint):
    url, _ = endpoint
    cases = [
        (httpx.get(f"{url}/embeddings", headers=AUTH), 405, "GET /v1/embeddings"),
        (httpx.post(f"{url}/chat/completions", json={}, headers=AUTH), 404, "answers POST /v1/embeddings"),
        (httpx.post(f"{url}/embeddings", content=b"{", headers=AUTH), 400, "the body is not JSON"),
        (httpx.post(f"{url}/embeddings", content=b"\xff", headers=AUTH), 400, "the body is not JSON"),
    ]
    for reply, status, message in cases:
        assert reply.status_code == status, reply.text
        assert message in reply.json()["error"]["message"]
    small = create_embeddings_app(HashingEmbedder(384), token=TOKEN, max_body_bytes=100)
    with serving(small) as small_url:
        reply = httpx.post(
            f"{small_url}/v1/embeddings", json={"input": "a" * 200, "model": "m"}, headers=AUTH
        )
    assert reply.status_code == 413 and "over 100 bytes" in reply.json()["error"]["message"]


class Broken(HashingEmbedder):
    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        raise RuntimeError("model file truncated")


def test_an_embedder_failure_is_a_500_server_error_and_the_server_keeps_serving():
    with serving(create_embeddings_app(Broken(384), token=TOKEN)) as url:
        reply = httpx.post(f"{url}/v1/embeddings", json={"input": "a", "model": "m"}, headers=AUTH)
        assert reply.status_code == 500
        assert reply.json()["error"] == {
            "message": "the embedder failed: RuntimeError: model file truncated",
            "type": "server_error", "param": None, "code": None,
        }  # fmt: skip
        assert httpx.get(f"{url}/v1/models", headers=AUTH).status_code == 200


# --- mem0's own OpenAI embedder over the endpoint ----------------------------------------------


class Mem0OverEndpoint(Mem0System):
    """`--system mem0` with mem0's own OpenAI embedder, pointed at the endpoint by its base URL,
    instead of the run's embedder plugged in (the embedder is kept only for its dimension)."""

    url = ""

    def _connect(self) -> Memory:
        from mem0.embeddings.openai import OpenAIEmbedding

        config = self.mem0_config()
        config["embedder"]["config"] = {"api_key": TOKEN, "openai_base_url": self.url, "embedding_dims": 384}
        memory = Memory.from_config(config)
        assert isinstance(memory.embedding_model, OpenAIEmbedding)
        return memory


def _rankings(run: Any) -> list[tuple[str, int, list[str], dict[str, float], list[float | None]]]:
    return [
        (s.name, q.index, q.retrieved, q.metrics, [h.similarity for h in q.hits])
        for s in run.result.scenarios
        for q in s.queries
    ]


def test_mem0_over_the_endpoint_ranks_the_built_in_suite_as_the_built_in_mem0(endpoint):
    url, embedder = endpoint
    Mem0OverEndpoint.url = url
    over = evalkit.run_eval(system=Mem0OverEndpoint(embedder=HashingEmbedder(384)), thresholds=None)
    direct = evalkit.run_eval(system="mem0", thresholds=None)
    assert len(embedder.texts) > 100  # every thought and query went through the endpoint
    assert _rankings(over) == _rankings(direct)  # same ids, metrics and similarities, query by query
    assert over.result.overall.metrics == direct.result.overall.metrics


@pytest.mark.real
def test_the_real_embedder_is_served_as_itself():
    from evalkit.embedders.factory import make_embedder

    embedder = make_embedder("real", use_cache=False, progress=False)
    with serving(create_embeddings_app(embedder, token=TOKEN)) as url:
        client = openai.OpenAI(api_key=TOKEN, base_url=f"{url}/v1", max_retries=0)
        reply = client.embeddings.create(input=TEXTS[:2], model="m")
    assert reply.model == "sentence-transformers/all-MiniLM-L6-v2"
    served = np.asarray([item.embedding for item in reply.data], dtype=np.float32)
    assert np.array_equal(served, embedder.embed_passages(TEXTS[:2]))


# --- the command ------------------------------------------------------------------------------


def _serve(tmp_path: Any, *argv: str, token: str | None = TOKEN) -> Any:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}
    env.pop("EVALKIT_SERVE_TOKEN", None)
    if token is not None:
        env["EVALKIT_SERVE_TOKEN"] = token
    return started(
        [sys.executable, "-m", "evalkit", "serve", "--embeddings", *argv], env=env, cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_evalkit_serve_embeddings_prints_its_base_url_answers_and_exits_130(tmp_path):
    with _serve(tmp_path, "--port", "0") as child:
        line = read_line(child.stdout, 60)
        assert line.startswith("evalkit serve: http://127.0.0.1:"), line
        assert "OpenAI-compatible embeddings: hashing-fnv1a-384, 384 dimensions" in line
        url = line.split()[2]
        assert url.endswith("/v1")
        client = openai.OpenAI(api_key=TOKEN, base_url=url, max_retries=0)
        (item,) = client.embeddings.create(input="billing runs nightly", model="m").data
        assert np.array_equal(
            np.float32(item.embedding), HashingEmbedder(384).embed_query("billing runs nightly")
        )
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
    assert child.returncode == 130, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "token", "message"),
    [
        ([], None, "--embeddings needs a bearer token: set $EVALKIT_SERVE_TOKEN"),
        (["--mcp"], TOKEN, "--embeddings serves over HTTP; leave out --mcp"),
        (["--host", "0.0.0.0"], TOKEN, "is not loopback; add --allow-remote"),
    ],
)
def test_serve_embeddings_refuses_without_a_token_with_mcp_or_off_loopback(
    monkeypatch, capsys, argv, token, message
):
    monkeypatch.delenv("EVALKIT_SERVE_TOKEN", raising=False)
    if token is not None:
        monkeypatch.setenv("EVALKIT_SERVE_TOKEN", token)
    assert main(["serve", "--embeddings", "--port", "0", *argv]) == 2
    assert message in capsys.readouterr().err
