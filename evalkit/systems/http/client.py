"""A memory system reached over evalkit's HTTP contract (`--system http://HOST:PORT[/PREFIX]`).

The contract is served by `evalkit serve` (see `evalkit.systems.http.server` for the endpoints)
and can be implemented by any service. The client uses one httpx connection pool, retries
connection errors `RETRIES` times (never a request the server answered), sends
`Authorization: Bearer $EVALKIT_SYSTEM_TOKEN` when that variable is set, and turns every
failure into an AdapterError naming the system, the endpoint and what was wrong: unreachable,
too slow, an HTTP error status (with the server's `detail`), a reply too large, a body that is
not JSON, or JSON missing a field or holding a wrong type (each field named; the wire models are
strict, so `"relevance": true` or `"rank": "1"` is an error, as from a Python adapter). A problem
repeated in every hit is reported once with a count.

Replies are read tolerantly, requests strictly: a reply key the contract does not define (a
newer server's field, a service's own extras) is dropped, and named in one AdapterWarning the
first time it is seen (`hits[*].score`, with a did-you-mean for a misspelt known key), not an
error; a missing or mistyped field still is. The system is named by `/info`'s `name` (the URL,
credentials redacted, is in `describe()` and in every error message). When `/info` advertises
`search_batch` (the server's batch endpoint), the memory offers `search_many` and the harness
sends all searches of a scenario in requests of at most that many (`batch=False` turns it off).
When it advertises `seeded_create`, a scenario's namespace is created with its thoughts and edges
in one request (`seeded_create=False` turns it off; see `HttpMemory`), and when it also
advertises `drop_with_create`, a scenario's drop goes with the next scenario's creation, in that
same request (the run's last drop is sent by `settle()` at the end of the run; see
`HttpSystem.open`). Requests go straight to httpx's transport (no cookies kept, no redirects
followed), each in one write.

Bounds, so that no server can hang or exhaust a run:
- a wall-clock deadline per request, `timeout` seconds (default $EVALKIT_SYSTEM_TIMEOUT, else
  `TIMEOUT`), over connecting, sending, the headers and the whole body: every socket read and
  write waits at most what is left of it, so a server that drips one byte every few seconds
  fails at the deadline (httpx's own timeouts apply to each read);
- a cap on the reply body after decompression, `max_reply_bytes` (default
  $EVALKIT_SYSTEM_MAX_REPLY_MB megabytes, else `MAX_REPLY_BYTES`): reading stops there, and a
  gzip or deflate body is inflated piece by piece up to the cap (a 1 MB bomb never becomes
  1 GiB); JSON parsing stops after `MAX_REPLY_OBJECTS` objects and at Python's nesting limit.
Namespaces the server returns go into URLs percent-encoded, and only when they match
`NAMESPACE_PATTERN` (`../info` is refused, never requested). The cleanup DELETE after a failed
or interrupted scenario is best-effort with a short deadline (`CLEANUP_TIMEOUT`), so the error
that stopped the scenario, or the Ctrl-C, is what the run reports. Credentials in the URL are
sent but never shown or recorded (`evalkit.systems.secrets.redact_url`).
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
import warnings
import zlib
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

import httpcore
import httpx
from pydantic import BaseModel, ValidationError

from evalkit.errors import AdapterError, AdapterWarning, UsageError
from evalkit.records import Edge, SearchResponse, Thought
from evalkit.systems import client_limits
from evalkit.systems.base import (
    IN_FLIGHT,
    UNDECLARED_EMBEDDER,
    MemorySystem,
    OpenContext,
    ScenarioMemory,
    SearchOptions,
    SearchRequest,
)
from evalkit.systems.checked import call_system
from evalkit.systems.client_limits import MAX_REPLY_ENV, TIMEOUT_ENV
from evalkit.systems.http import operations
from evalkit.systems.http.wire import (
    NO_SURROGATES,
    SURROGATE_BYTES,
    AddedOut,
    NamespaceIn,
    NamespaceOut,
    SearchBatchIn,
    SearchBatchOut,
    SearchIn,
    SearchOut,
    SystemInfo,
    ThoughtsIn,
    edges_in,
    plain_reader,
    plain_search_response,
    search_in,
    thoughts_in,
)
from evalkit.systems.secrets import check_token, redact_url
from evalkit.validation import collapsed_path, grouped_problems, unknown_key_hint

TOKEN_ENV = "EVALKIT_SYSTEM_TOKEN"
"""The environment variable whose value the client sends as its bearer token."""

TIMEOUT = client_limits.HTTP_TIMEOUT
"""The default wall-clock deadline of one request, in seconds ($EVALKIT_SYSTEM_TIMEOUT)."""

CONNECT_TIMEOUT = 5.0
"""Seconds to connect (within the deadline)."""

CLEANUP_TIMEOUT = 2.0
"""The deadline of the namespace DELETE after a scenario that failed or was interrupted."""

MAX_REPLY_BYTES = client_limits.MAX_REPLY_BYTES
"""The default cap on a reply body after decompression ($EVALKIT_SYSTEM_MAX_REPLY_MB)."""

MAX_REPLY_OBJECTS = 200_000
"""The most JSON objects a reply may hold (1,000 hits and a few thousand gate candidates are
far below), so parsing a reply of millions of tiny hits stops early."""

RETRIES = 3
"""How often a connection error is retried before the run fails."""

NAMESPACE_PATTERN = re.compile(r"[A-Za-z0-9._~-]{1,200}")
"""What a namespace from the server may look like (it goes into every URL of the scenario)."""

_Model = TypeVar("_Model", bound=BaseModel)


class HttpSystem(MemorySystem):
    """The system behind `url`. Its name, capabilities and description come from `GET /info`,
    asked once when the object is built (so a wrong URL fails before anything runs: a
    MemorySystemError whose method is "connect").
    `timeout` and `max_reply_bytes` are the bounds of the module docstring (None = from the
    environment, else the defaults). UsageError for a URL httpx cannot use or a bad setting.

    `--workers N` runs N of its scenarios in flight on threads of the calling process (`in_flight`).
    It can be pickled (to run scenarios on Ray, or in the workers of the mutation suite): the copy
    opens its own connection pool, with the default transport and the token of the environment it
    runs in."""

    def __init__(
        self,
        url: str,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float | None = None,
        max_reply_bytes: int | None = None,
        batch: bool = True,
        seeded_create: bool = True,
    ) -> None:
        self._url = url.rstrip("/")
        self.url = redact_url(self._url)
        self.timeout = client_limits.timeout(timeout, TIMEOUT)
        self.max_reply_bytes = client_limits.max_reply_bytes(max_reply_bytes)
        self._client, self._transport, self._headers = _client(self._url, transport)
        self._ignored: set[str] = set()
        self._home = os.getpid()  # where the system was built: the run's process (drops deferred)
        self._drops: dict[int, _PendingDrop] = {}  # the drop held by each thread (`_pending`)
        self.name = self.url
        self._where = f"system {self.url!r}"
        try:  # unreachable, too slow, a bad reply: a MemorySystemError (method "connect")
            self.info = call_system(self.url, "connect", self.call, ("GET", "/info", SystemInfo))
        except BaseException:
            self._client.close()
            raise
        self.name = self.info.name
        self._where = f"system {self.name!r} at {self.url}"
        self.capabilities = frozenset(self.info.capabilities)
        self.own_embedder = self.info.embedder or UNDECLARED_EMBEDDER
        self.batch = batch and self.info.search_batch > 0
        self.seeded_create = seeded_create and self.info.seeded_create
        self.drop_with_create = self.seeded_create and self.info.drop_with_create

    needs_workdir = False
    """The server keeps its own files: `open` needs no directory (`evalkit.systems.base`)."""

    in_flight = IN_FLIGHT
    """Calls wait on the server: the runner keeps several scenarios in flight on threads
    (`evalkit.systems.base`; this many by default). They share the connection pool (httpx's
    is thread-safe; each request's deadline is its thread's), and each thread holds its own drop
    (`_pending`)."""

    _UNPICKLED = frozenset({"_client", "_transport", "_headers", "_drops"})

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in self._UNPICKLED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._client, self._transport, self._headers = _client(self._url, None)
        self._drops = {}

    @property
    def _pending(self) -> _PendingDrop | None:
        """The drop this thread holds for its next creation (see `open`): each thread of a run
        with scenarios in flight holds its own, and `settle` sends them all."""
        return self._drops.get(threading.get_ident())

    @_pending.setter
    def _pending(self, drop: _PendingDrop | None) -> None:
        if drop is None:
            self._drops.pop(threading.get_ident(), None)
        else:
            self._drops[threading.get_ident()] = drop

    def describe(self) -> dict[str, Any]:
        """The URL (credentials redacted) and what the server says about its system (recorded
        in the report)."""
        return {"system": "http", "url": self.url, "server": self.info.model_dump()}

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[HttpMemory]:
        """A fresh namespace on the server, dropped once the context exits (`context.workdir` is unused:
        the server keeps its own files). After a failure or an interrupt the drop is
        best-effort within `CLEANUP_TIMEOUT`, and the original error is what propagates.

        On a server with `seeded_create` (see `HttpMemory`) the namespace is created by the
        memory's first call, seeded in the same request, and nothing is sent for a memory that
        was never called.

        Opened by the runner (which names the scenario, and calls `settle()` once the run's
        scenarios are done) in the process that built the system, on a server whose /info says
        `drop_with_create`, the drop after a scenario that ended well is not sent on its own: it
        is held, and goes with the next memory's creation, in the same `POST /namespaces`
        (NamespaceIn's `drop`; the server drops it, then creates and seeds the new namespace).
        One drop at most is held per thread (with scenarios in flight, each thread's goes with
        that thread's next creation). The held drop is sent as `DELETE` and waited for by `settle()`
        (so the run's last scenario's drop is answered, or its error raised, within the run), by
        `close()`, and on the failure path of the next scenario when that failure came before
        the creation carried it (best-effort within `CLEANUP_TIMEOUT`, its error added as a note
        to the scenario's). A drop that fails with the creation it went with is an AdapterError
        naming its scenario, its namespace and that it went with the next scenario's creation.
        Opened without a scenario (a caller of its own), on a copy in a worker process (which sees
        no end of the run), and on a server whose /info does not say `drop_with_create` (or with
        `seeded_create=False`), every drop is a `DELETE` waited for as the context exits."""
        scenario = context.scenario
        memory = HttpBatchMemory(self, scenario) if self.batch else HttpMemory(self, scenario)
        if not self.seeded_create:
            memory.create(NamespaceIn())
        try:
            yield memory
            if memory.holding:
                memory.flush()
        except BaseException as exc:
            if memory.path is not None:
                with suppress(BaseException):  # the scenario's failure (or the Ctrl-C) is what counts
                    self.call("DELETE", memory.path, None, timeout=CLEANUP_TIMEOUT)
            try:
                self._settle(CLEANUP_TIMEOUT)
            except Exception as failed:  # the held drop's failure, told beside this one
                exc.add_note(str(failed))
            raise
        if memory.path is None or memory.namespace is None:  # never created (both are set together)
            return
        if scenario is None or os.getpid() != self._home or not self.drop_with_create:
            self.call("DELETE", memory.path, None)
            return
        self._settle()  # a drop held since before this memory's creation (none in a run)
        self._pending = _PendingDrop(memory.namespace, memory.path, scenario)

    def settle(self) -> None:
        """Send the drops held for the next creation (see `open`; one per thread that ran
        scenarios), all at once when several are held (each on a thread of its own: a run with N
        scenarios in flight ends after one round trip, not N), and wait for each; the first
        error, naming the namespace and the scenario, is raised here once all are done. The
        runner calls it at the end of every run, so no run leaves a namespace behind on the
        server."""
        popped = (self._drops.pop(thread, None) for thread in list(self._drops))
        held = [drop for drop in popped if drop is not None]
        if len(held) > 1:
            with ThreadPoolExecutor(len(held), thread_name_prefix="evalkit-drop") as pool:
                outcomes = list(pool.map(self._dropped, held))
        else:
            outcomes = [self._dropped(drop) for drop in held]
        failures = [failure for failure in outcomes if failure is not None]
        if failures:
            for other in failures[1:]:
                failures[0].add_note(str(other))
            raise failures[0]

    def _dropped(self, pending: _PendingDrop) -> AdapterError | None:
        """`_send_drop(pending)` with the system's timeout; its AdapterError returned, not raised."""
        try:
            self._send_drop(pending, None)
        except AdapterError as exc:
            return exc
        return None

    def _settle(self, timeout: float | None = None) -> None:
        """`DELETE` the drop this thread holds, if any, within `timeout` (default: the system's)."""
        pending, self._pending = self._pending, None
        self._send_drop(pending, timeout)

    def _send_drop(self, pending: _PendingDrop | None, timeout: float | None) -> None:
        """`DELETE` the held drop `pending`, if any. A 404 for a drop that already went with a
        creation whose outcome the client did not learn (see `HttpMemory.create`) means the
        server dropped it then, and is no error."""
        if pending is None:
            return
        try:
            self.call("DELETE", pending.path, None, timeout=timeout)
        except AdapterError as exc:
            if pending.sent and isinstance(exc, _StatusError) and exc.status == 404:
                return
            how = (
                "sent on its own after the creation it went with failed"
                if pending.sent
                else "sent on its own: no later scenario's creation carried it"
            )
            raise AdapterError(
                f"{exc} (the drop of scenario {pending.scenario!r}'s namespace {pending.path}, {how})"
            ) from exc

    def call(
        self,
        method: str,
        path: str,
        shape: type[_Model] | None,
        body: BaseModel | None = None,
        *,
        timeout: float | None = None,
        plain: bool = False,
    ) -> Any:
        """`method path` with `body`, its JSON reply validated as `shape` (None: no reply body),
        within `timeout` seconds (default: the system's); with `plain`, the reply's plain values
        (`wire.plain_reader`: dicts of the keys sent, validated exactly as `shape` validates)
        instead of a model. An error status is an AdapterError carrying it (`_StatusError`)."""
        where = f"{self._where}: {method} {path}"
        seconds = self.timeout if timeout is None else timeout
        try:
            with _deadline(seconds):
                content = None if body is None else body.model_dump_json().encode()
                if self._transport is None:  # credentials in the URL: httpx's client sends them
                    request = self._client.build_request(method, path, content=content, headers=_JSON)
                    reply = self._client.send(request, stream=True)
                else:
                    reply = self._transport.handle_request(
                        httpx.Request(method, self._url + path, headers=self._headers, content=content,
                                      extensions=_EXTENSIONS)
                    )  # fmt: skip
                try:
                    raw = _read_body(reply, self.max_reply_bytes, where)
                finally:
                    reply.close()
        except httpx.TimeoutException as exc:
            raise AdapterError(
                f"{where}: no complete answer within {seconds:g} s; is the server overloaded or stuck? "
                f"(raise the deadline with ${TIMEOUT_ENV})"
            ) from exc
        except httpx.RemoteProtocolError as exc:
            raise AdapterError(
                f"{where}: the server closed the connection without a complete answer ({exc}); did it "
                "crash? see its log"
            ) from exc
        except httpx.TransportError as exc:
            raise AdapterError(
                f"{where}: cannot reach the server after {RETRIES} retries ({exc}); start it "
                "(e.g. `evalkit serve --port PORT`) or fix the URL"
            ) from exc
        if reply.is_error:
            raise _StatusError(f"{where}: HTTP {reply.status_code}: {_detail(raw)}", reply.status_code)
        if shape is None:
            return None
        content_type = reply.headers.get("content-type", "no content-type")
        return self._validated(shape, raw, where, content_type, plain)

    def _validated(self, shape: type[_Model], raw: bytes, where: str, content_type: str, plain: bool) -> Any:
        """`raw` as `shape` (or its plain values: see `call`), tolerating unknown keys (dropped,
        warned about once; see the module docstring). Fast path: pydantic parses and validates
        the JSON at once when it cannot hold a surrogate or too many objects; any failure takes
        the careful path, which names the problem."""
        if raw.count(b"{") <= MAX_REPLY_OBJECTS and not SURROGATE_BYTES.search(raw):
            try:
                if plain:
                    return plain_reader(shape).validate_json(raw)
                return shape.model_validate_json(raw, context={NO_SURROGATES: True})
            except ValidationError:
                pass
        model = self._careful(shape, raw, where, content_type)
        return model.model_dump() if plain else model

    def _careful(self, shape: type[_Model], raw: bytes, where: str, content_type: str) -> _Model:
        """`raw` as `shape` the slow way: parsed with the object cap and nesting limit, unknown keys
        dropped with a warning, every other problem an AdapterError naming it."""
        try:
            data = _parse(raw)
        except ValueError as exc:
            raise AdapterError(
                f"{where}: the reply is not JSON ({content_type}: {exc}; {raw[:200]!r}); the endpoint "
                f"must answer with a JSON {shape.__name__}"
            ) from exc
        try:
            return shape.model_validate(data)
        except ValidationError as exc:
            errors = exc.errors()
        if any(e["type"] != "extra_forbidden" for e in errors):
            problems = "; ".join(grouped_problems(errors, shape))
            raise AdapterError(f"{where}: the reply does not match {shape.__name__}: {problems}")
        self._ignore(shape, [tuple(e["loc"]) for e in errors], data, where)
        try:
            return shape.model_validate(data)
        except ValidationError as exc:  # cannot happen: only unknown keys were wrong
            problems = "; ".join(grouped_problems(exc.errors(), shape))
            raise AdapterError(f"{where}: the reply does not match {shape.__name__}: {problems}") from exc

    def _ignore(
        self, shape: type[BaseModel], locs: list[tuple[str | int, ...]], data: Any, where: str
    ) -> None:
        """Drop the unknown keys at `locs` from `data`; warn once about those not seen before."""
        new: dict[str, str] = {}
        for loc in locs:
            holder = data
            for part in loc[:-1]:
                holder = holder[part]
            del holder[loc[-1]]
            path = f"{shape.__name__}.{collapsed_path(shape, loc)}"
            if path not in self._ignored:
                new.setdefault(path, unknown_key_hint(shape, loc))
        if new:
            self._ignored.update(new)
            keys = ", ".join(f"{path}{hint}" for path, hint in new.items())
            warnings.warn(
                f"{where}: the reply holds keys the contract does not define, ignored: {keys} (each "
                "is reported once)",
                AdapterWarning,
                stacklevel=5,
            )

    def close(self) -> None:
        """Close the connection pool, after sending the drop held for the next creation (see
        `open`; its error is raised once the pool is closed)."""
        try:
            self.settle()
        finally:
            self._client.close()


@dataclass
class _PendingDrop:
    """A scenario's drop held to go with the next creation (`HttpSystem.open`): the namespace,
    its path, its scenario, and whether it went with a creation whose outcome the client did not
    learn (a reply other than 201 or 404, a timeout, an interrupt: the server may have dropped
    it)."""

    namespace: str
    path: str
    scenario: str
    sent: bool = False


class _StatusError(AdapterError):
    """An HTTP error status from the server (`HttpSystem.call`), with the status."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


_JSON = {"content-type": "application/json"}
_TIMEOUT = httpx.Timeout(None, connect=CONNECT_TIMEOUT)
_EXTENSIONS = {"timeout": _TIMEOUT.as_dict()}


def _client(
    url: str, transport: httpx.BaseTransport | None
) -> tuple[httpx.Client, httpx.BaseTransport | None, httpx.Headers]:
    """A connection pool for `url` with the deadline, retries and bearer token described above,
    its transport, which `HttpSystem.call` calls directly with the client's headers (the third
    value, with the JSON content type every request of the client carries; httpx's
    client adds a few hundred microseconds per request for cookies, auth and redirect handling,
    none of which the contract uses: no cookies are kept, redirects are not followed, as httpx's
    default). None instead of the transport for a URL with credentials, which httpx's client
    turns into basic auth (its `send` is used then). UsageError for a URL httpx cannot use or a
    token that cannot travel in a header."""
    token = os.environ.get(TOKEN_ENV)
    if token:
        check_token(token, TOKEN_ENV)
    transport = transport or _deadline_transport()
    try:
        client = httpx.Client(
            base_url=url,
            timeout=_TIMEOUT,
            transport=transport,
            headers={
                **({"Authorization": f"Bearer {token}"} if token else {}),
                "Accept-Encoding": "gzip, deflate",
            },
        )
    except (httpx.InvalidURL, ValueError) as exc:
        raise UsageError(
            f"system {redact_url(url)!r} is not a usable URL ({exc}); give http://HOST:PORT[/PREFIX]"
        ) from None
    headers = httpx.Headers({**client.headers, **_JSON})
    return client, None if client.base_url.userinfo else transport, headers


_current = threading.local()


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Inside the block, every socket operation of this thread's requests waits at most until
    `seconds` from now (see `_DeadlineBackend`)."""
    previous = getattr(_current, "deadline", None)
    _current.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        _current.deadline = previous


def _left(timeout: float | None) -> float | None:
    """`timeout` cut to what is left of the thread's deadline; ReadTimeout when none is left."""
    deadline = getattr(_current, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose reads and writes wait at most until the deadline, and whose writes are
    held until the next read: httpcore writes a request's head and body separately, and each
    write woke the server for half a request (two reads and two passes of its event loop per
    request, and on a busy machine two waits for a core); held, the request goes in one send. A
    write error while sending is swallowed as httpcore itself does (a server may close early and
    still answer; the read then tells what happened)."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream
        self._held: list[bytes] = []

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._held:
            data = b"".join(self._held)
            self._held.clear()
            with suppress(httpcore.WriteError):
                self._stream.write(data, _left(timeout))
        return self._stream.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._held.append(buffer)

    def close(self) -> None:
        self._held.clear()
        self._stream.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> Any:
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, _left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend with every connect, read and write cut to the deadline."""

    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:  # fmt: skip
        stream = self._backend.connect_tcp(host, port, _left(timeout), local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
        return _DeadlineStream(self._backend.connect_unix_socket(path, _left(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def _deadline_transport() -> httpx.HTTPTransport:
    """httpx's transport whose connection pool uses `_DeadlineBackend` (httpx takes no backend
    argument, so the pool's is wrapped; tests/systems/test_http_limits.py checks it works)."""
    transport = httpx.HTTPTransport(retries=RETRIES)
    pool: Any = transport._pool
    pool._network_backend = _DeadlineBackend(pool._network_backend)
    return transport


def _read_body(reply: httpx.Response, cap: int, where: str) -> bytes:
    """The body of the streamed `reply`, decompressed, at most `cap` bytes (AdapterError beyond)."""
    encoding = reply.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in {"identity", "gzip", "deflate", ""}:
        raise AdapterError(f"{where}: the reply is {encoding}-encoded; send it plain, gzip or deflate")
    inflate = None
    if encoding == "gzip":
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        inflate = zlib.decompressobj()
    parts: list[bytes] = []
    size = 0
    for chunk in reply.iter_raw():
        pending = chunk
        while pending:
            if inflate is None:
                piece, pending = pending, b""
            else:
                piece = inflate.decompress(pending, cap - size + 1)
                pending = inflate.unconsumed_tail
            size += len(piece)
            if size > cap:
                raise AdapterError(
                    f"{where}: the reply is over {cap} bytes (the client's limit; raise it with "
                    f"${MAX_REPLY_ENV}); a reply that large is a server bug"
                )
            parts.append(piece)
            if inflate is not None and not piece:
                break
    return b"".join(parts)


def _parse(raw: bytes) -> Any:
    """`raw` as JSON; ValueError when it is not JSON, nests too deeply or holds over
    MAX_REPLY_OBJECTS objects."""
    objects = 0

    def counted(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal objects
        objects += 1
        if objects > MAX_REPLY_OBJECTS:
            raise ValueError(f"over {MAX_REPLY_OBJECTS} JSON objects")
        return dict(pairs)

    try:
        return json.loads(raw, object_pairs_hook=counted)
    except RecursionError:
        raise ValueError(f"nested deeper than Python's limit ({sys.getrecursionlimit()})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8: {exc.reason}") from None


class HttpMemory(ScenarioMemory):
    """One namespace on the server, as a ScenarioMemory.

    On a server with `seeded_create` the namespace does not exist until the memory's first call
    creates it: the first `add_thoughts` is held (its body built and checked at once, so a
    thought the contract cannot carry fails there) and sent with the next call, the
    `add_edges` that follows it in every scenario, as one `POST /namespaces` with thoughts and
    edges; any other next call (or the end of the scenario) sends it alone first. So the
    system's rejection of a seeded thought is reported by that next call, and a search is never
    timed with the seeding in it: the runner always seeds (add_thoughts, add_edges) first. The
    creation carries the drop the system holds (see `HttpSystem.open`). `scenario` is the
    scenario the memory is opened for (None: a caller of its own), named in errors."""

    def __init__(self, system: HttpSystem, scenario: str | None = None) -> None:
        self._system = system
        self.scenario = scenario
        self.namespace: str | None = None
        self.path: str | None = None
        self._held: ThoughtsIn | None = None

    def create(self, body: NamespaceIn) -> None:
        """POST /namespaces (seeded with `body` on a server with `seeded_create`, and carrying
        the system's held drop on one with `drop_with_create`); the namespace and its path are
        kept. The held drop is done once the reply is a 201; a 404 is its failure (nothing was
        created: an AdapterError naming its scenario and namespace); after any other failure the
        server may or may not have dropped it, and it stays held (`HttpSystem._settle` sends it,
        a 404 then meaning it went)."""
        system = self._system
        pending = system._pending if system.drop_with_create else None
        sent = body if system.seeded_create else None
        if pending is not None:
            sent = body.model_copy(update={"drop": pending.namespace})
            pending.sent = True
        try:
            namespace = system.call("POST", "/namespaces", NamespaceOut, sent).namespace
        except _StatusError as exc:
            if pending is None or exc.status != 404:
                raise
            system._pending = None
            which = f"scenario {self.scenario!r}" if self.scenario else "the next memory"
            raise AdapterError(
                f"{exc} (the drop of scenario {pending.scenario!r}'s namespace {pending.path}, sent with "
                f"{which}'s creation: that namespace was not there to drop, and nothing was created)"
            ) from exc
        if pending is not None and system._pending is pending:
            system._pending = None
        if not NAMESPACE_PATTERN.fullmatch(namespace):
            raise AdapterError(
                f"{system._where}: POST /namespaces: the server returned the namespace "
                f"{namespace[:100]!r}, which is not a safe URL segment ({NAMESPACE_PATTERN.pattern}); "
                "the server must return plain ids"
            )
        self.namespace = namespace
        self.path = f"/namespaces/{quote(namespace, safe='')}"

    @property
    def holding(self) -> bool:
        """Whether thoughts are held, not sent yet."""
        return self._held is not None

    def flush(self) -> str:
        """The namespace's path, after creating it with the held thoughts when it has not been."""
        if self.path is None:
            held, self._held = self._held, None
            self.create(NamespaceIn.model_construct(thoughts=held.thoughts if held else [], edges=[]))
        assert self.path is not None
        return self.path

    def add_thoughts(self, thoughts: Sequence[Thought]) -> None:
        with self._request("thoughts"):
            body = thoughts_in(list(thoughts))
        if self.path is None and self._held is None:
            self._held = body
            return
        self._system.call("POST", f"{self.flush()}/thoughts", AddedOut, body)

    def add_edges(self, edges: Sequence[Edge]) -> None:
        """The namespace's creation with the held thoughts and these edges, else POST .../edges;
        nothing is sent for no edges (most scenarios have none: a round trip saved)."""
        with self._request("edges"):
            body = edges_in(list(edges))
        if self._held is not None:
            held, self._held = self._held, None
            self.create(NamespaceIn.model_construct(thoughts=held.thoughts, edges=body.edges))
        elif edges:
            self._system.call("POST", f"{self.flush()}/edges", AddedOut, body)

    def delete_thoughts(self, ids: Sequence[str]) -> None:
        """POST .../thoughts/delete (`evalkit.systems.http.operations`)."""
        with self._request("thoughts/delete"):
            operations.delete_thoughts(self._system, self.flush(), list(ids))

    def update_thought(self, id: str, *, content: str | None = None, status: str | None = None) -> None:
        """POST .../thoughts/update (`evalkit.systems.http.operations`)."""
        with self._request("thoughts/update"):
            operations.update_thought(self._system, self.flush(), id, content, status)

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        """POST .../search with `query` and `options`."""
        with self._request("search"):
            body = search_in(query, options)
        return plain_search_response(
            self._system.call("POST", f"{self.flush()}/search", SearchOut, body, plain=True)
        )

    def _search_in(self, request: SearchRequest) -> SearchIn:
        return search_in(request.query, request.options)

    @contextmanager
    def _request(self, endpoint: str) -> Iterator[None]:
        """Building a request body: what the contract cannot carry (a query over its bounds, a
        batch too long) is an AdapterError naming the endpoint, not a pydantic traceback."""
        try:
            yield
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise AdapterError(
                f"{self._system._where}: POST {self.path or '/namespaces/{ns}'}/{endpoint}: the "
                f"contract cannot carry this request: {problems}"
            ) from exc


class HttpBatchMemory(HttpMemory):
    """A namespace on a server with the batch endpoint: also `search_many` (see
    `evalkit.systems.base`), in requests of at most the server's `search_batch`."""

    def search_many(self, requests: Sequence[SearchRequest]) -> list[SearchResponse]:
        """POST .../search/batch with `requests`, in order; one SearchResponse per request."""
        size = self._system.info.search_batch
        endpoint = f"{self.flush()}/search/batch"
        out: list[SearchResponse] = []
        for start in range(0, len(requests), size):
            chunk = requests[start : start + size]
            with self._request("search/batch"):
                body = SearchBatchIn(searches=[self._search_in(r) for r in chunk])
            results = self._system.call("POST", endpoint, SearchBatchOut, body, plain=True)["results"]
            if len(results) != len(chunk):
                raise AdapterError(
                    f"{self._system._where}: POST {endpoint}: the reply holds {len(results)} results "
                    f"for {len(chunk)} searches; answer one result per search, in order"
                )
            out.extend(plain_search_response(result) for result in results)
        return out


def _detail(raw: bytes) -> str:
    """The server's `detail` (FastAPI's error field; its validation errors as `field: message`)
    or the start of the body; never fails, whatever the body holds."""
    try:
        data = _parse(raw)
    except ValueError:
        data = None
    detail = data.get("detail") if isinstance(data, dict) else None
    if isinstance(detail, list):
        return "; ".join(_grouped(item for item in detail if isinstance(item, dict)))[:1000]
    if detail is not None:
        return str(detail)[:1000]
    return raw[:300].decode("utf-8", "replace")


def _grouped(items: Iterator[dict[str, Any]]) -> list[str]:
    """A server's `{loc, msg}` problems as `loc: msg`, a problem repeated across list items
    (same message, same field, other positions) once with a count."""
    groups: dict[tuple[str, str], list[str]] = {}
    for item in items:
        loc = item.get("loc")
        where = ".".join(str(part) for part in loc) if isinstance(loc, list | tuple) else str(loc)
        key = (re.sub(r"\.\d+(?=\.|$)", ".*", where), str(item.get("msg")))
        groups.setdefault(key, []).append(f"{where}: {item.get('msg')}")
    return [
        lines[0] + (f"; {len(lines) - 1} more like it ({key[0]})" if len(lines) > 1 else "")
        for key, lines in groups.items()
    ]
