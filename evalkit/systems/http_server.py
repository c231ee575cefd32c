"""evalkit's HTTP contract served over a memory system with FastAPI (`evalkit serve`).

Endpoints (JSON; shapes in `evalkit.systems.wire`; the OpenAPI document is at `/openapi.json`):
- `GET /info` → SystemInfo: name, capabilities, describe()
- `POST /namespaces` → NamespaceOut: a fresh, isolated memory
- `DELETE /namespaces/{ns}` → 204: the memory and its files are gone
- `POST /namespaces/{ns}/thoughts` (ThoughtsIn) → AddedOut
- `POST /namespaces/{ns}/edges` (EdgesIn) → AddedOut
- `POST /namespaces/{ns}/search` (SearchIn) → SearchOut
Errors: 401 without the bearer token (when one is set), 404 for an unknown namespace, 413 for a
body over `max_body_bytes`, 422 for a body that does not match its shape (FastAPI names the
field) or that the system rejects (StoreError, e.g. an edge to an unknown id).
Handlers are `async` and run on the event-loop thread one at a time (see `Namespaces`).
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse

from evalkit.errors import EvalkitError
from evalkit.systems.capabilities import declared_capabilities
from evalkit.systems.namespaces import Namespaces, UnknownNamespace
from evalkit.systems.protocol import MemorySystem
from evalkit.systems.wire import (
    AddedOut,
    EdgesIn,
    NamespaceOut,
    SearchIn,
    SearchOut,
    SystemInfo,
    ThoughtsIn,
    edges_out,
    search_out,
    thoughts_out,
)

MAX_BODY_BYTES = 16 * 1024 * 1024
"""The largest request body the server reads (a larger one is a 413)."""


def create_app(
    system: MemorySystem, *, token: str | None = None, max_body_bytes: int = MAX_BODY_BYTES
) -> FastAPI:
    """A FastAPI app serving `system` under the contract above. With `token`, every request must
    carry `Authorization: Bearer <token>` (401 otherwise). Namespaces are dropped at shutdown."""
    namespaces = Namespaces(system)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        namespaces.close()

    app = FastAPI(
        title="evalkit memory system contract",
        version="1",
        description="Isolated memories of one system: add thoughts and edges, search. See evalkit's README.",
        lifespan=lifespan,
    )

    @app.middleware("http")
    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if token is not None and not hmac.compare_digest(
            request.headers.get("authorization", ""), f"Bearer {token}"
        ):
            return _error(401, "missing or wrong bearer token: send 'Authorization: Bearer <token>'")
        declared = request.headers.get("content-length")
        if declared is None:  # chunked: read it (Starlette keeps it for the handler)
            too_big = (
                request.method in {"POST", "PUT", "PATCH"} and len(await request.body()) > max_body_bytes
            )
        else:
            too_big = not declared.isdigit() or int(declared) > max_body_bytes
        if too_big:
            return _error(413, f"request body over {max_body_bytes} bytes; send smaller batches")
        return await call_next(request)

    @app.exception_handler(UnknownNamespace)
    async def unknown_namespace(_: Request, exc: UnknownNamespace) -> JSONResponse:
        return _error(404, str(exc))

    @app.exception_handler(EvalkitError)
    async def rejected(_: Request, exc: EvalkitError) -> JSONResponse:
        return _error(422, str(exc))

    @app.get("/info")
    async def info() -> SystemInfo:
        return SystemInfo(
            name=system.name,
            capabilities=sorted(declared_capabilities(system)),
            describe=system.describe(),
        )

    @app.post("/namespaces", status_code=201)
    async def create() -> NamespaceOut:
        return NamespaceOut(namespace=namespaces.create())

    @app.delete("/namespaces/{namespace}", status_code=204)
    async def drop(namespace: str) -> Response:
        namespaces.drop(namespace)
        return Response(status_code=204)

    @app.post("/namespaces/{namespace}/thoughts")
    async def add_thoughts(namespace: str, body: ThoughtsIn) -> AddedOut:
        namespaces.get(namespace).add_thoughts(thoughts_out(body))
        return AddedOut(added=len(body.thoughts))

    @app.post("/namespaces/{namespace}/edges")
    async def add_edges(namespace: str, body: EdgesIn) -> AddedOut:
        namespaces.get(namespace).add_edges(edges_out(body))
        return AddedOut(added=len(body.edges))

    @app.post("/namespaces/{namespace}/search")
    async def search(namespace: str, body: SearchIn) -> SearchOut:
        options = body.model_dump()
        return search_out(namespaces.get(namespace).search(options.pop("query"), **options))

    return app


def _error(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def serve(system: MemorySystem, *, host: str, port: int, token: str | None = None) -> None:
    """Serve `system` over the contract with uvicorn on `host`:`port` until interrupted (see
    `create_app` for `token`)."""
    uvicorn.run(create_app(system, token=token), host=host, port=port, log_level="warning")
