"""evalkit's HTTP contract served over a memory system with FastAPI (`evalkit serve`).

Endpoints (JSON; shapes in `evalkit.systems.wire`; the OpenAPI document is at `/openapi.json`):
- `GET /info` → SystemInfo: name, capabilities, describe()
- `POST /namespaces` → NamespaceOut: a fresh, isolated memory
- `DELETE /namespaces/{ns}` → 204: the memory and its files are gone
- `POST /namespaces/{ns}/thoughts` (ThoughtsIn) → AddedOut
- `POST /namespaces/{ns}/edges` (EdgesIn) → AddedOut
- `POST /namespaces/{ns}/search` (SearchIn) → SearchOut
- `POST /namespaces/{ns}/search/batch` (SearchBatchIn) → SearchBatchOut: up to
  `MAX_SEARCH_BATCH` searches answered in order, in one call on the store thread (advertised
  as `/info`'s `search_batch`, so the client uses it)
Replies that carry search results are serialised straight from the system's records
(`wire.search_json`), not validated again: the client validates what it receives.
- `POST /namespaces/{ns}/thoughts/delete` and `.../thoughts/update`: the operations of a
  scenario's steps (`evalkit.systems.http_operations`)
Errors, all `ErrorOut` (`{"detail": ...}`, JSON in ASCII, so any input can be echoed): 400 for a
body that is not JSON (or not UTF-8, or nested too deeply), 401 without the bearer token (when
one is set), 404 for an unknown namespace, 408 for a body that does not arrive within the request
timeout, 413 for a body over `max_body_bytes` (counted while it streams in: a chunked upload is
cut off at the limit, never read whole), 422 for a body that does not match its shape (one
`{loc, msg, type}` per problem; the input is not echoed) or that the system rejects (StoreError,
e.g. an edge to an unknown id: `detail` is the reason), 503 when the namespace limit is reached or
a request runs past the request timeout, 500 for a bug of the served system (its exception's
type and message; the server keeps serving).

Bounds (`Limits`, see `evalkit.systems.namespaces`): a query's length and terms (wire.py), the
request timeout of every call on a memory, the namespace cap with eviction of idle ones, and a
header timeout: a connection must deliver a request's headers within `header_timeout` seconds
(a half-open connection is closed). Calls on memories run on one store thread, so the event
loop stays free: SIGINT and SIGTERM stop the server during a long request, and `serve` exits
130 / 143 like every evalkit command.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager, suppress
from typing import Any

import uvicorn
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from uvicorn.protocols.http.h11_impl import H11Protocol

from evalkit.errors import EvalkitError, UsageError
from evalkit.systems.capabilities import declared_capabilities
from evalkit.systems.http_operations import add_operation_routes
from evalkit.systems.namespaces import Limits, NamespaceLimit, Namespaces, RequestTimeout, UnknownNamespace
from evalkit.systems.protocol import MemorySystem
from evalkit.systems.wire import (
    MAX_SEARCH_BATCH,
    AddedOut,
    EdgesIn,
    ErrorOut,
    NamespaceOut,
    SearchBatchIn,
    SearchBatchOut,
    SearchIn,
    SearchOut,
    SystemInfo,
    ThoughtsIn,
    edges_out,
    search_batch_json,
    search_json,
    thoughts_out,
)

MAX_BODY_BYTES = 16 * 1024 * 1024
"""The largest request body the server reads (a larger one is a 413)."""

HEADER_TIMEOUT = 10.0
"""Seconds a connection has to deliver a request's headers before it is closed."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": description}
    for status, description in {
        400: "The body is not JSON (or not UTF-8, or nested too deeply)",
        401: "Missing or wrong bearer token (when the server has one)",
        404: "No such namespace",
        408: "The body did not arrive within the request timeout",
        413: "Body over the size limit",
        422: "The body does not match its shape (one entry per problem), or the system rejected it",
        500: "A bug of the served system",
        503: "The namespace limit is reached, or the request ran past the request timeout",
    }.items()
}


class _AsciiJSON(JSONResponse):
    """JSON with every non-ASCII character escaped: a lone surrogate echoed from the input (JSON
    can carry `\\ud800`) cannot be encoded as UTF-8 and made every such reply a 500."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def create_app(
    system: MemorySystem,
    *,
    token: str | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    limits: Limits | None = None,
) -> FastAPI:
    """A FastAPI app serving `system` under the contract above. With `token` (printable ASCII,
    see `evalkit.systems.secrets.check_token`), every request must carry
    `Authorization: Bearer <token>` (401 otherwise). Namespaces are dropped at shutdown, and
    every `limits.idle_timeout / 2` seconds those idle for longer."""
    namespaces = Namespaces(system, limits)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        sweeper = asyncio.create_task(_evict_periodically(namespaces))
        try:
            yield
        finally:
            sweeper.cancel()
            with suppress(asyncio.CancelledError):
                await sweeper
            namespaces.close()

    app = FastAPI(
        title="evalkit memory system contract",
        version="1",
        description="Isolated memories of one system: add thoughts and edges, search. See evalkit's README.",
        lifespan=lifespan,
        default_response_class=_AsciiJSON,
        responses=_ERRORS,
    )
    app.state.namespaces = namespaces
    app.add_middleware(
        _Guard, token=token, max_body_bytes=max_body_bytes, timeout=namespaces.limits.request_timeout
    )

    def openapi() -> dict[str, Any]:
        """FastAPI's document, plus the bearer scheme (required when the server has a token)."""
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes
            )
            document.setdefault("components", {})["securitySchemes"] = {
                "bearer": {"type": "http", "scheme": "bearer", "description": "EVALKIT_SERVE_TOKEN"}
            }
            document["security"] = [{"bearer": []}] if token is not None else [{}, {"bearer": []}]
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to extend it

    statuses: dict[type[Exception], int] = {
        UnknownNamespace: 404,
        NamespaceLimit: 503,
        RequestTimeout: 503,
        EvalkitError: 422,
    }
    for kind, status in statuses.items():
        app.add_exception_handler(kind, _status_handler(status))

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = list(exc.errors())
        not_json = [p for p in problems if p.get("type") == "json_invalid"]
        if not_json:
            reason = (not_json[0].get("ctx") or {}).get("error", "JSON decode error")
            return _error(400, f"the body is not JSON ({reason}); send a JSON object")
        return _AsciiJSON(
            {
                "detail": [
                    {"loc": [p if isinstance(p, int) else str(p) for p in item.get("loc", ())],
                     "msg": str(item.get("msg", "")), "type": str(item.get("type", ""))}
                    for item in problems
                ]
            },
            status_code=422,
        )  # fmt: skip

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> Response:
        detail = exc.detail
        if exc.status_code == 400 and detail == "There was an error parsing the body":
            detail = "the body cannot be parsed (not UTF-8, or nested too deeply); send UTF-8 JSON"
        return _AsciiJSON({"detail": detail}, status_code=exc.status_code, headers=exc.headers)

    @app.get("/info", summary="The system: its name, capabilities and description")
    async def info() -> SystemInfo:
        return SystemInfo(
            name=system.name,
            capabilities=sorted(declared_capabilities(system)),
            describe=system.describe(),
            search_batch=MAX_SEARCH_BATCH,
        )

    @app.post(
        "/namespaces",
        status_code=201,
        summary="Open a fresh, empty, isolated memory (one per scenario)",
        response_description="Created: the namespace's id",
    )
    async def create() -> NamespaceOut:
        return NamespaceOut(namespace=await namespaces.run(namespaces.create))

    @app.delete(
        "/namespaces/{namespace}",
        status_code=204,
        summary="Drop a memory and its files",
        response_description="Dropped (no body)",
    )
    async def drop(namespace: str) -> Response:
        await namespaces.run(namespaces.drop, namespace)
        return Response(status_code=204)

    @app.post(
        "/namespaces/{namespace}/thoughts",
        summary="Add thoughts (the system embeds them)",
        response_description="How many were added",
    )
    async def add_thoughts(namespace: str, body: ThoughtsIn) -> AddedOut:
        await namespaces.run(namespaces.get(namespace).add_thoughts, thoughts_out(body))
        return AddedOut(added=len(body.thoughts))

    @app.post(
        "/namespaces/{namespace}/edges",
        summary="Add typed edges between added thoughts",
        response_description="How many were added",
    )
    async def add_edges(namespace: str, body: EdgesIn) -> AddedOut:
        await namespaces.run(namespaces.get(namespace).add_edges, edges_out(body))
        return AddedOut(added=len(body.edges))

    @app.post(
        "/namespaces/{namespace}/search",
        response_model=SearchOut,
        summary="One search: the best top_k thoughts, best first",
        response_description="The hits, best first, and what the relevance gate saw",
    )
    async def search(namespace: str, body: SearchIn) -> Response:
        memory = namespaces.get(namespace)
        options = body.model_dump()
        query = options.pop("query")
        response = await namespaces.run(lambda: memory.search(query, **options))
        return Response(search_json(response), media_type="application/json")

    @app.post(
        "/namespaces/{namespace}/search/batch",
        response_model=SearchBatchOut,
        summary=f"Up to {MAX_SEARCH_BATCH} searches in one request, answered in order",
        response_description="One result per search, in the order asked",
    )
    async def search_batch(namespace: str, body: SearchBatchIn) -> Response:
        memory = namespaces.get(namespace)
        asked = [search.model_dump() for search in body.searches]

        def run_all() -> list[Any]:
            return [memory.search(options.pop("query"), **options) for options in asked]

        return Response(search_batch_json(await namespaces.run(run_all)), media_type="application/json")

    add_operation_routes(app, namespaces, declared_capabilities(system), _error)
    return app


async def _evict_periodically(namespaces: Namespaces) -> None:
    """Drop idle namespaces every half idle timeout (at most every minute), until cancelled."""
    while True:
        await asyncio.sleep(min(60.0, namespaces.limits.idle_timeout / 2))
        with suppress(EvalkitError):
            await namespaces.run(namespaces.evict_idle)


def _status_handler(status: int) -> Callable[[Request, Exception], Awaitable[Response]]:
    async def handler(_: Request, exc: Exception) -> Response:
        return _error(status, str(exc))

    return handler


def _error(status: int, detail: str) -> JSONResponse:
    return _AsciiJSON({"detail": detail}, status_code=status)


class _Guard:
    """The outermost checks of every HTTP request, as plain ASGI: the bearer token (compared as
    bytes in constant time, so a non-ASCII header is a 401, not a 500), then the body, read here
    within `timeout` seconds and counted while it streams (413 at the limit, whether or not a
    Content-Length was sent), then handed to the app. An exception the app lets through is a
    500 naming it, logged as one line on stderr (Starlette's error middleware would print a
    traceback and leave the connection unusable)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], *, token: str | None,
                 max_body_bytes: int, timeout: float) -> None:  # fmt: skip
        self.app = app
        self.expected = None if token is None else b"Bearer " + token.encode("utf-8")
        self.max_body_bytes = max_body_bytes
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if self.expected is not None and not hmac.compare_digest(
            headers.get(b"authorization", b""), self.expected
        ):
            await _send_error(
                send, 401, "missing or wrong bearer token: send 'Authorization: Bearer <token>'"
            )
            return
        declared = headers.get(b"content-length")
        too_big = f"request body over {self.max_body_bytes} bytes; send smaller batches"
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body_bytes):
            await _send_error(send, 413, too_big)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        try:
            async with asyncio.timeout(self.timeout):  # one deadline for the whole body, no task per read
                while more and size <= self.max_body_bytes:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    chunks.append(chunk)
                    more = message.get("more_body", False)
        except TimeoutError:
            await _send_error(send, 408, f"the request body did not arrive within {self.timeout:g} s")
            return
        if size > self.max_body_bytes:
            await _send_error(send, 413, too_big)
            return
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            await self.app(scope, replay, tracked)
        except Exception as exc:  # the served system's bug: one line, a 500, and keep serving
            print(f"evalkit serve: {scope.get('method')} {scope.get('path')}: {type(exc).__name__}: {exc}",
                  file=sys.stderr)  # fmt: skip
            if not started:
                await _send_error(
                    send, 500, f"internal error of the served system: {type(exc).__name__}: {exc}"
                )


async def _send_error(send: Send, status: int, detail: str) -> None:
    body = _AsciiJSON({"detail": detail}).body
    await send({
        "type": "http.response.start", "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    })  # fmt: skip
    await send({"type": "http.response.body", "body": body})


def header_timeout_protocol(seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection that has not sent a whole request head within
    `seconds` of opening or of its previous response (uvicorn has no such timeout: 500 half-open
    connections were still held after 20 s)."""

    class Protocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            self._head_timer = self.loop.call_later(seconds, self._head_timeout)

        def _head_timeout(self) -> None:
            waiting = self.cycle is None or self.cycle.response_complete
            if waiting and not self.transport.is_closing():
                self.transport.close()

    return Protocol


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port` (0 = a free port); UsageError naming the address when it
    cannot be bound (a busy port, an address this machine does not have). Made with the protocol
    IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on connections whose socket says TCP, and
    without it a reply written in two pieces (head, then body) waited for the client's delayed
    ACK, about 40 ms per request."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); another server may be using the "
            "port: stop it or choose another --port (0 = any free port)"
        ) from None
    return sock


def serve(
    system: MemorySystem,
    *,
    host: str,
    port: int,
    token: str | None = None,
    limits: Limits | None = None,
    header_timeout: float = HEADER_TIMEOUT,
) -> None:
    """Serve `system` over the contract with uvicorn on `host`:`port` until a signal stops it
    (see `create_app` for `token` and `limits`). Prints the URL and the OpenAPI document's URL
    once listening. After SIGINT or SIGTERM uvicorn shuts down (namespaces dropped) and raises the
    signal again, so the CLI exits 130 or 143."""
    sock = listening_socket(host, port)
    bound = sock.getsockname()[1]
    limits = limits or Limits()
    config = uvicorn.Config(
        create_app(system, token=token, limits=limits),
        log_level="warning",
        http=header_timeout_protocol(header_timeout),
        timeout_graceful_shutdown=max(1, round(min(limits.request_timeout, 5.0))),
    )
    url = f"http://{f'[{host}]' if ':' in host else host}:{bound}"
    print(f"evalkit serve: {url} (OpenAPI document: {url}/openapi.json); Ctrl-C stops", flush=True)
    with sock:
        _Server(config).run(sockets=[sock])


class _Server(uvicorn.Server):
    """uvicorn's server, interrupting the running store call when shutdown starts (so that a
    long request ends at once instead of holding the shutdown for its graceful timeout)."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        app: Any = self.config.app
        app.state.namespaces.stop()
        await super().shutdown(sockets)
