"""One MCP client session (stdio or streamable HTTP) on a background event loop, callable from
the runner's thread, with the bounds the `evalkit.systems.mcp.adapter` docstring lists.

`Session(label, server)` starts the server (stdio) or connects (url), runs the handshake and lists
the tools (`tools`: names; `schemas`: each tool's inputSchema; `descriptions`,
`output_schemas`); `call(tool, arguments)` returns the structured output and text blocks;
`send(tool, arguments, what, ordered=…)` calls without waiting (its reply is read, and its error
raised naming `what`, by the next call, `settle()` or `close()`; ordered: before anything else is
sent, else while the next call is in flight); `close()` ends it and stops the process. The
SDK's check of each result against the tool's outputSchema is turned off: the adapter reads and
checks every result itself, and that check was most of its time.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
import sys
import tempfile
import threading
from collections.abc import AsyncIterator
from concurrent.futures import Future
from contextlib import asynccontextmanager, suppress
from typing import Any, NamedTuple

from evalkit.errors import AdapterError
from evalkit.systems import client_limits
from evalkit.systems.mcp.mapping import ServerSpec
from evalkit.systems.mcp.processes import guarded

CALL_TIMEOUT = client_limits.MCP_TIMEOUT
"""Seconds one tool call may take by default ($EVALKIT_SYSTEM_TIMEOUT)."""

START_TIMEOUT = client_limits.MCP_START_TIMEOUT
"""Seconds the server gets, by default, to start and answer the handshake (`initialize`, then
`tools/list`) in all ($EVALKIT_SYSTEM_TIMEOUT sets this deadline too)."""

STOP_TIMEOUT = 1.0
"""Seconds a stdio server gets to exit after its stdin closes and after SIGTERM, each."""


class Session:
    """One MCP client session on a background event loop, callable from the runner's thread."""

    def __init__(self, label: str, server: ServerSpec) -> None:
        from mcp import Client

        self._label = label
        self.timeout = client_limits.timeout(None, CALL_TIMEOUT)
        start_timeout = client_limits.timeout(None, START_TIMEOUT)
        self._step = "initialize"  # the handshake's request awaiting its answer
        self._failure: list[str] = []  # what the stdio transport saw go wrong, if anything
        self._pending: _Pending | None = None  # a call sent with `send`, its reply not read yet
        self._lock = threading.Lock()
        target: Any = server.url
        self._transport: _StdioTransport | None = None
        if server.command is not None:
            _check_command(label, server)
            target = self._transport = _StdioTransport(
                server, client_limits.max_reply_bytes(None), self._failure
            )
        # the SDK's own per-read timeout is a backstop: the wall-clock deadline below comes first
        self._client = Client(target, read_timeout_seconds=2 * self.timeout + 1)
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ready: Future[list[Any]] = Future()  # the listed tools
        self._thread = threading.Thread(
            target=self._loop.run_until_complete, args=(self._main(),), daemon=True
        )
        self._thread.start()
        try:
            listed = self._ready.result(timeout=start_timeout)
            self.schemas: dict[str, dict[str, Any]] = {t.name: dict(t.input_schema or {}) for t in listed}
            self.descriptions: dict[str, str] = {t.name: t.description or "" for t in listed}
            self.output_schemas: dict[str, dict[str, Any]] = {
                t.name: dict(t.output_schema or {}) for t in listed
            }
            self.tools = list(self.schemas)
        except BaseException as exc:
            self._stop_loop()  # the server is stopped (its exit status and stderr known) first
            if not isinstance(exc, Exception):
                self.close()
                raise
            if isinstance(exc, TimeoutError) and not self._failure:
                message = (
                    f"cannot start or reach the MCP server (no answer within {start_timeout:g} s): "
                    f"it did not answer {self._step!r}{self._stderr()}; is it stuck starting? (raise "
                    f"the deadline with ${client_limits.TIMEOUT_ENV}, in seconds)"
                )
            else:
                reason = self._failure[0] if self._failure else self._start_failure(server, exc)
                message = f"cannot start or reach the MCP server ({reason}){self._stderr()}; check [server]"
            self.close()
            raise AdapterError(f"{label}: {message}") from exc
        atexit.register(self._close_at_exit)

    async def _main(self) -> None:
        self._task = asyncio.current_task()
        try:
            async with self._client as client:
                self._step = "tools/list"
                # evalkit checks every result itself (the adapter's paths, `checked` on each
                # response); the SDK's own jsonschema check of structured output against the tool's
                # outputSchema on every call took about two thirds of the adapter's time on the
                # built-in suite, and refused a tool whose result lacks structured output
                client.session.validate_tool_result = _trust_results  # type: ignore[method-assign]
                listed = await client.list_tools()
                self._ready.set_result(list(listed.tools))
                await self._stop.wait()
        except BaseException as exc:  # reported by the runner's thread, never on this one
            if not self._ready.done():
                self._ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError) and not self._failure:
                self._failure.append(f"the session ended ({exc!r})")

    def call(self, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> Any:
        """The tool's result: its structured output and its text blocks; AdapterError on isError,
        past the deadline (`timeout`, default the session's) or when the server breaks.

        A call `send` left pending is answered too. An ordered one first: its error is raised
        instead, and this call is not sent. An unordered one after this call's own reply: its
        error is raised then (this call's result is lost with it); when this call fails, its
        own error is raised and that call stays pending, for `settle()` or `close()`."""
        with self._lock:
            pending = self._pending
        if pending is not None and pending.ordered:
            self.settle()
        result = self._answer(tool, self._submit(tool, arguments), timeout, "")
        self.settle()
        return result

    def send(self, tool: str, arguments: dict[str, Any], what: str, *, ordered: bool = True) -> None:
        """Call `tool` without waiting for its reply: the next `call` or `send`, `settle()` or
        `close()` reads it (within the session's deadline, counted from then) and raises its
        error there, as an AdapterError naming `what` (e.g. "the drop after scenario 'x',
        namespace 'evalkit-…'"). At most one call is pending: a `send` answers the one before.

        `ordered` (the default): nothing else is sent before its reply (the next call waits for
        it first), for a call the next ones depend on, such as a drop that deletes the entities
        a scenario stored in a memory every scenario shares. Not ordered: the next call goes out
        at once, while this one is in flight, and this reply is read once that call's own reply
        is in. The server then has both requests at once: each carries its JSON-RPC id (the
        SDK's client matches the replies, in whatever order they come), and a server that
        answers one request at a time answers this one first, as it was sent first."""
        self.settle()
        with self._lock:
            self._pending = _Pending(tool, self._submit(tool, arguments), what, ordered)

    def settle(self, timeout: float | None = None) -> None:
        """Wait for the reply to the call `send` left pending, if any, at most `timeout` seconds
        (default the session's deadline); its error is raised here. Nothing is pending afterwards,
        whatever the outcome (past the deadline the call is cancelled)."""
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is not None:
            self._answer(pending.tool, pending.future, timeout, pending.what)

    def _submit(self, tool: str, arguments: dict[str, Any]) -> Future[Any]:
        if self._failure:
            raise AdapterError(f"{self._label}: tool {tool!r} not called: {self._failure[0]}{self._stderr()}")
        return asyncio.run_coroutine_threadsafe(self._client.call_tool(tool, arguments), self._loop)

    def _answer(self, tool: str, future: Future[Any], timeout: float | None, what: str) -> Any:
        """The result of the call `future` (see `call`); `what` names a call sent earlier."""
        from mcp.types import TextContent

        seconds = self.timeout if timeout is None else timeout
        named = f"tool {tool!r} ({what})" if what else f"tool {tool!r}"
        try:
            result = future.result(timeout=seconds)
        except TimeoutError as exc:
            future.cancel()
            raise AdapterError(
                f"{self._label}: {named}: no answer within {seconds:g} s; is the server stuck? "
                f"(raise the deadline with ${client_limits.TIMEOUT_ENV})"
            ) from exc
        except BaseException as exc:
            future.cancel()
            if not isinstance(exc, Exception):
                raise
            reason = self._failure[0] if self._failure else repr(exc)
            raise AdapterError(f"{self._label}: {named} failed: {reason}{self._stderr()}") from exc
        texts = [block.text for block in result.content if isinstance(block, TextContent)]
        if result.is_error:
            raise AdapterError(f"{self._label}: {named} reported an error: {' '.join(texts)[:500]}")
        return result.structured_content, texts

    def _stderr(self) -> str:
        """ "; its stderr ended with: …" for a server whose stderr is captured (else "")."""
        tail = self._transport.stderr_tail() if self._transport is not None else ""
        return f"; its stderr ended with: {tail!r}" if tail else ""

    def _start_failure(self, server: ServerSpec, exc: BaseException) -> str:
        """Why the handshake failed, in words: the server's exit status when it exited, the URL
        that refused the connection, else the first underlying error (never an ExceptionGroup).
        The HTTP client's errors are recognised by their class names, which every httpx
        generation the SDK may use shares."""
        leaves = _leaves(exc) or [exc]
        status = self._transport.returncode if self._transport is not None else None
        if status is not None:
            return f"the server exited with status {status} before answering {self._step!r}; see its stderr"
        for leaf in leaves:
            kinds = {kind.__name__ for kind in type(leaf).__mro__}
            if "TransportError" in kinds:
                return f"cannot connect to {server.url}: {type(leaf).__name__}: {leaf}"
            if "HTTPStatusError" in kinds:
                code = getattr(getattr(leaf, "response", None), "status_code", "?")
                return f"{server.url} answered HTTP {code}; is it the server's MCP endpoint?"
        where = f"{server.url}: " if server.url is not None else ""
        return f"{where}{type(leaves[0]).__name__}: {leaves[0]}"[:500]

    def close(self) -> None:
        """End the session and stop the server: a clean close when the handshake succeeded, then
        (or at once, when it did not) the session's task is cancelled, and the transport
        terminates, then kills, the process. Safe to call twice. A call `send` left pending is
        answered first; its error is raised once the server is stopped."""
        atexit.unregister(self._close_at_exit)  # one server per scenario: closed sessions must not pile up
        failed: AdapterError | None = None
        if self._thread.is_alive():
            try:
                self.settle()
            except AdapterError as exc:
                failed = exc
        self._stop_loop()
        if self._transport is not None and not self._thread.is_alive():
            self._transport.close_log()
        if failed is not None:
            raise failed

    def _close_at_exit(self) -> None:
        """`close()` at the interpreter's exit, for a session its owner never closed. The error
        of a call still pending (a drop whose reply nobody read: neither `settle()` nor `close()`
        was called after it) is written on stderr in one line, "evalkit: error at exit: …"; raised
        from an atexit callback, it was a traceback headed "Exception ignored in atexit callback".
        The exit status is the program's either way: an atexit callback cannot change it."""
        try:
            self.close()
        except AdapterError as exc:
            print(
                f"evalkit: error at exit: {exc} (it was read only at exit: close the system, or "
                "call its settle(), once its last scenario is done to have it raised in the program)",
                file=sys.stderr,
            )

    def _stop_loop(self) -> None:
        if not self._thread.is_alive():
            return
        if self._ready.done() and self._ready.exception() is None:  # a session to close cleanly
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(timeout=2 * STOP_TIMEOUT + 1)
        if self._thread.is_alive() and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
            self._thread.join(timeout=2 * STOP_TIMEOUT + 1)


class _Pending(NamedTuple):
    """A call `Session.send` sent, its reply not read yet."""

    tool: str
    future: Future[Any]
    what: str  # what the call is, for its error ("the drop after scenario …")
    ordered: bool  # nothing else is sent before its reply


def _leaves(exc: BaseException) -> list[BaseException]:
    """The errors inside `exc` (itself when it is not an exception group), cancellations left out."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [] if isinstance(exc, asyncio.CancelledError) else [exc]


def _check_command(label: str, server: ServerSpec) -> None:
    """AdapterError naming the setting when the server's `cwd` is not a folder or its command is
    not found (on the PATH the server gets, or in `cwd` for a relative path), before anything
    starts. A command holding a template placeholder is checked as rendered by the adapter."""
    import shutil

    command = str(server.command).replace("{python}", sys.executable)
    if server.cwd is not None and not os.path.isdir(server.cwd):
        raise AdapterError(
            f"{label}: cannot start or reach the MCP server: [server] cwd {server.cwd!r} is not a folder; "
            "create it or fix cwd in the mapping"
        )
    path = server.env.get("PATH", os.environ.get("PATH", os.defpath))
    found = shutil.which(command, path=path) if os.sep not in command else (
        command if os.access(os.path.join(server.cwd or ".", command), os.X_OK) else None
    )  # fmt: skip
    if found is None:
        where = " (on PATH)" if os.sep not in command else f" (in cwd {server.cwd!r})" if server.cwd else ""
        raise AdapterError(
            f"{label}: cannot start or reach the MCP server: [server] command {command!r} is not found "
            f"or not executable{where}; install it or give its full path in the mapping"
        )


async def _trust_results(name: str, result: Any) -> None:
    """The SDK session's output-schema check, replaced (see `Session._main`): results are read
    and checked by the adapter."""


class _StdioTransport:
    """The MCP stdio transport (an async context manager yielding the session's read and write
    streams), with the bounds of the module docstring: lines at most `limit` bytes, a non-JSON-RPC
    line an error, the process always stopped. A failure is appended to `failure` (the session
    reports it) and ends the read stream, so the waiting call fails at once."""

    def __init__(self, server: ServerSpec, limit: int, failure: list[str]) -> None:
        self._server, self._limit, self._failure = server, limit, failure
        self._exit: Any = None
        self.returncode: int | None = None  # the exit status of a server that closed its stdout itself
        self._closed_stdout = False
        # [server] stderr = "capture": the server's stderr goes to a temporary file (closed and
        # removed with this object) and its end is quoted in errors
        self._log: Any = tempfile.TemporaryFile() if server.stderr == "capture" else None  # noqa: SIM115 - lives as long as the session

    def close_log(self) -> None:
        if self._log is not None:
            self._log.close()

    def stderr_tail(self, limit: int = 1000) -> str:
        """The last `limit` bytes the server wrote on its stderr, when it is captured ("" otherwise)."""
        if self._log is None or self._log.closed:
            return ""
        with suppress(OSError, ValueError):
            self._log.seek(0, os.SEEK_END)
            size = self._log.tell()
            self._log.seek(max(0, size - limit))
            return self._log.read().decode("utf-8", "replace").strip()
        return ""

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
        command = guarded([str(spec.command).replace("{python}", sys.executable), *spec.args])
        process = await anyio.open_process(
            command, env={**get_default_environment(), **inherited, **spec.env}, cwd=spec.cwd,
            stderr=self._log, start_new_session=True,
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
                self._closed_stdout = True

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
                    if self._closed_stdout:
                        self.returncode = process.returncode
                    with suppress(Exception):  # its pipes' transports closed on this loop, not at GC
                        await process.aclose()
                group.cancel_scope.cancel()


async def _stop(process: Any) -> None:
    """Close the server's stdin, then SIGTERM, then SIGKILL, `STOP_TIMEOUT` seconds apart. The
    signals go to the server's process group, which is its own (`start_new_session`): a server
    behind a wrapper (npx, uvx, a shell script) is stopped with the processes the wrapper started,
    even one still starting that has not read its closed stdin yet (such a child outlived its
    killed wrapper for as long as its start-up took: over 10 s under load). Once the server has
    exited, whatever is left in its group (a child it started and did not wait for) is killed:
    nothing the server started outlives the session."""
    import anyio

    with suppress(Exception):
        await process.stdin.aclose()
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            _signal_group(process, sig)
        with anyio.move_on_after(STOP_TIMEOUT):
            await process.wait()
            break
    with suppress(AttributeError, OSError):  # what the server left in its group once it exited
        os.killpg(process.pid, signal.SIGKILL)


def _signal_group(process: Any, sig: signal.Signals) -> None:
    """`sig` to the process group that `process` leads, else (no such group: it is gone, or
    there are no process groups) to the process alone."""
    try:
        os.killpg(process.pid, sig)
    except (AttributeError, OSError):  # no os.killpg (Windows), or no group left to signal
        with suppress(ProcessLookupError):
            process.send_signal(sig)
