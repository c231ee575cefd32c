"""A memory system that speaks the Model Context Protocol (`--system mcp:MAPPING.toml`).

The mapping file (TOML) says how to reach the server and how evalkit's calls map onto its tools.
Names on the left are always evalkit's, values the server's:

    name = "my-memory"                      # the system's name in the report
    capabilities = ["projects"]             # what the server supports ([] for none); required

    [server]                                # stdio: a command…
    command = "my-memory-server"            # "{python}" = the interpreter running evalkit
    args = ["--stdio"]
    # env = {KEY = "value"}; cwd = "dir"
    # inherit_env = ["PYTHONPATH"]          # variables copied from evalkit's environment (the
                                            # SDK passes only a safe few, such as PATH and HOME)
    # url = "http://127.0.0.1:8000/mcp"     # …or streamable HTTP instead of command

    [namespace]                             # optional: how each scenario gets a fresh memory
    argument = "namespace"                  # filled with a fresh "evalkit-<hex>" per scenario
    reset = "reset"                         # tool called before each scenario (optional)
    drop = "drop_namespace"                 # tool called after each scenario (optional)

    [store]
    tool = "store_memory"
    batch = "thoughts"                      # optional: one call with this list argument;
                                            # without it, one call per thought
    arguments = {id = "id", content = "text", project = "project"}   # thought field → argument
    # result_id = "memory.id"               # where the server's own id is in the result, when it
                                            # assigns ids (search results are mapped back)

    [edges]                                 # optional; without it, edges are not sent
    tool = "link"
    batch = "edges"
    arguments = {source = "from", target = "to", type = "kind"}

    [search]
    tool = "recall"
    arguments = {query = "query", top_k = "limit", project = "project"}  # only mapped options are sent
    hits = "results"                        # path of the hit list in the result ("" = the result)
    hit = {id = "id", relevance = "score"}  # hit field → key in each hit; only id is required
    # response = {min_relevance = "gate", dropped_ids = "dropped"}   # optional: the gate's report
    #                                       # (candidates, filtered_out, min_relevance, dropped_ids,
    #                                       # gate_candidates: [{id, bm25, similarity}] for the sweep;
    #                                       # cut_tied: the row below the top_k cut ties the last hit)
    # result = "auto"                       # "structured", "text" (JSON in the first text block) or auto

Fields of a thought: id, content, project, status, created_at (ISO-8601), is_cluster,
is_global, importance. Search options: query, top_k, project, include_global, min_relevance,
recency_weight, recency_half_life_days, now (ISO-8601). Hit fields: those of `evalkit.Hit`.
Paths are dot-separated keys (digits index lists). A scenario-wide `namespace.argument` is added
to every store, edges, search, reset and drop call.

The adapter keeps one MCP session for the whole run on a background event loop, checks at start
that every mapped tool exists, and raises AdapterError naming the system, the tool and what was
wrong: a tool error (`isError`), a result without JSON, a missing path, a hit without an id.

Bounds (see `evalkit.systems.client_limits`): each call, and starting the server, has a
wall-clock deadline ($EVALKIT_SYSTEM_TIMEOUT, default 120 s); over stdio each message line is at
most $EVALKIT_SYSTEM_MAX_REPLY_MB (16 MiB by default), read with a linear line splitter (the
SDK's re-joins its buffer for every chunk: a 200 MB reply took minutes), and a line on stdout
that is not a JSON-RPC message (a banner, a log line) is an error naming it: stdio servers must
log to stderr. Whatever fails, the server process is stopped (terminated, killed after
`STOP_TIMEOUT`); after a failed or interrupted scenario the drop tool gets `CLEANUP_TIMEOUT` and
the original error is what the run reports.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import sys
import threading
import tomllib
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from evalkit.errors import AdapterError
from evalkit.records import HIT_FIELDS as DECLARED_HIT_FIELDS
from evalkit.records import SENT_THOUGHT_FIELDS, Edge, GateCandidate, SearchResponse, Thought, hit_from_values
from evalkit.systems import client_limits
from evalkit.systems.capabilities import Capability
from evalkit.validation import FrozenModel, field_problems

CALL_TIMEOUT = client_limits.MCP_TIMEOUT
"""Seconds one tool call may take by default ($EVALKIT_SYSTEM_TIMEOUT)."""

CLEANUP_TIMEOUT = 1.0
"""Seconds the drop tool gets after a scenario that failed or was interrupted."""

STOP_TIMEOUT = 1.0
"""Seconds a stdio server gets to exit after its stdin closes and after SIGTERM, each."""

THOUGHT_FIELDS = SENT_THOUGHT_FIELDS
EDGE_FIELDS = ("source", "target", "type")
SEARCH_OPTIONS = (
    "query", "top_k", "project", "include_global", "min_relevance", "recency_weight",
    "recency_half_life_days", "now",
)  # fmt: skip
HIT_FIELDS = tuple(f.name for f in DECLARED_HIT_FIELDS)
RESPONSE_FIELDS = (
    "candidates", "filtered_out", "min_relevance", "dropped_ids", "gate_candidates", "cut_tied",
)  # fmt: skip


class ServerSpec(FrozenModel):
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    inherit_env: list[str] = Field(default_factory=list)
    cwd: str | None = None
    url: str | None = None

    @model_validator(mode="after")
    def _one_transport(self) -> ServerSpec:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command (stdio) or url (streamable HTTP)")
        return self


class NamespaceSpec(FrozenModel):
    argument: str | None = None
    reset: str | None = None
    drop: str | None = None


class WriteSpec(FrozenModel):
    tool: str
    batch: str | None = None
    arguments: dict[str, str]
    result_id: str | None = None


class SearchSpec(FrozenModel):
    tool: str
    arguments: dict[str, str]
    hits: str = ""
    hit: dict[str, str] = Field(default_factory=lambda: {"id": "id"})
    response: dict[str, str] = Field(default_factory=dict)
    result: Literal["auto", "structured", "text"] = "auto"


class McpMapping(FrozenModel):
    """The mapping file's schema (see the module docstring)."""

    name: str
    capabilities: list[Capability]
    server: ServerSpec
    namespace: NamespaceSpec = NamespaceSpec()
    store: WriteSpec
    edges: WriteSpec | None = None
    search: SearchSpec

    @model_validator(mode="after")
    def _known_fields(self) -> McpMapping:
        checks = [
            ("store.arguments", self.store.arguments, THOUGHT_FIELDS),
            ("search.arguments", self.search.arguments, SEARCH_OPTIONS),
            ("search.hit", self.search.hit, HIT_FIELDS),
            ("search.response", self.search.response, RESPONSE_FIELDS),
        ]
        if self.edges is not None:
            checks.append(("edges.arguments", self.edges.arguments, EDGE_FIELDS))
        problems = []  # every problem at once, not one per attempt
        for where, mapping, known in checks:
            unknown = sorted(set(mapping) - set(known))
            if unknown:
                problems.append(
                    f"{where}: unknown evalkit name(s) {', '.join(unknown)}; known: {', '.join(known)}"
                )
        if "id" not in self.search.hit:
            problems.append("search.hit must map id (where each hit's id is)")
        if "query" not in self.search.arguments:
            problems.append("search.arguments must map query")
        if "id" not in self.store.arguments and self.store.result_id is None:
            problems.append(
                "store needs arguments.id (the server takes evalkit's ids) or result_id (it assigns its own)"
            )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def tools(self) -> list[str]:
        named = [self.store.tool, self.search.tool, self.namespace.reset, self.namespace.drop]
        return [t for t in [*named, self.edges.tool if self.edges else None] if t is not None]


def load_mapping(path: str | Path) -> McpMapping:
    """The mapping in `path`; AdapterError naming the file and each bad field."""
    source = Path(path)
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise AdapterError(
            f"MCP mapping file {source} does not exist; see the README's MCP mapping example"
        ) from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AdapterError(
            f"MCP mapping file {source} cannot be read as TOML: {exc}; fix the file (the README's "
            "MCP mapping example shows the format)"
        ) from exc
    try:
        return McpMapping.model_validate(data)
    except ValidationError as exc:
        raise AdapterError(
            f"MCP mapping file {source}: {'; '.join(field_problems(exc, McpMapping))}"
        ) from exc


class _Session:
    """One MCP client session on a background event loop, callable from the runner's thread."""

    def __init__(self, label: str, server: ServerSpec) -> None:
        from mcp import Client

        self._label = label
        self.timeout = client_limits.timeout(None, CALL_TIMEOUT)
        self._failure: list[str] = []  # what the stdio transport saw go wrong, if anything
        target: Any = server.url
        if server.command is not None:
            target = _StdioTransport(server, client_limits.max_reply_bytes(None), self._failure)
        # the SDK's own per-read timeout is a backstop: the wall-clock deadline below comes first
        self._client = Client(target, read_timeout_seconds=2 * self.timeout + 1)
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ready: Future[list[str]] = Future()
        self._thread = threading.Thread(
            target=self._loop.run_until_complete, args=(self._main(),), daemon=True
        )
        self._thread.start()
        try:
            self.tools = self._ready.result(timeout=self.timeout)
        except BaseException as exc:
            self.close()
            if isinstance(exc, Exception):
                reason = self._failure[0] if self._failure else (
                    f"no answer within {self.timeout:g} s" if isinstance(exc, TimeoutError) else repr(exc)
                )  # fmt: skip
                raise AdapterError(
                    f"{label}: cannot start or reach the MCP server ({reason}); check [server]"
                ) from exc
            raise
        atexit.register(self.close)

    async def _main(self) -> None:
        self._task = asyncio.current_task()
        try:
            async with self._client as client:
                listed = await client.list_tools()
                self._ready.set_result([t.name for t in listed.tools])
                await self._stop.wait()
        except BaseException as exc:  # reported by the runner's thread, never on this one
            if not self._ready.done():
                self._ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError) and not self._failure:
                self._failure.append(f"the session ended ({exc!r})")

    def call(self, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> Any:
        """The tool's result: its structured output and its text blocks; AdapterError on isError,
        past the deadline (`timeout`, default the session's) or when the server breaks."""
        from mcp.types import TextContent

        if self._failure:
            raise AdapterError(f"{self._label}: tool {tool!r} not called: {self._failure[0]}")
        seconds = self.timeout if timeout is None else timeout
        future = asyncio.run_coroutine_threadsafe(self._client.call_tool(tool, arguments), self._loop)
        try:
            result = future.result(timeout=seconds)
        except TimeoutError as exc:
            future.cancel()
            raise AdapterError(
                f"{self._label}: tool {tool!r}: no answer within {seconds:g} s; is the server stuck? "
                f"(raise the deadline with ${client_limits.TIMEOUT_ENV})"
            ) from exc
        except BaseException as exc:
            future.cancel()
            if not isinstance(exc, Exception):
                raise
            reason = self._failure[0] if self._failure else repr(exc)
            raise AdapterError(f"{self._label}: tool {tool!r} failed: {reason}") from exc
        texts = [block.text for block in result.content if isinstance(block, TextContent)]
        if result.is_error:
            raise AdapterError(f"{self._label}: tool {tool!r} reported an error: {' '.join(texts)[:500]}")
        return result.structured_content, texts

    def close(self) -> None:
        """End the session and stop the server: a clean close when the handshake succeeded, then
        (or at once, when it did not) the session's task is cancelled, and the transport
        terminates, then kills, the process. Safe to call twice."""
        if not self._thread.is_alive():
            return
        if self._ready.done() and self._ready.exception() is None:  # a session to close cleanly
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(timeout=2 * STOP_TIMEOUT + 1)
        if self._thread.is_alive() and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
            self._thread.join(timeout=2 * STOP_TIMEOUT + 1)


class _StdioTransport:
    """The MCP stdio transport (an async context manager yielding the session's read and write
    streams), with the bounds of the module docstring: lines at most `limit` bytes, a non-JSON-RPC
    line an error, the process always stopped. A failure is appended to `failure` (the session
    reports it) and ends the read stream, so the waiting call fails at once."""

    def __init__(self, server: ServerSpec, limit: int, failure: list[str]) -> None:
        self._server, self._limit, self._failure = server, limit, failure
        self._exit: Any = None

    async def __aenter__(self) -> Any:
        self._exit = self._run()
        return await self._exit.__aenter__()

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._exit.__aexit__(*exc)

    @asynccontextmanager
    async def _run(self) -> AsyncIterator[Any]:
        import anyio
        import mcp.types
        from mcp.client.stdio import get_default_environment
        from mcp.shared.message import SessionMessage

        spec = self._server
        inherited = {k: os.environ[k] for k in spec.inherit_env if k in os.environ}
        command = [str(spec.command).replace("{python}", sys.executable), *spec.args]
        process = await anyio.open_process(
            command, env={**get_default_environment(), **inherited, **spec.env}, cwd=spec.cwd,
            stderr=None, start_new_session=True,
        )  # fmt: skip
        to_session, from_server = anyio.create_memory_object_stream[Any](0)
        to_server, from_session = anyio.create_memory_object_stream[Any](0)

        def fail(reason: str) -> None:
            if not self._failure:
                self._failure.append(reason)

        async def read() -> None:
            assert process.stdout is not None
            buffer = bytearray()
            async with to_session:
                async for chunk in process.stdout:
                    scan = len(buffer)
                    buffer += chunk
                    start = 0
                    while (end := buffer.find(b"\n", scan)) >= 0:
                        line = bytes(buffer[start:end]).strip()
                        start = scan = end + 1
                        if not line:
                            continue
                        try:
                            message = mcp.types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                        except ValueError as exc:
                            first = str(exc).splitlines()[1:2] or [""]
                            fail(
                                f"the server wrote a line that is not a JSON-RPC message on stdout "
                                f"({line[:100]!r}: {first[0].strip()[:200]}); an MCP stdio server must "
                                "write only protocol messages there: send banners and logs to stderr"
                            )
                            return
                        await to_session.send(SessionMessage(message))
                    del buffer[:start]
                    if len(buffer) > self._limit:
                        fail(
                            f"a message from the server is over {self._limit} bytes (the client's limit; "
                            f"raise it with ${client_limits.MAX_REPLY_ENV})"
                        )
                        return

        async def write() -> None:
            assert process.stdin is not None
            async with from_session:
                async for item in from_session:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    try:
                        await process.stdin.send(data.encode())
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                        fail("the server closed its stdin (did it exit? see its stderr)")
                        return

        async with anyio.create_task_group() as group:
            group.start_soon(read)
            group.start_soon(write)
            try:
                yield from_server, to_server
            finally:
                with anyio.CancelScope(shield=True):
                    await _stop(process)
                group.cancel_scope.cancel()


async def _stop(process: Any) -> None:
    """Close the server's stdin, then SIGTERM, then SIGKILL, `STOP_TIMEOUT` seconds apart."""
    import anyio

    with suppress(Exception):
        await process.stdin.aclose()
    for step in (None, process.terminate, process.kill):
        if step is not None:
            with suppress(ProcessLookupError):
                step()
        with anyio.move_on_after(STOP_TIMEOUT):
            await process.wait()
            return


class McpSystem:
    """The MCP server a mapping describes. The session starts when the object is built."""

    def __init__(self, mapping: McpMapping, source: str = "<mapping>") -> None:
        self.mapping = mapping
        self.name = mapping.name
        self.capabilities = frozenset(mapping.capabilities)
        self.source = source
        self._label = f"system {mapping.name!r} (MCP, {source})"
        self._session = _Session(self._label, mapping.server)
        missing = [t for t in mapping.tools() if t not in self._session.tools]
        if missing:
            self._session.close()
            raise AdapterError(
                f"{self._label}: the server has no tool {', '.join(map(repr, missing))}; "
                f"its tools: {', '.join(self._session.tools) or 'none'}"
            )

    @classmethod
    def from_mapping(cls, path: str | Path) -> McpSystem:
        return cls(load_mapping(path), str(path))

    def describe(self) -> dict[str, Any]:
        return {"system": "mcp", "mapping": self.source, **self.mapping.model_dump(exclude={"server"})}

    def close(self) -> None:
        self._session.close()

    @contextmanager
    def open(self, workdir: Path) -> Iterator[McpMemory]:
        """A fresh memory: a new namespace value, the reset tool before and the drop tool after."""
        spec = self.mapping.namespace
        scope = {spec.argument: f"evalkit-{uuid.uuid4().hex}"} if spec.argument else {}
        if spec.reset:
            self._session.call(spec.reset, dict(scope))
        try:
            yield McpMemory(self, scope)
        except BaseException:
            if spec.drop:
                with suppress(BaseException):  # the scenario's failure (or the Ctrl-C) is what counts
                    self._session.call(spec.drop, dict(scope), timeout=CLEANUP_TIMEOUT)
            raise
        if spec.drop:
            self._session.call(spec.drop, dict(scope))

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        return self._session.call(tool, arguments)

    @property
    def label(self) -> str:
        return self._label


class McpMemory:
    """One scenario's memory on the server (a ScenarioMemory)."""

    def __init__(self, system: McpSystem, scope: dict[str, str]) -> None:
        self._system, self._scope = system, scope
        self._to_evalkit: dict[str, str] = {}

    def add_thoughts(self, thoughts: Sequence[Thought]) -> None:
        spec = self._system.mapping.store
        rows = [
            _arguments(spec.arguments, _plain({name: getattr(t, name) for name in THOUGHT_FIELDS}))
            for t in thoughts
        ]
        if spec.batch is not None:
            self._system.call(spec.tool, {**self._scope, spec.batch: rows})
            return
        for thought, row in zip(thoughts, rows, strict=True):
            result = self._system.call(spec.tool, {**self._scope, **row})
            if spec.result_id is not None:
                server_id = _at(
                    self._system.label,
                    spec.tool,
                    _json(self._system.label, spec.tool, result, "auto"),
                    spec.result_id,
                )
                self._to_evalkit[str(server_id)] = thought.id

    def add_edges(self, edges: Sequence[Edge]) -> None:
        spec = self._system.mapping.edges
        if spec is None or not edges:
            return
        rows = [_arguments(spec.arguments, asdict(e)) for e in edges]
        if spec.batch is not None:
            self._system.call(spec.tool, {**self._scope, spec.batch: rows})
        else:
            for row in rows:
                self._system.call(spec.tool, {**self._scope, **row})

    def search(self, query: str, **options: Any) -> SearchResponse:
        spec = self._system.mapping.search
        sent = _arguments(spec.arguments, _plain({"query": query, **options}))
        label = self._system.label
        result = _json(label, spec.tool, self._system.call(spec.tool, {**self._scope, **sent}), spec.result)
        listed = _at(label, spec.tool, result, spec.hits) if spec.hits else result
        if not isinstance(listed, list):
            raise AdapterError(
                f"{label}: tool {spec.tool!r}: search.hits {spec.hits!r} is {type(listed).__name__}, "
                "not a list of hits"
            )
        hits = []
        for position, raw in enumerate(listed, start=1):
            fields = {
                name: _at(label, spec.tool, raw, key, optional=name != "id") for name, key in spec.hit.items()
            }
            fields = {k: v for k, v in fields.items() if v is not None}
            if "id" not in fields:
                raise AdapterError(
                    f"{label}: tool {spec.tool!r}: hit {position} has a null id ({spec.hit['id']!r}); "
                    "every hit needs its thought's id"
                )
            fields["id"] = self._evalkit_id(fields["id"])
            try:
                hits.append(hit_from_values(fields))
            except TypeError as exc:
                raise AdapterError(f"{label}: tool {spec.tool!r}: hit {position}: {exc}") from exc
        gate = {
            name: _at(label, spec.tool, result, key, optional=True) for name, key in spec.response.items()
        }
        if gate.get("dropped_ids") is not None:
            gate["dropped_ids"] = tuple(self._evalkit_id(i) for i in gate["dropped_ids"])
        if gate.get("gate_candidates") is not None:
            gate["gate_candidates"] = self._candidates(spec.tool, gate["gate_candidates"])
        return SearchResponse(hits=tuple(hits), **{k: v for k, v in gate.items() if v is not None})

    def _evalkit_id(self, server_id: Any) -> str:
        """The evalkit id of an id in a search result: the thought the server stored under it
        (when the server assigns its own ids), else the id itself as text."""
        return self._to_evalkit.get(str(server_id), str(server_id))

    def _candidates(self, tool: str, rows: Any) -> tuple[GateCandidate, ...]:
        """The gate's candidate rows (`[{id, bm25, similarity}, ...]` in the result) as records."""
        label = self._system.label
        if not isinstance(rows, list) or not all(isinstance(row, dict) and "id" in row for row in rows):
            raise AdapterError(
                f"{label}: tool {tool!r}: search.response.gate_candidates must be a list of "
                f"{{id, bm25, similarity}} objects, got {rows!r:.200}"
            )
        return tuple(
            GateCandidate(
                id=self._evalkit_id(row["id"]),
                bm25=bool(row.get("bm25", False)),
                similarity=row.get("similarity"),
            )
            for row in rows
        )


def _plain(values: Mapping[str, Any]) -> dict[str, Any]:
    """Datetimes as ISO-8601 strings (JSON arguments)."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in values.items()}


def _arguments(mapping: Mapping[str, str], values: Mapping[str, Any]) -> dict[str, Any]:
    """The mapped values under the server's argument names (unmapped ones are not sent)."""
    return {argument: values[name] for name, argument in mapping.items() if name in values}


def _json(label: str, tool: str, result: tuple[Any, list[str]], where: str) -> Any:
    """The tool result as JSON: structured output, or the first text block parsed as JSON."""
    structured, texts = result
    if where in {"auto", "structured"} and structured is not None:
        return structured
    if where == "structured":
        raise AdapterError(
            f"{label}: tool {tool!r} returned no structured output; set search.result = 'text'"
        )
    if not texts:
        raise AdapterError(f"{label}: tool {tool!r} returned neither structured output nor text")
    try:
        return json.loads(texts[0])
    except json.JSONDecodeError as exc:
        raise AdapterError(
            f"{label}: tool {tool!r}: the text result is not JSON ({texts[0][:200]!r})"
        ) from exc
    except RecursionError:
        raise AdapterError(
            f"{label}: tool {tool!r}: the text result is JSON nested deeper than Python's limit "
            f"({sys.getrecursionlimit()}); the tool must return a flat result"
        ) from None


def _at(label: str, tool: str, value: Any, path: str, *, optional: bool = False) -> Any:
    """`value` at the dot-separated `path`; None when absent and `optional`, else AdapterError."""
    for key in path.split("."):
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        elif optional:
            return None
        else:
            raise AdapterError(f"{label}: tool {tool!r}: no {path!r} in the result ({str(value)[:200]})")
    return value
