"""evalkit's HTTP contract served over a memory system with FastAPI (`evalkit serve`).

Endpoints (JSON; shapes in `evalkit.systems.http.wire`; the OpenAPI document is at `/openapi.json`):
- `GET /info` → SystemInfo: name, capabilities, describe()
- `POST /namespaces` (no body, or NamespaceIn: thoughts, edges and a namespace to drop) → 201
  NamespaceOut: a fresh, isolated memory, seeded with the body in the same call (advertised as
  `/info`'s `seeded_create`, so the client creates and seeds a scenario's memory in one request;
  a seed the system rejects is the reply's error and leaves no namespace), after dropping the
  body's `drop` in that call (advertised as `drop_with_create`, so the client drops the previous
  scenario's memory with the next one's creation; an unknown one is a 404, and nothing is created)
- `DELETE /namespaces/{ns}` → 204: the memory and its files are gone
- `POST /namespaces/{ns}/thoughts` (ThoughtsIn) → AddedOut
- `POST /namespaces/{ns}/edges` (EdgesIn) → AddedOut
- `POST /namespaces/{ns}/search` (SearchIn) → SearchOut
- `POST /namespaces/{ns}/search/batch` (SearchBatchIn) → SearchBatchOut: up to
  `MAX_SEARCH_BATCH` searches answered in order, in one call on the store thread (advertised
  as `/info`'s `search_batch`, so the client uses it)
- `POST /namespaces/{ns}/thoughts/delete` and `.../thoughts/update`: the operations of a
  scenario's steps (`evalkit.systems.http.operations`)
Replies that carry search results are serialised straight from the system's records
(`wire.search_json`), not validated again: the client validates what it receives. Every request
goes through FastAPI's routing: a hand-routed path beside it for the busiest endpoints saved the
server about 95 us of CPU per search (500 against 595 us) and the client nothing it needed (its
CPU per search was 1.18x a bare httpx request's with that path and 1.10x without, against a
target of 1.5x; `benchmarks/bench_remote.py`, docs' benchmarks page, 2026-12-04), so it went.
uvicorn parses HTTP with httptools when it is installed (`_http_protocol`).
Errors, all `ErrorOut` (`{"detail": ...}`, JSON in ASCII, so any input can be echoed): 400 for a
body that is not JSON (or not UTF-8, or nested too deeply), 401 without the bearer token (when
one is set), 404 for an unknown namespace, 408 for a body that does not arrive within the request
timeout, 413 for a body over `max_body_bytes` (counted while it streams in: a chunked upload is
cut off at the limit, never read whole), 422 for a body that does not match its shape (one
`{loc, msg, type}` per problem; the input is not echoed) or that the system rejects (StoreError,
e.g. an edge to an unknown id: `detail` is the reason), 503 when the namespace limit is reached or
a request runs past the request timeout, 500 for a bug of the served system (its exception's
type and message; the server keeps serving).

Bounds (`Limits`, see `evalkit.systems.namespaces`): a query's length and terms (`wire`), the
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
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from contextlib import asynccontextmanager, suppress
from types import FrameType
from typing import Any

import uvicorn
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from uvicorn.protocols.http.h11_impl import H11Protocol

from evalkit.errors import EvalkitError, UsageError
from evalkit.records import SearchResponse
from evalkit.systems.base import MemorySystem, SearchRequest
from evalkit.systems.capabilities import declared_capabilities
from evalkit.systems.http.operations import add_operation_routes
from evalkit.systems.http.wire import (
    MAX_SEARCH_BATCH,
    AddedOut,
    EdgesIn,
    ErrorOut,
    NamespaceIn,
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
    system_info,
    thoughts_out,
)
from evalkit.systems.namespaces import Limits, NamespaceLimit, Namespaces, RequestTimeout, UnknownNamespace

MAX_BODY_BYTES = 16 * 1024 * 1024
"""The largest request body the server reads (a larger one is a 413)."""

BACKLOG = 2048
"""Connections the listening socket queues before the server accepts them (uvicorn's default)."""

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
    operations = _Operations(namespaces)
    statuses: dict[type[Exception], int] = {
        UnknownNamespace: 404,
        NamespaceLimit: 503,
        RequestTimeout: 503,
        EvalkitError: 422,
    }

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

    app = _ContractApp(
        title="evalkit memory system contract",
        version="1",
        description="Isolated memories of one system: add thoughts and edges, search. "
        "See evalkit's docs, 'Your system: HTTP'.",
        lifespan=lifespan,
        default_response_class=_AsciiJSON,
        responses=_ERRORS,
    )
    app.state.namespaces = namespaces
    app.guard = _Guard(
        app.inner, token=token, max_body_bytes=max_body_bytes, timeout=namespaces.limits.request_timeout
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

    for kind, status in statuses.items():
        app.add_exception_handler(kind, _status_handler(status))
    app.add_exception_handler(Exception, _internal_error)  # FastAPI's error middleware: see `_ContractApp`

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
        return system_info(system, search_batch=MAX_SEARCH_BATCH, seeded_create=True, drop_with_create=True)

    @app.post(
        "/namespaces",
        status_code=201,
        response_model=NamespaceOut,
        summary=(
            "Open a fresh, isolated memory (one per scenario), empty or seeded with the body, after "
            "dropping the body's `drop`"
        ),
        response_description="Created: the namespace's id",
    )
    async def create(body: NamespaceIn | None = None) -> Response:
        return await operations.create(body)

    @app.delete(
        "/namespaces/{namespace}",
        status_code=204,
        summary="Drop a memory and its files",
        response_description="Dropped (no body)",
    )
    async def drop(namespace: str) -> Response:
        return await operations.drop(namespace)

    @app.post(
        "/namespaces/{namespace}/thoughts",
        response_model=AddedOut,
        summary="Add thoughts (the system embeds them)",
        response_description="How many were added",
    )
    async def add_thoughts(namespace: str, body: ThoughtsIn) -> Response:
        return await operations.add_thoughts(namespace, body)

    @app.post(
        "/namespaces/{namespace}/edges",
        response_model=AddedOut,
        summary="Add typed edges between added thoughts",
        response_description="How many were added",
    )
    async def add_edges(namespace: str, body: EdgesIn) -> Response:
        return await operations.add_edges(namespace, body)

    @app.post(
        "/namespaces/{namespace}/search",
        response_model=SearchOut,
        summary="One search: the best top_k thoughts, best first",
        response_description="The hits, best first, and what the relevance gate saw",
    )
    async def search(namespace: str, body: SearchIn) -> Response:
        return await operations.search(namespace, body)

    @app.post(
        "/namespaces/{namespace}/search/batch",
        response_model=SearchBatchOut,
        summary=f"Up to {MAX_SEARCH_BATCH} searches in one request, answered in order",
        response_description="One result per search, in the order asked",
    )
    async def search_batch(namespace: str, body: SearchBatchIn) -> Response:
        return await operations.search_batch(namespace, body)

    add_operation_routes(app, namespaces, declared_capabilities(system), _error)
    return app


class _ContractApp(FastAPI):
    """The FastAPI app behind one `_Guard` (`guard`, set by `create_app`), the first thing an
    HTTP request meets: the token and the body are handled there, before FastAPI's and
    Starlette's middleware stack. The guard hands the request to FastAPI (`inner`) with the body
    already read. An exception the app lets through reaches FastAPI's error middleware, which
    answers it with the guard's 500 (the app's `Exception` handler, `_internal_error`) and raises
    it on to the guard, which logs it as one line. Lifespan and other scopes go straight to
    FastAPI."""

    guard: _Guard | None = None

    async def inner(self, scope: Scope, receive: Receive, send: Send) -> None:
        await super().__call__(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.guard is not None and scope["type"] == "http":
            await self.guard(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


class _Operations:
    """What the contract's endpoints do, each answering its reply (the FastAPI routes call it)."""

    def __init__(self, namespaces: Namespaces) -> None:
        self.namespaces = namespaces

    async def create(self, body: NamespaceIn | None) -> Response:
        """A fresh memory, seeded with `body`'s thoughts then edges (all or nothing: a rejected
        seed drops the new namespace and raises its error), after dropping `body.drop` in the
        same store call (`Namespaces.run`; UnknownNamespace, a 404, when it is not open: nothing
        is created then; once dropped, it stays dropped whatever the creation does)."""
        namespaces = self.namespaces
        thoughts = thoughts_out(body) if body else []
        edges = edges_out(body) if body else []
        drop = body.drop if body else None

        def seeded() -> str:
            if drop is not None:
                try:
                    namespaces.drop(drop)
                except UnknownNamespace:
                    raise UnknownNamespace(
                        f"drop: no namespace {drop!r} to drop (never created, dropped already, or "
                        f"dropped after {namespaces.limits.idle_timeout:g} s idle); nothing was created"
                    ) from None
            namespace = namespaces.create()
            try:
                memory = namespaces.get(namespace)
                if thoughts:
                    memory.add_thoughts(thoughts)
                if edges:
                    memory.add_edges(edges)
            except BaseException:
                with suppress(Exception):
                    namespaces.drop(namespace)
                raise
            return namespace

        namespace = await namespaces.run(seeded)
        return _AsciiJSON({"namespace": namespace}, status_code=201)

    async def drop(self, namespace: str) -> Response:
        await self.namespaces.run(self.namespaces.drop, namespace)
        return Response(status_code=204)

    async def add_thoughts(self, namespace: str, body: ThoughtsIn) -> Response:
        await self.namespaces.run(self.namespaces.get(namespace).add_thoughts, thoughts_out(body))
        return _AsciiJSON({"added": len(body.thoughts)})

    async def add_edges(self, namespace: str, body: EdgesIn) -> Response:
        await self.namespaces.run(self.namespaces.get(namespace).add_edges, edges_out(body))
        return _AsciiJSON({"added": len(body.edges)})

    async def search(self, namespace: str, body: SearchIn) -> Response:
        memory = self.namespaces.get(namespace)
        response = await self.namespaces.run(lambda: memory.search(body.query, body.options()))
        return Response(search_json(response), media_type="application/json")

    async def search_batch(self, namespace: str, body: SearchBatchIn) -> Response:
        memory = self.namespaces.get(namespace)
        asked = [SearchRequest(search.query, search.options()) for search in body.searches]

        def run_all() -> Sequence[SearchResponse]:
            return memory.search_many(asked)

        return Response(search_batch_json(await self.namespaces.run(run_all)), media_type="application/json")


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


async def _internal_error(_: Request, exc: Exception) -> Response:
    """The 500 for a bug of the served system (`_internal_detail`)."""
    return _error(500, _internal_detail(exc))


def _internal_detail(exc: Exception) -> str:
    return f"internal error of the served system: {type(exc).__name__}: {exc}"


class _Guard:
    """The first checks of every HTTP request, as plain ASGI in front of FastAPI
    (`_ContractApp.guard`): the bearer token (compared as bytes in constant time, so a non-ASCII
    header is a 401, not a 500), then the body, read here within `timeout` seconds and counted
    while it streams (413 at the limit, whether or not a Content-Length was sent), then handed
    to the app. An exception the app lets through is a 500 naming it
    (`_internal_detail`; sent here unless a reply has started: FastAPI's error middleware
    answers the app's), logged as one line on stderr (uvicorn would print a traceback and
    close the connection)."""

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
                await _send_error(send, 500, _internal_detail(exc))


async def _send_error(send: Send, status: int, detail: str) -> None:
    body = _AsciiJSON({"detail": detail}).body
    await send({
        "type": "http.response.start", "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    })  # fmt: skip
    await send({"type": "http.response.body", "body": body})


def header_timeout_protocol(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (`_http_protocol`), closing a connection that has not sent a whole
    request head within `seconds` of opening or of its previous response (uvicorn has no such
    timeout: 500 half-open connections were still held after 20 s), and writing a response's
    head and the first piece of its body in one send (`_HeldHead`)."""
    base: Any = _http_protocol()

    class Protocol(base):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self.transport = _HeldHead(transport, self)
            self._arm()

        def on_response_complete(self) -> None:
            self.transport.flush()
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


class _HeldHead:
    """A connection's transport as uvicorn's protocol sees it: a response's head (the first
    write after the response started) is held and sent with the next write, the body's first
    piece, in one send. uvicorn writes them separately, and each send woke the client for half
    a reply (two reads and two wake-ups per request, as the client's own `_DeadlineStream` found
    for requests). The head is sent at the latest when the response completes (`flush`, also
    for a reply without a body) or the connection closes; everything else passes through."""

    def __init__(self, transport: asyncio.Transport, protocol: Any) -> None:
        self._transport = transport
        self._protocol = protocol
        self._held: bytes | None = None
        self._headed: Any = None  # the cycle whose head was held (each response's head once)

    def write(self, data: bytes) -> None:
        cycle = self._protocol.cycle
        if (
            self._held is None and cycle is not None and cycle is not self._headed
            and cycle.response_started and not cycle.response_complete
        ):  # fmt: skip
            self._held, self._headed = bytes(data), cycle
            return
        if self._held is not None:
            data, self._held = self._held + data, None
        self._transport.write(data)

    def flush(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _http_protocol() -> type[asyncio.Protocol]:
    """The protocol uvicorn itself would pick ("auto"): its httptools one when `httptools` is
    installed (a C parser: about a third of the server's time per request went to h11), else h11.
    Both have the hooks `header_timeout_protocol` uses."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return H11Protocol
    return HttpToolsProtocol


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port` (0 = a free port); UsageError naming the address when it
    cannot be bound (a busy port, an address this machine does not have). It is listening when
    returned, so a client that connects before the server runs waits instead of being refused.
    Made with the protocol IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on connections whose
    socket says TCP, and without it a reply written in two pieces (head, then body) waited for
    the client's delayed ACK, about 40 ms per request."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(BACKLOG)  # from now on a client's connection waits for the server, not refused
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
    signal again, so the CLI exits 130 or 143. uvicorn's proxy-headers layer is off: the contract
    reads neither the client's address nor the scheme, so `X-Forwarded-*` would change nothing
    but cost a pass per request."""
    sock = listening_socket(host, port)
    bound = sock.getsockname()[1]
    limits = limits or Limits()
    config = uvicorn.Config(
        create_app(system, token=token, limits=limits),
        log_level="warning",
        http=header_timeout_protocol(header_timeout),
        timeout_graceful_shutdown=max(1, round(min(limits.request_timeout, 5.0))),
        proxy_headers=False,
    )
    url = f"http://{f'[{host}]' if ':' in host else host}:{bound}"
    print(f"evalkit serve: {url} (OpenAPI document: {url}/openapi.json); Ctrl-C stops", flush=True)
    with sock:
        _Server(config).run(sockets=[sock])


class _Server(uvicorn.Server):
    """uvicorn's server, interrupting the running store call as soon as a signal asks it to
    stop (so that a long request ends at once instead of holding the shutdown for its graceful
    timeout): a call running on the event loop (`Namespaces`' `inline_calls`) is stopped from
    the signal's handler, which runs during its SQL statements."""

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self._namespaces().stop()
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._namespaces().stop()
        await super().shutdown(sockets)

    def _namespaces(self) -> Namespaces:
        app: Any = self.config.app
        namespaces: Namespaces = app.state.namespaces
        return namespaces
