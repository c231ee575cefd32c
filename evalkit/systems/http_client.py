"""A memory system reached over evalkit's HTTP contract (`--system http://HOST:PORT[/PREFIX]`).

The contract is served by `evalkit serve` (see `evalkit.systems.http_server` for the endpoints)
and can be implemented by any service. The client uses one httpx connection pool with timeouts
(`TIMEOUT`), retries connection errors `RETRIES` times (never a request the server answered),
sends `Authorization: Bearer $EVALKIT_SYSTEM_TOKEN` when that variable is set, and turns every
failure into an AdapterError naming the system, the endpoint and what was wrong: unreachable,
an HTTP error status (with the server's `detail`), a body that is not JSON, or JSON missing a
field or holding a wrong type (each field named).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from evalkit.errors import AdapterError
from evalkit.records import Edge, SearchResponse, Thought
from evalkit.systems.wire import (
    AddedOut,
    NamespaceOut,
    SearchIn,
    SearchOut,
    SystemInfo,
    edges_in,
    search_response,
    thoughts_in,
)
from evalkit.validation import field_problems

TOKEN_ENV = "EVALKIT_SYSTEM_TOKEN"
"""The environment variable whose value the client sends as its bearer token."""

TIMEOUT = httpx.Timeout(60.0, connect=5.0)
"""Per request: 5 s to connect, 60 s for everything else."""

RETRIES = 3
"""How often a connection error is retried before the run fails."""

_Model = TypeVar("_Model", bound=BaseModel)


class HttpSystem:
    """The system behind `url`. Its name, capabilities and description come from `GET /info`,
    asked once when the object is built (so a wrong URL fails before anything runs).

    It can be pickled (to run scenarios on `--workers` processes or Ray): the copy opens its own
    connection pool, with the default transport and the token of the environment it runs in."""

    def __init__(self, url: str, *, transport: httpx.BaseTransport | None = None) -> None:
        self.url = url.rstrip("/")
        self._client = _client(self.url, transport)
        self.info = self.call("GET", "/info", SystemInfo)
        self.name = self.url
        self.capabilities = frozenset(self.info.capabilities)

    def __getstate__(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if key != "_client"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._client = _client(self.url, None)

    def describe(self) -> dict[str, Any]:
        """The URL and what the server says about its system (recorded in the report)."""
        return {"system": "http", "url": self.url, "server": self.info.model_dump()}

    @contextmanager
    def open(self, workdir: Path) -> Iterator[HttpMemory]:
        """A fresh namespace on the server, dropped when the context exits (`workdir` is unused:
        the server keeps its own files)."""
        namespace = self.call("POST", "/namespaces", NamespaceOut).namespace
        try:
            yield HttpMemory(self, f"/namespaces/{namespace}")
        finally:
            self.call("DELETE", f"/namespaces/{namespace}", None)

    def call(self, method: str, path: str, shape: type[_Model] | None, body: BaseModel | None = None) -> Any:
        """`method path` with `body`, its JSON reply validated as `shape` (None: no reply body)."""
        where = f"system {self.url!r}: {method} {path}"
        try:
            reply = self._client.request(
                method, path, content=None if body is None else body.model_dump_json(),
                headers={"content-type": "application/json"},
            )  # fmt: skip
        except httpx.TimeoutException as exc:
            raise AdapterError(
                f"{where}: no answer within the timeout ({exc!r}); is the server overloaded?"
            ) from exc
        except httpx.TransportError as exc:
            raise AdapterError(
                f"{where}: cannot reach the server after {RETRIES} retries ({exc}); start it "
                "(e.g. `evalkit serve --port PORT`) or fix the URL"
            ) from exc
        if reply.is_error:
            raise AdapterError(f"{where}: HTTP {reply.status_code}: {_detail(reply)}")
        if shape is None:
            return None
        try:
            data = reply.json()
        except ValueError as exc:
            raise AdapterError(
                f"{where}: the reply is not JSON ({reply.headers.get('content-type', 'no content-type')}: "
                f"{reply.text[:200]!r}); the endpoint must answer with a JSON {shape.__name__}"
            ) from exc
        try:
            return shape.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(field_problems(exc, shape))
            raise AdapterError(f"{where}: the reply does not match {shape.__name__}: {problems}") from exc

    def close(self) -> None:
        self._client.close()


def _client(url: str, transport: httpx.BaseTransport | None) -> httpx.Client:
    """A connection pool for `url` with the timeouts, retries and bearer token described above."""
    token = os.environ.get(TOKEN_ENV)
    return httpx.Client(
        base_url=url,
        timeout=TIMEOUT,
        transport=transport or httpx.HTTPTransport(retries=RETRIES),
        headers={"Authorization": f"Bearer {token}"} if token else {},
    )


class HttpMemory:
    """One namespace on the server, as a ScenarioMemory."""

    def __init__(self, system: HttpSystem, path: str) -> None:
        self._system, self._path = system, path

    def add_thoughts(self, thoughts: Sequence[Thought]) -> None:
        self._system.call("POST", f"{self._path}/thoughts", AddedOut, thoughts_in(list(thoughts)))

    def add_edges(self, edges: Sequence[Edge]) -> None:
        self._system.call("POST", f"{self._path}/edges", AddedOut, edges_in(list(edges)))

    def search(self, query: str, **options: Any) -> SearchResponse:
        """POST .../search with `query` and the options of `ScenarioMemory.search`."""
        body = SearchIn(query=query, **options)
        return search_response(self._system.call("POST", f"{self._path}/search", SearchOut, body))


def _detail(reply: httpx.Response) -> str:
    """The server's `detail` (FastAPI's error field; its validation errors as `field: message`)
    or the start of the body."""
    try:
        detail = reply.json().get("detail")
    except (ValueError, AttributeError):
        detail = None
    if isinstance(detail, list):
        return "; ".join(
            f"{'.'.join(str(part) for part in item.get('loc', []))}: {item.get('msg')}"
            for item in detail
            if isinstance(item, dict)
        )
    return str(detail) if detail is not None else reply.text[:300]
