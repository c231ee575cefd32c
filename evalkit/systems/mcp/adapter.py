"""A memory system that speaks the Model Context Protocol (`--system mcp:MAPPING.toml`, or
`--system mcp:PRESET` for a mapping shipped in `evalkit/systems/mcp/presets/`).

The mapping file (TOML) says how to reach the server and how evalkit's calls map onto its tools.
Format 2 (`version = 2`: argument templates, isolation strategies, batch search) is described in
`evalkit.systems.mcp.mapping` and the README. Format 1, below, keeps working (it is upgraded to
format 2 on load); its names on the left are always evalkit's, values the server's:

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

The adapter keeps run-wide MCP sessions, each on a background event loop: one when the scenarios
run one at a time, one per scenario in flight when they run several at once (`--workers N`, and
by default: `McpSystem.in_flight`; a scenario takes an
idle session or starts a server, each with its own `{tmpdir}`), one per process on Ray; with
isolation strategy "process", one server, and session, per scenario, after a probe at start. It
checks at start that every mapped tool exists and that every mapped argument fits the tool's inputSchema
(`evalkit.systems.mcp.schema`), and raises AdapterError naming the system, the tool and what was
wrong: a tool error (`isError`), a result without JSON, a missing path, a hit without an id.

Fewer waits: with one run-wide server, a scenario's drop is sent without waiting for its reply
(`Session.send`), and its error is raised naming the scenario and the namespace. With isolation
strategy "namespace" the drop concerns a namespace no later scenario uses, so the next scenario's
first call goes out while the drop is in flight, and the drop's reply is read after that call's
own reply (pipelined). With "tools" (a drop deleting entities in the memory every scenario shares:
it must be done before the next scenario stores its own) and "none", nothing else is sent before
the drop's reply (ordered). Either way `McpSystem.settle()` (called by the runner at the end of
every run) or `close()` reads each session's last one, and at most one drop is pending per
session. A copy on a worker waits for every drop (it sees no end of the run, so nobody would read
its last drop's reply), and so does one server per scenario (closed after it). With
`edges.with_store` the store call is held by `add_thoughts` until `add_edges` (or the next
operation) sends it with the edges, so seeding is one call.

Other processes (Ray; `--workers N` on processes when `in_flight` is 0): a system
pickles without its sessions; a copy in another process starts its own server on its first
scenario (with one process per scenario, nothing is shared: every scenario starts its own),
checks the tools again, and shares that server, and the seed map
of the isolation check, with every other copy of the same system in that process (the process
executor unpickles one copy per chunk of scenarios). This process's servers are stopped when it
ends: at the interpreter's exit and, in a multiprocessing worker (which skips `atexit`), by a
`multiprocessing.util.Finalize` that runs when the worker returns, fails or is interrupted
(Ctrl-C). A worker killed outright leaves its servers reading EOF on stdin, which ends a stdio
server. Results equal the serial run's: each scenario gets its fresh memory either way.

Isolation is verified, whatever the strategy: a hit that is a thought another scenario seeded
(and this one did not), or the same thought returned twice in one search (copies of a shared
distractor left by other scenarios), is an AdapterError saying the system is not isolated,
naming both scenarios and the isolation setting.

Bounds (see `evalkit.systems.client_limits`): each call, and starting the server, has a
wall-clock deadline ($EVALKIT_SYSTEM_TIMEOUT, default 120 s); over stdio each message line is at
most $EVALKIT_SYSTEM_MAX_REPLY_MB (16 MiB by default), read with a linear line splitter (the
SDK's re-joins its buffer for every chunk: a 200 MB reply took minutes), and a line on stdout
that is not a JSON-RPC message (a banner, a log line) is an error naming it: stdio servers must
log to stderr. Whatever fails, the server process is stopped (terminated, killed after
`STOP_TIMEOUT`). After a failed or interrupted scenario the previous scenario's drop, if still
pending, is read (within `CLEANUP_TIMEOUT`; its error becomes a note on the scenario's), then the
scenario's own drop is sent, within `CLEANUP_TIMEOUT`, and the scenario's error is what the run
reports (the CLI prints its notes after it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from multiprocessing import util as multiprocessing_util
from pathlib import Path
from typing import Any

from evalkit.errors import AdapterError
from evalkit.records import Edge, GateCandidate, SearchResponse, Thought, hit_from_values
from evalkit.systems.base import (
    IN_FLIGHT,
    IN_FLIGHT_PROCESSES,
    UNDECLARED_EMBEDDER,
    MemorySystem,
    OpenContext,
    ScenarioMemory,
    SearchOptions,
    SearchRequest,
)
from evalkit.systems.mcp.mapping import (
    EDGE_FIELDS,
    HIT_FIELDS,
    RESPONSE_FIELDS,
    SEARCH_OPTIONS,
    THOUGHT_FIELDS,
    McpMapping,
    ServerSpec,
    check_requirements,
    load_mapping,
    mapping_source,
    server_values,
)
from evalkit.systems.mcp.schema import check_arguments
from evalkit.systems.mcp.session import CALL_TIMEOUT, STOP_TIMEOUT, Session
from evalkit.systems.mcp.templates import compiled, placeholders, render

CLEANUP_TIMEOUT = 1.0
"""Seconds the drop tool gets after a scenario that failed or was interrupted."""

_NO_ITEM: dict[str, Any] = {}  # the item template of a batch without one (one object, compiled once)

__all__ = [
    "CALL_TIMEOUT", "CLEANUP_TIMEOUT", "EDGE_FIELDS", "HIT_FIELDS", "RESPONSE_FIELDS", "SEARCH_OPTIONS",
    "STOP_TIMEOUT", "THOUGHT_FIELDS", "McpMapping", "McpMemory", "McpSystem", "ServerSpec", "load_mapping",
]  # fmt: skip


@dataclass
class _Slot:
    """One run-wide server's session, and its `{tmpdir}` (removed when it stops)."""

    session: Session
    tmpdir: Path | None


@dataclass
class _Shared:
    """What the copies of one McpSystem in one process share: the run-wide servers (a pool: one
    per scenario in flight, none with one process per scenario), those not in a scenario now,
    and the isolation check's seed map."""

    pid: int = field(default_factory=os.getpid)
    slots: list[_Slot] = field(default_factory=list)
    idle: list[_Slot] = field(default_factory=list)
    seeded_by: dict[str, list[str]] = field(default_factory=dict)  # thought id → its scenarios
    lock: threading.Lock = field(default_factory=threading.Lock)

    def stop(self) -> None:
        """Stop every run-wide server and remove its `{tmpdir}` (a later use starts one again);
        the first error of a session's close (a drop that failed) is raised once all are stopped."""
        with self.lock:
            slots, self.slots, self.idle = self.slots, [], []
        failures = []
        for slot in slots:
            try:
                slot.session.close()
            except Exception as exc:
                failures.append(exc)
            finally:
                if slot.tmpdir is not None:
                    shutil.rmtree(slot.tmpdir, ignore_errors=True)
        if failures:
            raise failures[0]


_SHARED: dict[str, _Shared] = {}
"""This process's `_Shared` of each system, by the system's token. A forked worker inherits the
parent's entries (their `pid` is the parent's): those are replaced, never used or closed."""

_SHARED_LOCK = threading.Lock()
_FINALIZED_IN: list[int] = []  # the process whose servers the Finalize below stops


def _shared(token: str) -> _Shared:
    """This process's shared state of the system `token` (new in a process that has none)."""
    with _SHARED_LOCK:
        shared = _SHARED.get(token)
        if shared is None or shared.pid != os.getpid():
            shared = _SHARED[token] = _Shared()
        if _FINALIZED_IN[-1:] != [os.getpid()]:
            # a multiprocessing worker ends through `multiprocessing.util._exit_function`, not
            # atexit: this runs there (and at a normal interpreter exit), Ctrl-C included
            multiprocessing_util.Finalize(None, _stop_servers, exitpriority=100)
            _FINALIZED_IN.append(os.getpid())
        return shared


def _stop_servers() -> None:
    """Stop every run-wide server this process started (a worker's, when it ends)."""
    with _SHARED_LOCK:
        mine = [s for s in _SHARED.values() if s.pid == os.getpid() and s.slots]
    for shared in mine:
        with suppress(Exception):
            shared.stop()


class McpSystem(MemorySystem):
    """The MCP server a mapping describes. The session (or, with one process per scenario, a
    probe session) starts when the object is built, and the mapping is checked against it.
    It pickles without its session (see "Workers" in the module docstring)."""

    def __init__(self, mapping: McpMapping, source: str = "<mapping>") -> None:
        self.mapping = mapping
        self.name = mapping.name
        self.capabilities = frozenset(mapping.capabilities)
        self.own_embedder = mapping.embedder or UNDECLARED_EMBEDDER
        self.source = source
        self._label = f"system {mapping.name!r} (MCP, {source})"
        self._found = check_requirements(mapping, self._label)
        self._per_scenario = mapping.isolation.strategy == "process"
        self._home = os.getpid()  # where the system was built: the run's process (drops deferred)
        self._token = uuid.uuid4().hex
        self._state = _shared(self._token)
        self._templates: dict[int, tuple[Any, Callable[[Mapping[str, Any]], Any]]] = {}
        self.sends_top_k = "top_k" in placeholders(mapping.search.arguments)  # else evalkit cuts at top_k
        self.in_flight = self._slots()
        self.needs_workdir = self._uses_workdir()
        if self._per_scenario:
            probe = Path(tempfile.mkdtemp(prefix="evalkit-mcp-probe-"))
            try:
                self._checked(self._start(probe, "probe")).close()
            finally:
                shutil.rmtree(probe, ignore_errors=True)
        else:
            started = self._new_slot()
            with self._state.lock:
                self._state.idle.append(started)

    def __getstate__(self) -> dict[str, Any]:
        """Everything but this process's session and seed map (and the compiled templates): a
        copy starts its own server."""
        return {k: v for k, v in self.__dict__.items() if k not in {"_state", "_templates"}}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._state = _shared(self._token)
        self._templates = {}

    def renderer(self, template: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], Any]:
        """`render` of one of the mapping's argument templates with the mapping's null setting,
        compiled on first use (`evalkit.systems.mcp.templates.compiled`)."""
        found = self._templates.get(id(template))
        if found is None or found[0] is not template:
            found = self._templates[id(template)] = (
                template, compiled(template, send_null=self.mapping.null == "send")
            )  # fmt: skip
        return found[1]

    def _slots(self) -> int:
        """`in_flight`: how many scenarios the runner keeps in flight on threads by default
        (`evalkit.systems.base`; each takes a run-wide session of its own, `_run_session`):
        `IN_FLIGHT_PROCESSES` with a stdio server, where each session is a server process of its
        own; `IN_FLIGHT` with a server at a URL and isolation strategy "namespace", whose
        scenarios are apart on one server. A server at a URL with another strategy keeps one
        memory for every session: 0, one scenario at a time (`--workers N` then means processes,
        as for an in-process system)."""
        if self.mapping.server.command is not None:
            return IN_FLIGHT_PROCESSES
        return IN_FLIGHT if self.mapping.isolation.strategy == "namespace" else 0

    @contextmanager
    def _run_session(self) -> Iterator[Session]:
        """A run-wide session for one scenario (or call): an idle one of this process, else a new
        server started (and checked), given back when the block ends. A run keeps as many as it
        has scenarios in flight; one at a time reuses the same session throughout."""
        shared = self._state
        with shared.lock:
            slot = shared.idle.pop() if shared.idle else None
        if slot is None:
            slot = self._new_slot()
        try:
            yield slot.session
        finally:
            with shared.lock:
                if any(slot is kept for kept in shared.slots):  # not stopped meanwhile
                    shared.idle.append(slot)

    def _new_slot(self) -> _Slot:
        """Start and check a run-wide server, with a `{tmpdir}` of its own when its templates use
        one (removed if it fails); it joins this process's servers (`_Shared.slots`)."""
        spec = self.mapping.server
        tmpdir = None
        if any("tmpdir" in placeholders(t) for t in spec.templates() if t):
            tmpdir = Path(tempfile.mkdtemp(prefix="evalkit-mcp-server-"))
        try:
            slot = _Slot(self._checked(self._start(None, None, tmpdir)), tmpdir)
        except BaseException:
            if tmpdir is not None:
                shutil.rmtree(tmpdir, ignore_errors=True)
            raise
        with self._state.lock:
            self._state.slots.append(slot)
        return slot

    @classmethod
    def from_mapping(cls, path: str | Path) -> McpSystem:
        """The system of the mapping file `path`, or of the preset of that name."""
        source = mapping_source(str(path))
        return cls(load_mapping(source), str(path))

    def _start(self, workdir: Path | None, scenario: str | None, tmpdir: Path | None = None) -> Session:
        spec = self.mapping.server
        values = server_values(self._found, workdir, scenario, tmpdir)
        rendered = ServerSpec(
            command=render(spec.command, values) if spec.command is not None else None,
            args=[str(render(a, values)) for a in spec.args],
            env={k: str(render(v, values)) for k, v in spec.env.items()},
            inherit_env=spec.inherit_env,
            cwd=render(spec.cwd, values) if spec.cwd is not None else None,
            url=render(spec.url, values) if spec.url is not None else None,
            stderr=spec.stderr,
        )
        return Session(self._label, rendered)

    def _checked(self, session: Session) -> Session:
        """`session`, after the tool names and arguments are checked against it (closed on failure)."""
        try:
            missing = [t for t in self.mapping.tools() if t not in session.tools]
            if missing:
                raise AdapterError(
                    f"{self._label}: the server has no tool {', '.join(map(repr, missing))}; "
                    f"its tools: {', '.join(session.tools) or 'none'}"
                )
            check_arguments(self.mapping, session.schemas, self._label)
        except BaseException:
            session.close()
            raise
        return session

    def describe(self) -> dict[str, Any]:
        return {"system": "mcp", "mapping": self.source, **self.mapping.model_dump(exclude={"server"})}

    def close(self) -> None:
        """Stop this process's run-wide servers (a later scenario starts one again); a drop still
        pending is answered first, and its error raised once the servers are stopped."""
        self._state.stop()

    def settle(self) -> None:
        """Wait for the drop of each session's last scenario, sent without waiting (see
        `McpMemory.cleanup`; ordered or pipelined, at most one is pending per session); the
        first error, naming the scenario and the namespace, is raised here once every session
        is settled. The runner calls it at the end of every run; a caller of `open` of its own
        calls it (or `close`) after its last scenario, or the error is only written on stderr
        at the interpreter's exit (`Session._close_at_exit`)."""
        with self._state.lock:
            sessions = [slot.session for slot in self._state.slots]
        failures = []
        for session in sessions:
            try:
                session.settle()
            except Exception as exc:
                failures.append(exc)
        if failures:
            raise failures[0]

    @property
    def defers_drops(self) -> bool:
        """Whether a scenario's drop is sent without waiting for its reply: with one run-wide
        server, in the process that built the system (whose runner calls `settle` at the end of
        the run). A copy on a worker, which sees no end of the run, waits for every drop."""
        return not self._per_scenario and os.getpid() == self._home

    @property
    def pipelines_drops(self) -> bool:
        """Whether the next scenario's calls go out while a drop sent without waiting is still in
        flight (`Session.send`, not ordered): with isolation strategy "namespace", where the drop
        concerns only the scenario's own namespace and the next scenario works in a fresh one.
        With "tools" the drop deletes what the scenario stored in the memory all scenarios share,
        and with "none" nothing says what it touches: nothing is sent before its reply."""
        return self.defers_drops and self.mapping.isolation.strategy == "namespace"

    def _uses_workdir(self) -> bool:
        """`needs_workdir`: whether `open` needs a scratch folder of its own (see
        `evalkit.systems.base`): with one server per scenario (started in it), or when a call's
        template sends `{workdir}`; otherwise the server keeps the memory and the runner makes no
        folder per scenario."""
        if self._per_scenario:
            return True
        mapping = self.mapping
        templates: list[Any] = [mapping.store.arguments, mapping.store.item, mapping.search.arguments]
        templates += [s.arguments for s in (mapping.delete, mapping.update) if s is not None]
        templates += [c.arguments for c in (mapping.isolation.reset, mapping.isolation.drop) if c is not None]
        if mapping.edges is not None:
            templates += [mapping.edges.arguments, mapping.edges.item]
        if mapping.search.batch is not None:
            templates.append(mapping.search.batch.arguments)
        return any("workdir" in placeholders(t) for t in templates if t)

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[McpMemory]:
        """A fresh memory for the context's scenario (default: the workdir's name): a new
        namespace value, or a new server process in the context's workdir; the drop tool after
        it (sent without waiting when `defers_drops`, pipelined when `pipelines_drops`; see
        `McpMemory.cleanup`). After a
        failure or an interrupt, `McpMemory.abandon`: both failures are told, and the
        scenario's memory is dropped best-effort."""
        workdir, scenario = context.workdir, context.scenario or context.workdir.name
        with self._scenario_session(workdir, scenario) as session:
            scope = {
                "namespace": f"evalkit-{uuid.uuid4().hex}",
                "scenario": scenario,
                "workdir": str(workdir),
            }
            memory = McpMemory(self, session, scope)
            try:
                yield memory
            except BaseException as exc:
                memory.abandon(exc)
                raise
            memory.cleanup(None, defer=self.defers_drops)

    @contextmanager
    def _scenario_session(self, workdir: Path, scenario: str) -> Iterator[Session]:
        """The session of one scenario: its own server (one process per scenario), closed after
        it, or a run-wide one (`_run_session`)."""
        if self._per_scenario:
            session = self._start(workdir, scenario)
            try:
                yield session
            finally:
                session.close()
        else:
            with self._run_session() as session:
                yield session

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call `tool` on the run's session (not with one process per scenario)."""
        if self._per_scenario:
            raise AdapterError(f"{self._label}: no run-wide session (one server process per scenario)")
        with self._run_session() as session:
            return session.call(tool, arguments)

    @property
    def label(self) -> str:
        return self._label

    def seeded(self, scenario: str, ids: Sequence[str]) -> None:
        """Remember that `scenario` seeded `ids` (for the isolation check)."""
        with self._state.lock:
            for thought_id in ids:
                owners = self._state.seeded_by.setdefault(thought_id, [])
                if scenario not in owners:
                    owners.append(scenario)

    def seeders(self, thought_id: str) -> list[str]:
        with self._state.lock:
            return list(self._state.seeded_by.get(thought_id, ()))


class McpMemory(ScenarioMemory):
    """One scenario's memory on the server (a ScenarioMemory)."""

    def __init__(self, system: McpSystem, session: Session, scope: dict[str, str]) -> None:
        self._system, self._session, self._scope = system, session, scope
        self._mapping = system.mapping
        self._to_evalkit: dict[str, str] = {}
        self._stored: list[str] = []  # evalkit ids, in order
        self._server_ids: list[Any] = []  # what {seeded_ids} holds: the server's ids when it assigns them
        self._reset_done = False
        self._held: list[Any] | None = None  # edges.with_store: the store call's items, until the edges come

    # --- calls -------------------------------------------------------------------------------

    def _call(self, tool: str, template: Mapping[str, Any], values: Mapping[str, Any], *,
              timeout: float | None = None, extra: Mapping[str, Any] | None = None) -> Any:  # fmt: skip
        """Call `tool` with `template` rendered from `values` and the scope (plus `extra`, already
        rendered, and the namespace argument under its name)."""
        return self._session.call(tool, self._arguments(template, values, extra), timeout=timeout)

    def _arguments(
        self, template: Mapping[str, Any], values: Mapping[str, Any], extra: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """A call's arguments: `template` rendered, `extra` and the namespace argument added."""
        arguments = self._system.renderer(template)({**self._scope, **values})
        arguments.update(extra or {})
        isolation = self._mapping.isolation
        if isolation.strategy == "namespace" and isolation.argument:
            arguments.setdefault(isolation.argument, self._scope["namespace"])
        return arguments

    def _item(self, template: Mapping[str, Any], values: Mapping[str, Any]) -> Any:
        return self._system.renderer(template)({**self._scope, **values})

    def cleanup(self, timeout: float | None, *, defer: bool = False) -> None:
        """The drop call, with the scenario's stored ids (`{seeded_ids}`), after a store still
        held (edges.with_store) is sent. `defer`: sent without waiting for its reply (the
        session's next call, `McpSystem.settle` at the end of the run, or its close reads it and
        raises its error, naming this scenario and namespace): the server drops while the runner
        scores; with `McpSystem.pipelines_drops` the next scenario's first call goes out before
        its reply, which is read after that call's own (`Session.send`). `timeout` (after a
        failure): the store held is discarded, the drop waited for at most that long."""
        if timeout is None:
            self._flush()
        self._held = None
        drop = self._mapping.isolation.drop
        if drop is None:
            return
        if not defer:
            self._call(drop.tool, drop.arguments, {"seeded_ids": list(self._server_ids)}, timeout=timeout)
            return
        scope = self._scope
        what = f"the drop after scenario {scope['scenario']!r}, namespace {scope['namespace']!r}"
        arguments = self._arguments(drop.arguments, {"seeded_ids": list(self._server_ids)})
        self._session.send(drop.tool, arguments, what, ordered=not self._system.pipelines_drops)

    def abandon(self, failure: BaseException) -> None:
        """After `failure` (the scenario's error, or a Ctrl-C): the previous scenario's drop, if
        its reply is still unread (pipelined: this scenario's calls went out before it was in),
        is read within `CLEANUP_TIMEOUT`, and its error becomes a note on `failure`; then this
        scenario's drop is sent, waited for at most `CLEANUP_TIMEOUT`, its own error dropped:
        `failure` is what the run reports. A drop pending was answered first, so this one is
        sent whatever became of it, and no namespace stays behind on the server until its idle
        timeout."""
        with suppress(BaseException):  # a second Ctrl-C here: the first failure is what counts
            try:
                self._session.settle(CLEANUP_TIMEOUT)
            except Exception as earlier:  # the previous scenario's drop failed too: told beside it
                failure.add_note(str(earlier))
            self.cleanup(CLEANUP_TIMEOUT)

    # --- seeding -------------------------------------------------------------------------------

    def add_thoughts(self, thoughts: Sequence[Thought]) -> None:
        """Store `thoughts`: one call per thought, or one batch call; with edges.with_store that
        call is held until `add_edges` (or the next operation) sends it with the edges."""
        spec = self._mapping.store
        self._flush()
        reset = self._mapping.isolation.reset
        if reset is not None and not self._reset_done:
            self._call(reset.tool, reset.arguments, {"seeded_ids": [t.id for t in thoughts]})
        self._reset_done = True
        rows = [{name: getattr(t, name) for name in THOUGHT_FIELDS} for t in thoughts]
        if spec.batch is not None:
            items = [self._item(spec.item or _NO_ITEM, row) for row in rows]
            if self._with_store is not None:
                self._held = items
            else:
                self._call(spec.tool, spec.arguments, {}, extra={spec.batch: items})
            self._server_ids += [t.id for t in thoughts]
        else:
            for thought, row in zip(thoughts, rows, strict=True):
                result = self._call(spec.tool, spec.arguments, row)
                server_id: Any = thought.id
                if spec.result_id is not None:
                    label = self._system.label
                    server_id = _at(label, spec.tool, _json(label, spec.tool, result, "auto"), spec.result_id)
                    self._to_evalkit[str(server_id)] = thought.id
                self._server_ids.append(server_id)
        self._stored += [t.id for t in thoughts]
        self._system.seeded(self._scope["scenario"], [t.id for t in thoughts])

    def add_edges(self, edges: Sequence[Edge]) -> None:
        spec = self._mapping.edges
        if spec is None:
            return
        rows = [asdict(e) for e in edges]
        if self._with_store is not None:
            if self._held is not None or rows:  # edges alone: a store call with no thoughts
                self._store_held([self._item(spec.item or _NO_ITEM, row) for row in rows])
            return
        if not edges:
            return
        assert spec.tool is not None  # a write of its own (EdgesSpec)
        if spec.batch is not None:
            items = [self._item(spec.item or _NO_ITEM, row) for row in rows]
            self._call(spec.tool, spec.arguments, {}, extra={spec.batch: items})
        else:
            for row in rows:
                self._call(spec.tool, spec.arguments, row)

    @property
    def _with_store(self) -> str | None:
        """The store call's argument for the edges (edges.with_store), or None."""
        return self._mapping.edges.with_store if self._mapping.edges is not None else None

    def _store_held(self, edge_items: list[Any]) -> None:
        """The store call held by `add_thoughts` (no thoughts when none is), with `edge_items`."""
        spec = self._mapping.store
        assert spec.batch is not None and self._with_store is not None  # checked at load
        held, self._held = self._held or [], None
        self._call(spec.tool, spec.arguments, {}, extra={spec.batch: held, self._with_store: edge_items})

    def _flush(self) -> None:
        """Send the store call still held (edges.with_store), with no edges."""
        if self._held is not None:
            self._store_held([])

    # --- operations (a scenario's steps) ---------------------------------------------------------

    def _server_id(self, thought_id: str) -> Any:
        """The server's id of evalkit's `thought_id` (the same unless the server assigns ids)."""
        return next((s for s, e in self._to_evalkit.items() if e == thought_id), thought_id)

    def delete_thoughts(self, ids: Sequence[str]) -> None:
        """The mapping's [delete] tool: one call with `{ids}`, else one call per `{id}`."""
        spec = self._mapping.delete
        if spec is None:
            raise AdapterError(
                f"{self._system.label}: the mapping has no [delete] section (capability 'deletion')"
            )
        self._flush()
        server_ids = [self._server_id(i) for i in ids]
        if "ids" in placeholders(spec.arguments):
            self._call(spec.tool, spec.arguments, {"ids": server_ids})
        else:
            for server_id in server_ids:
                self._call(spec.tool, spec.arguments, {"id": server_id})

    def update_thought(self, id: str, *, content: str | None = None, status: str | None = None) -> None:
        """The mapping's [update] tool with `{id}`, `{content}` and `{status}`."""
        spec = self._mapping.update
        if spec is None:
            raise AdapterError(
                f"{self._system.label}: the mapping has no [update] section (capability 'update')"
            )
        self._flush()
        self._call(
            spec.tool, spec.arguments, {"id": self._server_id(id), "content": content, "status": status}
        )

    # --- searching ------------------------------------------------------------------------------

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        """The mapping's [search] tool, its placeholders filled from `query` and `options`."""
        spec = self._mapping.search
        self._flush()
        result = self._call(spec.tool, spec.arguments, {"query": query, **vars(options)})
        return self._response(result, options.top_k)

    def search_many(self, requests: Sequence[SearchRequest]) -> list[SearchResponse]:
        """The responses to `requests`, in order: one call of the batch search tool when the
        mapping names one, else one search call each."""
        batch = self._mapping.search.batch
        if batch is None:
            return [self.search(r.query, r.options) for r in requests]
        self._flush()
        label, spec = self._system.label, self._mapping.search
        items = [self._item(spec.arguments, {"query": r.query, **vars(r.options)}) for r in requests]
        answer = self._call(batch.tool, batch.arguments, {}, extra={batch.list: items})
        result = _json(label, batch.tool, answer, spec.result)
        listed = _at(label, batch.tool, result, batch.results) if batch.results else result
        if not isinstance(listed, list) or len(listed) != len(requests):
            raise AdapterError(
                f"{label}: tool {batch.tool!r}: search.batch.results {batch.results!r} must be a list of "
                f"{len(requests)} results (one per search, in order), got {str(listed)[:200]}"
            )
        return [
            self._response(
                (one, []) if spec.pattern is None else (None, [str(one)]), r.options.top_k, batch.tool
            )
            for one, r in zip(listed, requests, strict=True)
        ]

    def _response(
        self, result: tuple[Any, list[str]], top_k: int | None, tool: str | None = None
    ) -> SearchResponse:
        spec = self._mapping.search
        label, tool = self._system.label, tool or spec.tool
        structured, texts = result
        text = "\n".join(texts) if texts else str((structured or {}).get("result", ""))
        if spec.error is not None and re.search(spec.error, text, re.MULTILINE):
            raise AdapterError(
                f"{label}: tool {tool!r} reported an error in its result (search.error {spec.error!r}): "
                f"{text[:500]}"
            )
        if spec.pattern is not None:
            listed: Any = [m.groupdict() for m in re.finditer(spec.pattern, text, re.MULTILINE)]
            result_json: Any = {}
        else:
            result_json = _json(label, tool, result, spec.result)
            listed = _at(label, tool, result_json, spec.hits) if spec.hits else result_json
        if not isinstance(listed, list):
            raise AdapterError(
                f"{label}: tool {tool!r}: search.hits {spec.hits!r} is {type(listed).__name__}, "
                "not a list of hits"
            )
        if top_k is not None and not self._system.sends_top_k:
            listed = listed[:top_k]  # the server takes no limit: its first top_k hits are the answer
        hits = []
        flat = all("." not in key for key in spec.hit.values())  # every hit field a key of the hit
        for position, raw in enumerate(listed, start=1):
            if flat and isinstance(raw, dict) and spec.hit["id"] in raw:  # what _at finds, directly
                fields = {name: raw[key] for name, key in spec.hit.items() if raw.get(key) is not None}
            else:
                fields = {
                    name: _at(label, tool, raw, key, optional=name != "id") for name, key in spec.hit.items()
                }
                fields = {k: v for k, v in fields.items() if v is not None}
            if "id" not in fields:
                raise AdapterError(
                    f"{label}: tool {tool!r}: hit {position} has a null id ({spec.hit['id']!r}); "
                    "every hit needs its thought's id"
                )
            fields["id"] = self._evalkit_id(fields["id"])
            try:
                hits.append(hit_from_values(fields))
            except TypeError as exc:
                raise AdapterError(f"{label}: tool {tool!r}: hit {position}: {exc}") from exc
        self._check_isolation([h.id for h in hits])
        gate = {
            name: _at(label, tool, result_json, key, optional=True) for name, key in spec.response.items()
        }
        if gate.get("dropped_ids") is not None:
            gate["dropped_ids"] = tuple(self._evalkit_id(i) for i in gate["dropped_ids"])
        if gate.get("gate_candidates") is not None:
            gate["gate_candidates"] = self._candidates(tool, gate["gate_candidates"])
        return SearchResponse(hits=tuple(hits), **{k: v for k, v in gate.items() if v is not None})

    def _check_isolation(self, ids: Sequence[str]) -> None:
        """AdapterError when a hit is another scenario's thought or a thought appears twice."""
        here = self._scope["scenario"]
        own = set(self._stored)
        setting = self._mapping.isolation.described()
        fix = (
            "the server shares one memory between scenarios: check that it honours the isolation "
            "setting, or declare another isolation strategy (e.g. 'process', one server per scenario)"
        )
        for thought_id in ids:
            if thought_id in own:
                continue
            others = [s for s in self._system.seeders(thought_id) if s != here]
            if others:
                raise AdapterError(
                    f"{self._system.label} is not isolated: thought {thought_id!r}, seeded in scenario "
                    f"{others[0]!r}, was returned in scenario {here!r} (isolation: {setting}); {fix}"
                )
        twice = [i for i, n in Counter(ids).items() if n > 1]
        if twice:
            others = [s for s in self._system.seeders(twice[0]) if s != here]
            source = f"seeded also in scenario {others[0]!r}" if others else "seeded once"
            raise AdapterError(
                f"{self._system.label} is not isolated: thought {twice[0]!r} was returned "
                f"{Counter(ids)[twice[0]]} times in scenario {here!r} ({source}; isolation: {setting}); {fix}"
            )

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
