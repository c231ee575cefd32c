"""A memory system as an MCP server (`evalkit serve --mcp`, stdio), with the official `mcp` SDK.

Tools (arguments and results are the shapes of `evalkit.systems.http.wire`; every result is
structured output, and the same JSON as text):
- `info()` → SystemInfo
- `store_thoughts(namespace, thoughts, edges=[])` → AddedOut (added = the thoughts) — the
  namespace is opened on first use; `edges` are linked after the thoughts, in the same call
- `add_edges(namespace, edges)` → AddedOut
- `search(namespace, query, top_k, now, project?, include_global?, min_relevance?,
  recency_weight?, recency_half_life_days?)` → SearchOut
- `search_batch(namespace, searches)` → {results: [SearchOut, ...]}: each search (the arguments
  of `search` but the namespace) answered in order, in one call (the adapter's batch search)
- `drop_namespace(namespace)` → AddedOut (added = 0): the namespace and its files are gone
`datasets/mcp/reference.toml` is the mapping file that lets the MCP adapter evaluate it.
Calls on memories run on the namespaces' store thread (`Namespaces.run`), within the request
timeout and the namespace cap of `Limits`. A tool that fails reports evalkit's reason (a bad
argument named by field, a StoreError, the namespace limit, the deadline) as its error text.

`serve_stdio` runs the server with its event loop on a thread of its own, so Ctrl-C and SIGTERM
stop it at once (the MCP SDK reads stdin on a worker thread, and its loop ignored both signals
while stdin stayed open), namespaces dropped, and a client that goes away (a broken pipe) ends
it quietly instead of with the SDK's traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from datetime import datetime
from functools import wraps
from typing import Annotated, Any, TypeVar

import anyio
import pydantic_core
from mcp.server.lowlevel import Server
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolRequestParams, CallToolResult, ListToolsResult, TextContent
from mcp.types import Tool as McpTool
from pydantic import ValidationError

from evalkit.errors import EvalkitError
from evalkit.records import DEFAULT_HALF_LIFE_DAYS
from evalkit.systems.base import MemorySystem, SearchRequest
from evalkit.systems.capabilities import declared_capabilities
from evalkit.systems.http.operations import DeletedOut, DeleteIn, UpdatedOut, UpdateIn
from evalkit.systems.http.wire import (
    AddedOut,
    EdgeIn,
    EdgesIn,
    SearchIn,
    SearchOut,
    SystemInfo,
    ThoughtIn,
    ThoughtsIn,
    edges_out,
    plain_search_out,
    system_info,
    thoughts_out,
)
from evalkit.systems.namespaces import Limits, Namespaces

_Result = TypeVar("_Result")
_LOG = logging.getLogger(__name__)

Declare = Callable[[str], Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]]
"""`declare(description)`: the decorator that makes a typed async function one of the tools."""


def _reasoned(tool: Callable[..., Awaitable[_Result]]) -> Callable[..., Awaitable[_Result]]:
    """`tool`, its evalkit failures raised as ToolError with evalkit's message (any other
    exception's text stays on the server: the client reads "Error executing tool X")."""

    @wraps(tool)
    async def call(*args: Any, **kwargs: Any) -> _Result:
        try:
            return await tool(*args, **kwargs)
        except ValidationError as exc:
            problems = (f"{'.'.join(map(str, e['loc'])) or exc.title}: {e['msg']}" for e in exc.errors())
            raise ToolError("; ".join(problems)) from exc
        except EvalkitError as exc:
            raise ToolError(str(exc)) from exc

    return call


def add_operation_tools(declare: Declare, namespaces: Namespaces, capabilities: frozenset[str]) -> None:
    """The tools of a scenario's steps, `delete_thoughts` and `update_thought` (shapes of
    `evalkit.systems.http.operations`), for a system declaring `deletion` / `update` (otherwise
    the tool answers an error naming the capability)."""

    def require(capability: str, verb: str) -> None:
        """ToolError unless the system declares `capability`."""
        if capability not in capabilities:
            raise ToolError(f"this system's memory cannot {verb} thoughts (capability {capability!r})")

    @declare("Forget thoughts of a namespace in every index (capability deletion).")
    @_reasoned
    async def delete_thoughts(namespace: str, ids: list[str]) -> DeletedOut:
        body = DeleteIn(ids=ids)
        require("deletion", "delete")
        memory = namespaces.ensure(namespace)
        await namespaces.run(lambda: memory.delete_thoughts(list(body.ids)))
        return DeletedOut(deleted=len(body.ids))

    @declare("Replace a thought's content (re-embedded, re-indexed) and/or status (capability update).")
    @_reasoned
    async def update_thought(
        namespace: str, id: str, content: str | None = None, status: str | None = None
    ) -> UpdatedOut:
        body = UpdateIn.model_validate({"id": id, "content": content, "status": status})
        require("update", "update")
        memory = namespaces.ensure(namespace)
        await namespaces.run(lambda: memory.update_thought(body.id, content=body.content, status=body.status))
        return UpdatedOut(updated=1)


def create_server(system: MemorySystem, namespaces: Namespaces | None = None) -> Server[Any]:
    """An MCP server exposing `system`'s memories by namespace through the tools above
    (`namespaces`: where they are kept, default a fresh `Namespaces` with the default limits).

    The SDK's low-level `Server`, not MCPServer: each tool is a typed async function whose
    schemas and argument model are the SDK's (`Tool.from_function`, the MCPServer decorator's
    machinery, run once here), so its listing is what MCPServer listed; a call validates its
    arguments with that model and runs the function, without MCPServer's per-call context, result
    conversion and output-schema check (evalkit builds its results from its own records) and
    without the SDK's per-message middleware (an OpenTelemetry span, a no-op without an
    exporter; a request-state boundary for input-required rounds, which no tool has). Results
    and errors are MCPServer's: a model's structured output and its JSON (indented) as text; a
    bad argument "Error executing tool X: <pydantic's errors>", an evalkit failure "Error
    executing tool X: <evalkit's reason>", any other exception "Error executing tool X" (its
    traceback logged on stderr), an unknown tool "Unknown tool: X"; each with isError."""
    namespaces = namespaces or Namespaces(system)
    tools: dict[str, Tool] = {}

    def declare(description: str) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]:
        def add(function: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
            tool = Tool.from_function(function, description=description)
            tools[tool.name] = tool
            return function

        return add

    @declare("The system's name, capabilities and description.")
    async def info() -> SystemInfo:
        return system_info(system)

    @declare(
        "Store thoughts in a namespace (opened on first use), and optionally link thoughts with "
        "typed edges in the same call (stored after the thoughts)."
    )
    @_reasoned
    async def store_thoughts(namespace: str, thoughts: list[ThoughtIn], edges: list[EdgeIn] = []) -> AddedOut:  # noqa: B006 - pydantic copies it
        batch = thoughts_out(ThoughtsIn(thoughts=thoughts))
        links = edges_out(EdgesIn(edges=edges)) if edges else []

        def store() -> None:
            memory = namespaces.ensure(namespace)
            memory.add_thoughts(batch)
            if links:
                memory.add_edges(links)

        await namespaces.run(store)
        return AddedOut(added=len(thoughts))

    @declare("Link thoughts of a namespace with typed edges (replaces, contradicts, ...).")
    @_reasoned
    async def add_edges(namespace: str, edges: list[EdgeIn]) -> AddedOut:
        batch = edges_out(EdgesIn(edges=edges))
        await namespaces.run(lambda: namespaces.ensure(namespace).add_edges(batch))
        return AddedOut(added=len(edges))

    @declare("Search a namespace; min_relevance null = the default gate, 0 = none.")
    @_reasoned
    async def search(
        namespace: str,
        query: str,
        top_k: int,
        now: datetime,
        project: str | None = None,
        include_global: bool = False,
        min_relevance: float | None = None,
        recency_weight: float = 0.0,
        recency_half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
    ) -> Annotated[CallToolResult, SearchOut]:
        asked = SearchIn(
            query=query,
            top_k=top_k,
            now=now,
            project=project,
            include_global=include_global,
            min_relevance=min_relevance,
            recency_weight=recency_weight,
            recency_half_life_days=recency_half_life_days,
        )
        response = await namespaces.run(
            lambda: namespaces.ensure(namespace).search(asked.query, asked.options())
        )
        return _structured(plain_search_out(response))

    @declare(
        "Several searches of a namespace in one call (each with the arguments of search), "
        "answered in order: {results: [the result of search, ...]}."
    )
    @_reasoned
    async def search_batch(
        namespace: str, searches: list[SearchIn]
    ) -> Annotated[CallToolResult, dict[str, Any]]:
        def answer() -> dict[str, Any]:
            asked = [SearchRequest(one.query, one.options()) for one in searches]
            return {"results": [plain_search_out(r) for r in namespaces.ensure(namespace).search_many(asked)]}

        return _structured(await namespaces.run(answer))

    add_operation_tools(declare, namespaces, declared_capabilities(system))

    @declare("Delete a namespace and its files.")
    @_reasoned
    async def drop_namespace(namespace: str) -> AddedOut:
        await namespaces.run(namespaces.drop, namespace)
        return AddedOut(added=0)

    listed = [
        McpTool(name=n, description=t.description, input_schema=t.parameters, output_schema=t.output_schema)
        for n, t in tools.items()
    ]

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        tool = tools.get(params.name)
        if tool is None:
            return _error(f"Unknown tool: {params.name}")
        try:
            arguments = tool.fn_metadata.validate_arguments(params.arguments or {})
        except ValidationError as exc:
            return _error(f"Error executing tool {tool.name}: {exc}")
        try:
            result = await tool.fn(**arguments)
        except ToolError as exc:
            return _error(f"Error executing tool {tool.name}: {exc}")
        except Exception:
            _LOG.exception("Tool %r raised an unexpected exception", tool.name)
            return _error(f"Error executing tool {tool.name}")
        if isinstance(result, CallToolResult):
            return result
        text = pydantic_core.to_json(result, fallback=str, indent=2).decode()
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=result.model_dump(mode="json", by_alias=True),
        )

    server: Server[Any] = Server(
        "evalkit-memory",
        instructions="Isolated memories by namespace: store, link, search.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.clear()  # the SDK's OpenTelemetry span per message (see above)
    return server


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


_NON_FINITE = re.compile(rb"[:,\[]-?(?:NaN|Infinity)")
"""Where pydantic-core's JSON may hold a NaN or an infinity (it writes them as bare constants,
which JSON does not have); a string spelling one matches too, harmlessly (see `_structured`)."""


def _structured(value: dict[str, Any]) -> CallToolResult:
    """A search tool's result: `value` (JSON values) as its structured output and, once
    serialised, as its text: compact UTF-8 JSON (non-ASCII as is), built once (MCPServer dumped
    it twice more, a JSON-mode copy and an indented text, on every call, and those passes cost
    more than the searches), by pydantic-core: about three times faster than `json.dumps` on the
    built-in suite's `search_batch` results (0.6 ms against 1.8 ms for a run's 15), the same
    values. `json.dumps` writes it instead when the output may hold a NaN or an infinity (a
    cheap substring test first, then `_NON_FINITE`) or when pydantic-core cannot serialise a
    value (a lone surrogate: as before). JSON cannot carry a NaN or an infinity: such a score,
    a bug of the served system, is the tool's error saying so (ToolError: the client reads
    "Error executing tool X: the result holds a NaN or an infinity ..."), never invalid JSON."""
    try:
        out: bytes | None = pydantic_core.to_json(value)
    except pydantic_core.PydanticSerializationError:
        out = None
    if out is not None and not ((b"NaN" in out or b"Infinity" in out) and _NON_FINITE.search(out)):
        text = out.decode()
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except ValueError as exc:  # allow_nan=False: the only ValueError plain values can raise
            raise ToolError(
                f"the result holds a NaN or an infinity, which JSON cannot carry ({exc}): "
                "a score of the served system that is not a finite number"
            ) from exc
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=value)


def serve_stdio(system: MemorySystem, limits: Limits | None = None) -> None:
    """Serve `system` over stdio until the client closes stdin or goes away, or a signal
    (KeyboardInterrupt / Terminated propagate after the namespaces are dropped; see the module
    docstring)."""
    namespaces = Namespaces(system, limits)
    server = create_server(system, namespaces)
    failure: list[BaseException] = []

    def loop() -> None:
        try:
            anyio.run(_run_stdio, server)
        except BaseException as exc:  # reported by the main thread below
            failure.append(exc)

    thread = threading.Thread(target=loop, name="evalkit-mcp", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.2)
    finally:
        namespaces.close()
    if failure and not _client_gone(failure[0]):
        raise failure[0]
    if failure:  # nobody reads stdout any more: the interpreter's last flush must not complain
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


async def _run_stdio(server: Server[Any]) -> None:
    """`server.run_stdio_async()`, except that a line the SDK cannot read as a JSON-RPC message
    gets the JSON-RPC error reply (-32700 for text that is not JSON, -32600 for JSON that is not
    a message) with `id` null, as JSON-RPC 2.0 requires: the SDK dropped it without a reply, so
    its client waited for nothing. The SDK's own INFO lines about failed tools are not logged."""
    import mcp.types as types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    logging.getLogger("mcp").setLevel(logging.WARNING)
    async with _pipes() as streams, stdio_server(*(streams or ())) as (read, write):
        forward, received = anyio.create_memory_object_stream[Any](0)

        async def answer_unreadable() -> None:
            async with forward:
                async for item in read:
                    if not isinstance(item, Exception):
                        await forward.send(item)
                        continue
                    if "json_invalid" in str(item):
                        code, message = types.PARSE_ERROR, "Parse error: the line is not JSON"
                    else:
                        code, message = types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message"
                    error = types.ErrorData(code=code, message=message)
                    await write.send(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=error)))

        async with anyio.create_task_group() as group:
            group.start_soon(answer_unreadable)
            await server.run(received, write, server.create_initialization_options())
            group.cancel_scope.cancel()


def _client_gone(exc: BaseException) -> bool:
    """Whether `exc` (or every exception of a group) is a closed pipe or stream: the client left."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_client_gone(inner) for inner in exc.exceptions)
    return isinstance(
        exc, BrokenPipeError | ConnectionResetError | anyio.BrokenResourceError | anyio.ClosedResourceError
    )


@asynccontextmanager
async def _pipes() -> AsyncIterator[tuple[Any, Any] | None]:
    """stdin and stdout as the SDK's `stdio_server` takes them (lines in, text out), read and
    written by the event loop itself; None when they are not pipes, sockets or terminals (a
    regular file), or when stdout and stderr are one file, and the SDK's own streams serve then.
    The SDK reads and writes through anyio's file wrapper, a hop to a worker thread for every
    line each way: on a busy machine a wait for a core per message. As the SDK does, fds 0 and 1
    point at the null device and at stderr while serving (the system's stray output misses the
    wire) and at the wire again afterwards."""
    loop = asyncio.get_running_loop()
    try:
        if os.fstat(1)[:2] == os.fstat(2)[:2]:  # one file: non-blocking stdout would be stderr too
            yield None
            return
        wire_in, wire_out = os.dup(0), os.dup(1)
    except OSError:
        yield None
        return
    reading = os.fdopen(wire_in, "rb", buffering=0)
    writing = os.fdopen(wire_out, "wb", buffering=0)
    reader = asyncio.StreamReader()
    try:
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), reading
        )
    except (ValueError, OSError):
        reading.close()
        writing.close()
        yield None
        return
    try:
        write_transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, writing)
    except (ValueError, OSError):
        read_transport.close()
        writing.close()
        yield None
        return
    writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
    quiet = os.open(os.devnull, os.O_RDONLY)
    os.dup2(quiet, 0)
    os.close(quiet)
    os.dup2(2, 1)
    try:
        yield _Lines(reader), _Text(writer)
    finally:
        with suppress(OSError):
            os.dup2(wire_in, 0)
            os.dup2(wire_out, 1)
        read_transport.close()
        write_transport.close()


class _Lines:
    """The lines of an asyncio stream as text (UTF-8, undecodable bytes replaced, as the SDK
    reads stdin), each with its newline; the last one without, if the stream ends without one."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._buffer = bytearray()
        self._scanned = 0

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                self._scanned = 0
                return line.decode("utf-8", "replace")
            self._scanned = len(self._buffer)
            chunk = await self._reader.read(1 << 16)
            if not chunk:
                if not self._buffer:
                    raise StopAsyncIteration
                line = bytes(self._buffer)
                self._buffer.clear()
                return line.decode("utf-8", "replace")
            self._buffer += chunk


class _Text:
    """An asyncio stream writer as the SDK's stdout (text written, then flushed)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()
