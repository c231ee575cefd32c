"""An OpenAI-compatible embeddings endpoint over the run's embedder (`evalkit serve --embeddings`),
so that a system which calls an embeddings API (mem0's `openai` embedder, an MCP memory server, a
service of one's own) runs offline with the vectors evalkit's own systems get.

Endpoints (JSON, OpenAI's shapes; a client's base URL is `http://HOST:PORT/v1`):
- `POST /v1/embeddings` `{"input": TEXT | [TEXT, …], "model": NAME, "encoding_format":
  "float" | "base64", "dimensions": N, "user": …}` → `{"object": "list", "data": [{"object":
  "embedding", "index": i, "embedding": [floats] | BASE64}, …], "model": SERVED, "usage":
  {"prompt_tokens": W, "total_tokens": W}}`. Every text is embedded as a passage
  (`Embedder.embed_passages`: an embeddings API cannot tell a query from a passage; the packaged
  MiniLM and the deterministic embedder embed both alike, an E5 model would miss its query
  prefix). Any `model` name is accepted (clients have their own defaults); the reply names the
  one that answered (`served_model`). `dimensions`, when sent, must be the embedder's. `base64`
  is the little-endian float32 bytes, as OpenAI sends them. The usage counts whitespace-separated
  words (no tokenizer is run). Other fields are ignored.
- `GET /v1/models` → `{"object": "list", "data": [{"id": SERVED, "object": "model", …}]}`.

Every request carries `Authorization: Bearer <token>` (an OpenAI client sends its API key so),
else 401. Errors are OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`: 400
naming the field (`param`) for a bad body, 401, 404 / 405 for another path or method, 408 for a
body that does not arrive within `body_timeout`, 413 over `MAX_BODY_BYTES`, 500 (`server_error`)
when the embedder fails. Texts are embedded on one thread (an embedder and its cache are used
from one thread), so the event loop stays free for signals: the server exits 130 / 143 like
`evalkit serve`.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from evalkit.embedders import Embedder
from evalkit.embedders.factory import embedder_provenance
from evalkit.systems.http.server import HEADER_TIMEOUT, header_timeout_protocol, listening_socket

MAX_INPUTS = 2048
"""Texts in one request, as OpenAI allows."""

MAX_BODY_BYTES = 16 * 1024 * 1024
"""The largest request body read (a larger one is a 413)."""


class BadRequest(Exception):
    """A request the endpoint refuses: `status`, OpenAI's error `type` and `code`, the field (`param`)."""

    def __init__(
        self, message: str, *, param: str | None = None, status: int = 400,
        kind: str = "invalid_request_error", code: str | None = None,
    ) -> None:  # fmt: skip
        super().__init__(message)
        self.param, self.status, self.kind, self.code = param, status, kind, code

    def response(self) -> JSONResponse:
        error = {"message": str(self), "type": self.kind, "param": self.param, "code": self.code}
        return JSONResponse({"error": error}, status_code=self.status)


def served_model(embedder: Embedder) -> str:
    """The name the endpoint answers with: the real model's name, else the embedder's identity
    (`hashing-fnv1a-384` for the deterministic embedder)."""
    info = embedder_provenance(embedder)
    return info.model or info.identity


def parse_request(body: bytes, dim: int) -> tuple[list[str], str]:
    """The texts and the encoding of an embeddings request body; BadRequest naming the field."""
    try:
        request = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest(
            f"the body is not JSON ({exc}); send a JSON object such as "
            '{"input": "some text", "model": "any-name"}'
        ) from None
    if not isinstance(request, dict):
        raise BadRequest(f"the body is {_json_kind(request)}; send an object with `input` and `model`")
    if "input" not in request:
        raise BadRequest("`input` is required: a string or a list of strings", param="input")
    texts = request["input"]
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts:
        raise BadRequest("`input` must be a string or a non-empty list of strings", param="input")
    if len(texts) > MAX_INPUTS:
        raise BadRequest(
            f"`input` has {len(texts)} texts, over {MAX_INPUTS}; send them in several requests", param="input"
        )
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            token_ids = isinstance(text, int) or (
                isinstance(text, list) and all(isinstance(t, int) for t in text)
            )
            fix = "token arrays are not supported: send the text" if token_ids else "send strings only"
            raise BadRequest(f"`input[{index}]` is {_json_kind(text)}; {fix}", param="input")
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("`model` is required: a model name (any name; the reply says which one answered)",
                         param="model")  # fmt: skip
    encoding = request.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise BadRequest(
            f"`encoding_format` must be 'float' or 'base64', not {encoding!r}", param="encoding_format"
        )
    dimensions = request.get("dimensions")
    if dimensions is not None and (isinstance(dimensions, bool) or dimensions != dim):
        raise BadRequest(
            f"`dimensions` is {dimensions!r}, but this endpoint's embedder gives {dim}: send {dim} or "
            "leave it out",
            param="dimensions",
        )
    return texts, encoding


def _json_kind(value: Any) -> str:
    kinds = {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "an object"}
    return "null" if value is None else kinds.get(type(value), "a string")


def embeddings_reply(vectors: np.ndarray, encoding: str, model: str, texts: list[str]) -> dict[str, Any]:
    """OpenAI's reply for `vectors` (one row per text, in order)."""
    data = [
        {
            "object": "embedding",
            "index": index,
            "embedding": (
                vector.tolist() if encoding == "float"
                else base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")
            ),
        }
        for index, vector in enumerate(vectors)
    ]  # fmt: skip
    words = sum(len(text.split()) for text in texts)
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": words, "total_tokens": words},
    }


def create_embeddings_app(
    embedder: Embedder,
    *,
    token: str,
    body_timeout: float = 30.0,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> Starlette:
    """The endpoint of the module docstring over `embedder`, demanding `token` (printable ASCII,
    see `evalkit.systems.secrets.check_token`) on every request."""
    model = served_model(embedder)
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalkit-embeddings")

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            executor.shutdown(wait=False, cancel_futures=True)

    async def embeddings(request: Request) -> Response:
        body = await _read_body(request, body_timeout, max_body_bytes)
        texts, encoding = parse_request(body, embedder.dim)
        try:
            vectors = await asyncio.get_running_loop().run_in_executor(
                executor, embedder.embed_passages, texts
            )
        except Exception as exc:
            raise BadRequest(
                f"the embedder failed: {type(exc).__name__}: {exc}", status=500, kind="server_error"
            ) from exc
        return JSONResponse(embeddings_reply(vectors, encoding, model, texts))

    async def models(_: Request) -> Response:
        listed = {"id": model, "object": "model", "created": 0, "owned_by": "evalkit"}
        return JSONResponse({"object": "list", "data": [listed]})

    async def refused(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, BadRequest)
        return exc.response()

    async def unrouted(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return BadRequest(
            f"{request.method} {request.url.path}: {exc.detail}; this server answers POST /v1/embeddings "
            "and GET /v1/models",
            status=exc.status_code,
        ).response()

    return Starlette(
        routes=[
            Route("/v1/embeddings", embeddings, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
        ],
        middleware=[Middleware(_TokenCheck, expected=b"Bearer " + token.encode("ascii"))],
        exception_handlers={BadRequest: refused, HTTPException: unrouted},
        lifespan=lifespan,
    )


class _TokenCheck:
    """The bearer token, checked before routing (compared as bytes in constant time): 401 without it."""

    def __init__(self, app: Any, expected: bytes) -> None:
        self.app = app
        self.expected = expected

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not hmac.compare_digest(
            dict(scope["headers"]).get(b"authorization", b""), self.expected
        ):
            refused = BadRequest(
                "missing or wrong API key: send 'Authorization: Bearer <token>' (an OpenAI client's "
                "api_key) with the token of $EVALKIT_SERVE_TOKEN",
                status=401,
                code="invalid_api_key",
            )
            await refused.response()(scope, receive, send)
            return
        await self.app(scope, receive, send)


async def _read_body(request: Request, timeout: float, limit: int) -> bytes:
    """The body, read within `timeout` seconds and counted while it streams (413 past `limit`)."""
    too_big = BadRequest(f"request body over {limit} bytes; send fewer texts per request", status=413)
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise too_big
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise too_big
                chunks.append(chunk)
    except TimeoutError:
        raise BadRequest(f"the request body did not arrive within {timeout:g} s", status=408) from None
    return b"".join(chunks)


def serve_embeddings(embedder: Embedder, *, host: str, port: int, token: str, body_timeout: float) -> None:
    """Serve the endpoint with uvicorn on `host`:`port` until SIGINT or SIGTERM (uvicorn raises
    the signal again after its shutdown, so the CLI exits 130 or 143). Prints the base URL
    clients are given once listening; UsageError for a port that cannot be bound."""
    sock = listening_socket(host, port)
    bound = sock.getsockname()[1]
    config = uvicorn.Config(
        create_embeddings_app(embedder, token=token, body_timeout=body_timeout),
        log_level="warning",
        http=header_timeout_protocol(HEADER_TIMEOUT),
        timeout_graceful_shutdown=5,
        proxy_headers=False,
    )
    url = f"http://{f'[{host}]' if ':' in host else host}:{bound}/v1"
    print(
        f"evalkit serve: {url} (OpenAI-compatible embeddings: {served_model(embedder)}, {embedder.dim} "
        "dimensions; clients send $EVALKIT_SERVE_TOKEN as their API key); Ctrl-C stops",
        flush=True,
    )
    with sock:
        uvicorn.Server(config).run(sockets=[sock])
