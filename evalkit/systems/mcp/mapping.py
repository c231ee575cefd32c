"""The MCP mapping file: how to reach a server and how evalkit's calls map onto its tools.

Two formats, both TOML. Format 1 (no `version` key; the module docstring of
`evalkit.systems.mcp.adapter` has it) is read as it always was and upgraded to format 2 on load,
so every file keeps working. Format 2 (`version = 2`) is what the docs document in full (docs/system/mcp.md):

    version = 2
    name = "my-memory"                      # the system's name in the report
    capabilities = []                       # what the server supports; required
    null = "omit"                           # a None placeholder leaves its argument out ("send": null)

    [requires]                              # optional: checked before the server starts
    npm = ["@scope/server"]                 # npm packages found in a node_modules folder
    python = ["my_server"]                  # Python modules importable by evalkit's interpreter
    venv = ["my-server"]                    # the server's own Python environment (`{venv:NAME}`)
    install = "npm install @scope/server"   # the fix the error names

    [server]                                # stdio (command) or streamable HTTP (url)
    command = "node"                        # "{python}" = evalkit's interpreter
    args = ["{npm:@scope/server}"]          # {npm:PKG} = the package's bin script,
                                            # {venv:NAME} = the folder of the server's venv NAME
    env = {DATA = "{workdir}/memory.db"}    # {workdir}/{scenario}: only with strategy "process"
    inherit_env = ["PYTHONPATH"]            # variables copied from evalkit's environment
    cwd = "{workdir}"
    stderr = "inherit"                      # "capture": to a temporary file, quoted in errors

    [isolation]                             # how each scenario gets a fresh memory; required
    strategy = "namespace"                  # "namespace", "tools", "process" or "none"
    argument = "namespace"                  # namespace: sent to every tool as "evalkit-<hex>"
    reset = {tool = "delete", arguments = {names = "{seeded_ids}"}}   # before the first store
    drop = {tool = "delete", arguments = {names = "{seeded_ids}"}}    # after the scenario

    [store]
    tool = "create"
    batch = "items"                         # optional: one call, this argument a list of items
    item = {name = "{id}", text = ["{content}"]}   # per thought (with batch)
    arguments = {kind = "note"}             # the call's other arguments (or, without batch, the
                                            # per-thought template)
    # result_id = "memory.id"               # the server's own id in each store result

    [edges]                                 # optional, like [store] (fields source, target, type),
    # with_store = "edges"                  # or no call of its own: the edges go in this list
                                            # argument of the store call (needs store.batch;
                                            # item = the template of one edge)

    [delete]                                # optional; needed for capability "deletion"
    tool = "forget"
    arguments = {id = "{id}"}               # one call per id ({ids}: one call with the list)

    [update]                                # optional; needed for capability "update"
    tool = "update"
    arguments = {id = "{id}", content = "{content}", status = "{status}"}

    [search]
    tool = "search"
    arguments = {query = "{query}", limit = "{top_k}"}
    hits = "results"                        # path of the hit list ("" = the result)
    hit = {id = "id", relevance = "score"}  # hit field → key (or regex group) in each hit
    # pattern = '^id=(?P<id>\\d+)'          # hits are this regex's matches in the text result
    # error = '^Search failed'              # a text result matching it is the tool's error
    # response = {min_relevance = "gate"}   # the gate's report, as in format 1
    # result = "auto"                       # "structured", "text" or "auto"
    # [search.batch]                        # a tool answering many searches in one call
    # tool = "search_many"; list = "searches"; results = "results"

Placeholders (`evalkit.systems.mcp.templates`): thought fields in [store], edge fields in
[edges], search options and `query_id` in [search], `{seeded_ids}` (the scenario's stored ids)
in reset and drop, `{namespace}`, `{scenario}` and `{workdir}` everywhere, `{python}`,
`{npm:PKG}`, `{venv:NAME}`, `{workdir}` and `{scenario}` in [server] (or `{tmpdir}`, a new folder
for the run-wide server of each process, removed when it stops). Without `{top_k}` in the search
arguments the adapter keeps the first top_k hits (the server has no limit).

A preset is a mapping shipped in `evalkit/systems/mcp/presets/`, named by its file's stem
(`--system mcp:server-memory`), or `mcp:reference` (the built-in suite's
`datasets/mcp/reference.toml`, shipped in the wheel too).
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import os
import re
import sys
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal, TypeVar

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from evalkit.errors import AdapterError, one_or_listed
from evalkit.packaged import BUILTIN_DATASETS
from evalkit.records import HIT_FIELDS as DECLARED_HIT_FIELDS
from evalkit.records import SENT_THOUGHT_FIELDS
from evalkit.systems.capabilities import Capability
from evalkit.systems.mcp.templates import PLACEHOLDER, SCOPE_FIELDS, placeholders, unknown_placeholders
from evalkit.validation import FrozenModel, ProblemList, field_problems

PRESETS = Path(__file__).with_name("presets")
"""The folder of the shipped presets (`mcp:NAME` = `PRESETS/NAME.toml`)."""

NODE_MODULES_ENV = "EVALKIT_NODE_MODULES"
"""A `node_modules` folder searched first for a mapping's npm packages."""

MCP_VENVS_ENV = "EVALKIT_MCP_VENVS"
"""A folder of server environments (`NAME/bin/python`) searched first for `{venv:NAME}`."""

MCP_VENVS = ".venv-mcp"
"""The folder of server environments that `make setup` fills (`.venv-mcp/NAME`), looked for in
the current folder, its parents and the checkout evalkit runs from."""

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
STORE_PLACEHOLDERS = (*THOUGHT_FIELDS, *SCOPE_FIELDS)
EDGE_PLACEHOLDERS = (*EDGE_FIELDS, *SCOPE_FIELDS)
SEARCH_PLACEHOLDERS = (*SEARCH_OPTIONS, "query_id", *SCOPE_FIELDS)
CLEANUP_PLACEHOLDERS = ("seeded_ids", *SCOPE_FIELDS)
DELETE_PLACEHOLDERS = ("id", "ids", *SCOPE_FIELDS)
UPDATE_PLACEHOLDERS = ("id", "content", "status", *SCOPE_FIELDS)
SERVER_PLACEHOLDERS = ("python", "workdir", "scenario", "tmpdir")
"""Plus `{npm:PKG}` and `{venv:NAME}`. `{workdir}` and `{scenario}` make sense only with one
process per scenario; `{tmpdir}` (a new folder for the run-wide server of each process: the run's,
or a worker's; removed when it stops) only without."""


class ServerSpec(FrozenModel):
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    inherit_env: list[str] = Field(default_factory=list)
    cwd: str | None = None
    url: str | None = None
    stderr: Literal["inherit", "capture"] = "inherit"

    @model_validator(mode="after")
    def _one_transport(self) -> ServerSpec:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command (stdio) or url (streamable HTTP)")
        return self

    def templates(self) -> list[Any]:
        return [self.command, self.args, self.env, self.cwd, self.url]


class ToolCall(FrozenModel):
    """A tool and its argument template (a reset or drop call)."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class IsolationSpec(FrozenModel):
    strategy: Literal["namespace", "tools", "process", "none"]
    argument: str | None = None
    reset: ToolCall | None = None
    drop: ToolCall | None = None

    def described(self) -> str:
        """The setting in words, for the not-isolated error."""
        tools = [c.tool for c in (self.reset, self.drop) if c is not None]
        cleanup = f" with reset/drop tool {', '.join(map(repr, dict.fromkeys(tools)))}" if tools else ""
        return {
            "namespace": f"namespace argument {self.argument!r}{cleanup}",
            "tools": f"reset/drop tool {', '.join(map(repr, dict.fromkeys(tools)))}",
            "process": f"one server process per scenario{cleanup}",
            "none": f"none declared{cleanup}",
        }[self.strategy]


class WriteSpec(FrozenModel):
    tool: str
    batch: str | None = None
    item: dict[str, Any] | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    result_id: str | None = None

    def per_item(self) -> dict[str, Any]:
        """The template of one thought or edge (the item with batch, else the arguments)."""
        return (self.item or {}) if self.batch is not None else self.arguments


class EdgesSpec(WriteSpec):
    """[edges]: a write of its own (`tool`, like [store]), or, with `with_store`, no call of its
    own: the edges go with the store call, in its list argument `with_store`, each rendered with
    `item` (one call fewer per scenario; needs store.batch, and `tool`, `batch`, `arguments` and
    `result_id` are then not given). The store call then always sends that list, empty when the
    scenario has no edges, and a step adding edges only sends the store call with no thoughts."""

    tool: str | None = None  # type: ignore[assignment]
    with_store: str | None = None

    @model_validator(mode="after")
    def _one_way(self) -> EdgesSpec:
        if self.with_store is None:
            if self.tool is None:
                raise ValueError("give edges.tool (the tool that links) or edges.with_store")
            return self
        given = [k for k in ("tool", "batch", "result_id") if getattr(self, k) is not None]
        given += ["arguments"] if self.arguments else []
        if given:
            raise ValueError(
                f"edges.with_store sends the edges with the store call: edges.{', edges.'.join(given)} "
                "cannot be given with it"
            )
        if self.item is None:
            raise ValueError("edges.with_store needs edges.item (the template of one edge)")
        return self

    def per_item(self) -> dict[str, Any]:
        return (self.item or {}) if self.with_store is not None else super().per_item()


class BatchSearchSpec(FrozenModel):
    """A tool that answers several searches in one call: `list` is the argument holding the
    searches (each rendered with [search] arguments), `results` the path of the list of their
    results, in order; each result is read like one [search] result."""

    tool: str
    list: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    results: str = ""


class SearchSpec(FrozenModel):
    tool: str
    arguments: dict[str, Any]
    hits: str = ""
    hit: dict[str, str] = Field(default_factory=lambda: {"id": "id"})
    response: dict[str, str] = Field(default_factory=dict)
    result: Literal["auto", "structured", "text"] = "auto"
    pattern: str | None = None
    error: str | None = None
    batch: BatchSearchSpec | None = None


class OperationSpec(FrozenModel):
    """The tool of one operation of a scenario's steps ([delete] or [update]) and its argument
    template. [delete]: `{ids}` (the list) makes one call for all the ids, else `{id}` one call per
    id; [update]: `{id}`, `{content}`, `{status}` (None where unchanged: left out under
    `null = "omit"`)."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Requires(FrozenModel):
    npm: list[str] = Field(default_factory=list)
    python: list[str] = Field(default_factory=list)
    venv: list[str] = Field(default_factory=list)
    install: str = ""


class McpMapping(FrozenModel):
    """A mapping in format 2 (see the module docstring); format 1 files are upgraded to it."""

    version: Literal[2] = 2
    name: str
    capabilities: list[Capability]
    embedder: str | None = Field(
        default=None,
        description=(
            "the embedding model the server embeds with, by name, or what it searches with instead "
            "(recorded in the report as the system's declared embedder; absent: undeclared). The "
            "server embeds by itself either way: a run of it has mode `system`"
        ),
    )
    null: Literal["omit", "send"] = "omit"
    requires: Requires = Requires()
    server: ServerSpec
    isolation: IsolationSpec
    store: WriteSpec
    edges: EdgesSpec | None = None
    search: SearchSpec
    delete: OperationSpec | None = None
    update: OperationSpec | None = None

    @model_validator(mode="after")
    def _known_names(self) -> McpMapping:
        problems = mapping_problems(self)
        if problems:
            raise ProblemList(problems)
        return self

    def tools(self) -> list[str]:
        """Every tool the mapping calls, each once, in the order store, search, reset, drop,
        edges, batch search, delete, update."""
        named = [
            self.store.tool, self.search.tool,
            self.isolation.reset.tool if self.isolation.reset else None,
            self.isolation.drop.tool if self.isolation.drop else None,
            self.edges.tool if self.edges else None,
            self.search.batch.tool if self.search.batch else None,
            self.delete.tool if self.delete else None,
            self.update.tool if self.update else None,
        ]  # fmt: skip
        return list(dict.fromkeys(t for t in named if t is not None))


def mapping_problems(m: Any) -> list[str]:
    """The problems of a mapping beyond each section's own shape: unknown placeholders and
    evalkit names (with "did you mean"), what a section needs of another, bad regular
    expressions. `m` is a `McpMapping`, or (`_sections`) the sections of a mapping file that
    are valid on their own, None for the others: a check runs when the sections it reads are
    there, so a file with a missing key and a misspelt name reports both at once."""
    problems = []
    store, search, edges, isolation, server = m.store, m.search, m.edges, m.isolation, m.server
    places: list[tuple[str, Any, tuple[str, ...]]] = []
    if store is not None:
        places += [
            ("store", store.per_item(), STORE_PLACEHOLDERS),
            ("store.arguments", store.arguments, SCOPE_FIELDS if store.batch else ()),
        ]
    if search is not None:
        places.append(("search.arguments", search.arguments, SEARCH_PLACEHOLDERS))
    if edges is not None:
        places += [
            ("edges", edges.per_item(), EDGE_PLACEHOLDERS),
            ("edges.arguments", edges.arguments, SCOPE_FIELDS if edges.batch else ()),
        ]
    if search is not None and search.batch is not None:
        places.append(("search.batch.arguments", search.batch.arguments, SCOPE_FIELDS))
    for name, known_names in (("delete", DELETE_PLACEHOLDERS), ("update", UPDATE_PLACEHOLDERS)):
        operation = getattr(m, name)
        if operation is not None:
            places.append((f"{name}.arguments", operation.arguments, known_names))
    for name in ("reset", "drop"):
        call = getattr(isolation, name) if isolation is not None else None
        if call is not None:
            places.append((f"isolation.{name}.arguments", call.arguments, CLEANUP_PLACEHOLDERS))
    for where, template, known in places:
        if where.endswith(".arguments") and where.startswith(("store", "edges")) and not known:
            continue  # the per-item template, checked above
        if unknown := unknown_placeholders(template, known):
            named = ", ".join("{" + u + "}" + _closest(u, known, "{{{}}}") for u in unknown)
            problems.append(
                f"{where}: unknown placeholder(s) {named}; known: {', '.join('{' + k + '}' for k in known)}"
            )
    if server is not None and isolation is not None:
        problems += _server_problems(server, isolation)
    if search is not None:
        for where, names, known in [
            ("search.hit", search.hit, HIT_FIELDS),
            ("search.response", search.response, RESPONSE_FIELDS),
        ]:
            if unknown := sorted(set(names) - set(known)):
                named = ", ".join(u + _closest(u, known) for u in unknown)
                problems.append(f"{where}: unknown evalkit name(s) {named}; known: {', '.join(known)}")
        if "id" not in search.hit:
            problems.append("search.hit must map id (where each hit's id is)")
        if "query" not in placeholders(search.arguments):
            problems.append("search.arguments must send {query}")
    if store is not None:
        if "id" not in placeholders(store.per_item()) and store.result_id is None:
            problems.append(
                "store needs {id} in its arguments (the server takes evalkit's ids) or result_id (it "
                "assigns its own)"
            )
        if store.batch is not None and store.item is None:
            problems.append("store.batch needs store.item (the template of one thought)")
    if edges is not None and edges.with_store is not None and store is not None:
        if store.batch is None:
            problems.append("edges.with_store needs store.batch (one store call for all the thoughts)")
        elif edges.with_store in {store.batch, *store.arguments}:
            problems.append(f"edges.with_store {edges.with_store!r} is already an argument of the store call")
    if isolation is not None:
        problems += _isolation_problems(isolation, server)
    if m.capabilities is not None:
        problems += _operation_problems(m)
    if search is not None:
        problems += _search_pattern_problems(search)
    return problems


def _closest(word: str, known: Sequence[str], shown: str = "{}") -> str:
    """' (did you mean X?)' for the known name closest to `word` (X as `shown` formats it)."""
    hint = difflib.get_close_matches(word, known, n=1)
    return f" (did you mean {shown.format(hint[0])}?)" if hint else ""


def _search_pattern_problems(search: SearchSpec) -> list[str]:
    problems = []
    if search.error is not None:
        try:
            re.compile(search.error)
        except re.error as exc:
            problems.append(f"search.error is not a regular expression ({exc})")
    if search.pattern is not None:
        try:
            groups = set(re.compile(search.pattern).groupindex)
        except re.error as exc:
            problems.append(f"search.pattern is not a regular expression ({exc})")
        else:
            if missing := sorted(set(search.hit.values()) - groups):
                problems.append(
                    f"search.pattern has no group(s) {', '.join(missing)} that search.hit names; "
                    "name them with (?P<name>...)"
                )
    return problems


def _server_problems(server: ServerSpec, isolation: IsolationSpec) -> list[str]:
    problems = []
    for template in server.templates():
        for name in sorted(_names(template)):
            if name.startswith(("npm:", "venv:")):
                continue
            if name not in SERVER_PLACEHOLDERS:
                problems.append(
                    f"server: unknown placeholder {{{name}}}{_closest(name, SERVER_PLACEHOLDERS, '{{{}}}')}; "
                    "known: {python}, {npm:PACKAGE}, {venv:NAME}, {workdir}, {scenario}, {tmpdir}"
                )
            elif name in ("workdir", "scenario") and isolation.strategy != "process":
                problems.append(
                    f"server: {{{name}}} needs isolation.strategy = 'process' (one server per "
                    "scenario); with one server for the run there is no scenario to fill it"
                )
            elif name == "tmpdir" and isolation.strategy == "process":
                problems.append(
                    "server: {tmpdir} is the folder of a run-wide server; with isolation.strategy "
                    "'process' (one server per scenario) use {workdir}, the scenario's folder"
                )
    return problems


def _operation_problems(m: Any) -> list[str]:
    """A declared operation capability needs its section (the adapter has nothing to call),
    and a section names its thought: [delete] `{id}` or `{ids}`, [update] `{id}`."""
    problems = []
    for capability, name in (("deletion", "delete"), ("update", "update")):
        operation = getattr(m, name)
        if capability in m.capabilities and operation is None and name not in getattr(m, "invalid", ()):
            problems.append(f"capability {capability!r} needs a [{name}] section (the tool that does it)")
        if operation is not None and not placeholders(operation.arguments) & {"id", "ids"}:
            problems.append(f"{name}.arguments must send {{id}}" + (" or {ids}" if name == "delete" else ""))
    return problems


def _isolation_problems(spec: IsolationSpec, server: ServerSpec | None) -> list[str]:
    if spec.strategy == "namespace" and not spec.argument:
        return ["isolation.strategy 'namespace' needs isolation.argument (the argument's name)"]
    if spec.strategy != "namespace" and spec.argument:
        return [f"isolation.argument is used only with strategy 'namespace', not {spec.strategy!r}"]
    if spec.strategy == "tools" and spec.reset is None and spec.drop is None:
        return ["isolation.strategy 'tools' needs isolation.reset or isolation.drop"]
    if spec.strategy == "process" and server is not None and server.command is None:
        return ["isolation.strategy 'process' needs server.command (a stdio server evalkit starts)"]
    return []


def _sections(data: dict[str, Any]) -> SimpleNamespace:
    """The sections of the format-2 mapping `data` for `mapping_problems`: each key of
    `McpMapping` validated on its own (its default when absent), None when it is invalid or a
    required one is missing; `invalid` names the keys given but invalid."""
    parts: dict[str, Any] = {"invalid": set()}
    for name, spec in McpMapping.model_fields.items():
        if name not in data:
            parts[name] = None if spec.is_required() else spec.get_default(call_default_factory=True)
            continue
        try:
            annotation: Any = spec.annotation
            parts[name] = TypeAdapter(annotation).validate_python(data[name])
        except ValidationError:
            parts[name] = None
            parts["invalid"].add(name)
    return SimpleNamespace(**parts)


def _names(template: Any) -> set[str]:
    """Placeholder names in a [server] value (which also takes `{npm:PKG}`)."""
    return set() if template is None else placeholders(template)


_Write = TypeVar("_Write", bound=WriteSpec)


# --- format 1 -------------------------------------------------------------------------------------


class _NamespaceV1(FrozenModel):
    argument: str | None = None
    reset: str | None = None
    drop: str | None = None


class _WriteV1(FrozenModel):
    tool: str
    batch: str | None = None
    arguments: dict[str, str]
    result_id: str | None = None


class _SearchV1(FrozenModel):
    tool: str
    arguments: dict[str, str]
    hits: str = ""
    hit: dict[str, str] = Field(default_factory=lambda: {"id": "id"})
    response: dict[str, str] = Field(default_factory=dict)
    result: Literal["auto", "structured", "text"] = "auto"


class McpMappingV1(FrozenModel):
    """Format 1 (the `evalkit.systems.mcp.adapter` docstring): names on the left are evalkit's,
    values the server's argument names."""

    name: str
    capabilities: list[Capability]
    server: ServerSpec
    namespace: _NamespaceV1 = _NamespaceV1()
    store: _WriteV1
    edges: _WriteV1 | None = None
    search: _SearchV1

    @model_validator(mode="after")
    def _known_fields(self) -> McpMappingV1:
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
                named = ", ".join(u + _closest(u, known) for u in unknown)
                problems.append(f"{where}: unknown evalkit name(s) {named}; known: {', '.join(known)}")
        if "id" not in self.search.hit:
            problems.append("search.hit must map id (where each hit's id is)")
        if "query" not in self.search.arguments:
            problems.append("search.arguments must map query")
        if "id" not in self.store.arguments and self.store.result_id is None:
            problems.append(
                "store needs arguments.id (the server takes evalkit's ids) or result_id (it assigns its own)"
            )
        if problems:
            raise ProblemList(problems)
        return self

    def upgraded(self) -> McpMapping:
        """The same mapping in format 2: every mapped field becomes `{field}`, nulls are sent (as
        format 1 did), the namespace table becomes the isolation strategy."""
        ns = self.namespace
        reset = ToolCall(tool=ns.reset) if ns.reset else None
        drop = ToolCall(tool=ns.drop) if ns.drop else None
        strategy: Literal["namespace", "tools", "none"] = (
            "namespace" if ns.argument else "tools" if reset or drop else "none"
        )
        return McpMapping(
            name=self.name, capabilities=self.capabilities, null="send", server=self.server,
            isolation=IsolationSpec(strategy=strategy, argument=ns.argument, reset=reset, drop=drop),
            store=_write(self.store), edges=_write(self.edges, EdgesSpec) if self.edges else None,
            search=SearchSpec(
                tool=self.search.tool, arguments=_fields(self.search.arguments), hits=self.search.hits,
                hit=self.search.hit, response=self.search.response, result=self.search.result,
            ),
        )  # fmt: skip


def _fields(names: dict[str, str]) -> dict[str, str]:
    """Format 1's {evalkit name: argument} as a format 2 template {argument: "{name}"}."""
    return {argument: "{" + name + "}" for name, argument in names.items()}


def _write(spec: _WriteV1, kind: type[_Write] = WriteSpec) -> _Write:  # type: ignore[assignment]
    if spec.batch is None:
        return kind(tool=spec.tool, arguments=_fields(spec.arguments), result_id=spec.result_id)
    return kind(tool=spec.tool, batch=spec.batch, item=_fields(spec.arguments), result_id=spec.result_id)


# --- loading -----------------------------------------------------------------------------------------


def presets() -> dict[str, Path]:
    """The shipped presets by name (`mcp:NAME`): each file of `PRESETS`, and `reference` (the
    built-in suite's `datasets/mcp/reference.toml`, the reference store over `evalkit serve --mcp`)."""
    found = {p.stem: p for p in PRESETS.glob("*.toml")}
    reference = BUILTIN_DATASETS / "mcp" / "reference.toml"
    if reference.is_file():
        found["reference"] = reference
    return dict(sorted(found.items()))


def preset_names() -> list[str]:
    """The shipped presets' names (`mcp:NAME`)."""
    return list(presets())


def mapping_source(spec: str) -> Path:
    """The file `mcp:SPEC` names: a preset when SPEC is one's name (and no file of that name
    exists), else the path SPEC."""
    bare = "/" not in spec and not spec.endswith(".toml") and not Path(spec).exists()
    if bare and spec in presets():
        return presets()[spec]
    if bare:
        raise AdapterError(
            f"no MCP preset {spec!r} and no mapping file of that name; presets: "
            f"{', '.join(preset_names())} (or give a mapping file: mcp:PATH.toml)"
        )
    return Path(spec)


def load_mapping(path: str | Path) -> McpMapping:
    """The mapping in `path` (either format; format 1 upgraded); AdapterError naming the file and
    each bad field."""
    source = Path(path)
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise AdapterError(
            f"MCP mapping file {source} does not exist; see the MCP mapping example in the docs "
            "(docs/system/mcp.md)"
        ) from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AdapterError(
            f"MCP mapping file {source} cannot be read as TOML: {exc}; fix the file (the MCP mapping "
            "example in the docs, docs/system/mcp.md, shows the format)"
        ) from exc
    except RecursionError:  # a traceback (exit 1) before
        raise AdapterError(
            f"MCP mapping file {source}: its arrays or tables are nested too deeply to read; no mapping "
            "nests that deep, fix the file"
        ) from None
    version = data.get("version", 1)
    model: type[McpMapping] | type[McpMappingV1] = McpMapping if version == 2 else McpMappingV1
    if version not in (1, 2):
        raise AdapterError(f"MCP mapping file {source}: version {version!r} is not 1 or 2; give version = 2")
    try:
        loaded = model.model_validate({k: v for k, v in data.items() if k != "version" or version == 2})
    except ValidationError as exc:
        problems = field_problems(exc, model)
        if model is McpMapping and all(err["loc"] for err in exc.errors()):  # the sections' own problems:
            problems += [p for p in mapping_problems(_sections(data)) if p not in problems]  # and the rest
        raise AdapterError(
            one_or_listed(
                f"MCP mapping file {source}", problems, "fix the file (docs/system/mcp.md has every key)"
            )
        ) from exc
    return loaded.upgraded() if isinstance(loaded, McpMappingV1) else loaded


# --- what a mapping needs installed ----------------------------------------------------------------


def node_modules_folders() -> Iterator[Path]:
    """Where npm packages are looked for, in order: $EVALKIT_NODE_MODULES, `node_modules` in the
    current folder and each parent, in the checkout evalkit runs from (an editable install) and
    in the environment's prefix (`.venv/node_modules`)."""
    if os.environ.get(NODE_MODULES_ENV):
        yield Path(os.environ[NODE_MODULES_ENV])
    for folder in [Path.cwd(), *Path.cwd().parents]:
        yield folder / "node_modules"
    yield Path(__file__).resolve().parents[3] / "node_modules"
    yield Path(sys.prefix) / "node_modules"


def npm_script(package: str) -> Path | None:
    """The bin script of the installed npm `package` (its package.json's `bin`), or None."""
    for folder in node_modules_folders():
        manifest = folder / package / "package.json"
        if not manifest.is_file():
            continue
        try:
            declared = json.loads(manifest.read_text(encoding="utf-8")).get("bin")
        except (OSError, ValueError):
            continue
        script = next(iter(declared.values()), None) if isinstance(declared, dict) else declared
        if isinstance(script, str) and (folder / package / script).is_file():
            return (folder / package / script).resolve()
    return None


def venv_folders() -> Iterator[Path]:
    """Where a server's Python environment NAME is looked for (`FOLDER/NAME/bin/python`), in
    order: $EVALKIT_MCP_VENVS, `.venv-mcp` in the current folder and each parent, and in the
    checkout evalkit runs from (an editable install)."""
    if os.environ.get(MCP_VENVS_ENV):
        yield Path(os.environ[MCP_VENVS_ENV])
    for folder in [Path.cwd(), *Path.cwd().parents]:
        yield folder / MCP_VENVS
    yield Path(__file__).resolve().parents[3] / MCP_VENVS


def venv_folder(name: str) -> Path | None:
    """The folder of the server environment `name` (one whose `bin/python` exists), or None."""
    for folder in venv_folders():
        if (folder / name / "bin" / "python").exists():
            return (folder / name).absolute()
    return None


def _server_names(mapping: McpMapping, kind: str) -> set[str]:
    """The `{KIND:NAME}` names in the mapping's [server] values."""
    return {
        name.removeprefix(f"{kind}:")
        for template in mapping.server.templates()
        for name in _names(template)
        if name.startswith(f"{kind}:")
    }


def check_requirements(mapping: McpMapping, label: str) -> dict[str, str]:
    """The `{npm:PKG}` and `{venv:NAME}` values of the mapping's server; AdapterError naming what
    is missing and the fix (`requires.install`) when a required npm package, Python module or
    server environment is not installed."""
    hint = f"; install it with: {mapping.requires.install}" if mapping.requires.install else ""
    npm = set(mapping.requires.npm) | _server_names(mapping, "npm")
    found: dict[str, str] = {}
    for package in sorted(npm):
        script = npm_script(package)
        if script is None:
            searched = ", ".join(dict.fromkeys(str(f) for f in node_modules_folders()))
            raise AdapterError(
                f"{label} needs the npm package {package}, which is not installed (looked in {searched})"
                f"{hint or f'; install it with: npm install {package}'}"
            )
        found[f"npm:{package}"] = str(script)
    for module in mapping.requires.python:
        if importlib.util.find_spec(module) is None:
            raise AdapterError(
                f"{label} needs the Python module {module!r}, which {sys.executable} cannot import"
                f"{hint or f'; install it with: pip install {module}'}"
            )
    for name in sorted(set(mapping.requires.venv) | _server_names(mapping, "venv")):
        folder = venv_folder(name)
        if folder is None:
            searched = ", ".join(dict.fromkeys(str(f / name) for f in venv_folders()))
            create = f"; create it with: python3 -m venv {MCP_VENVS}/{name} and install the server in it"
            raise AdapterError(
                f"{label} needs the Python environment {name!r} of its server (NAME/bin/python), which "
                f"is not installed (looked in {searched})"
                f"{hint or create}"
            )
        found[f"venv:{name}"] = str(folder)
    return found


def server_values(
    found: dict[str, str], workdir: Path | None, scenario: str | None, tmpdir: Path | None = None
) -> dict[str, str]:
    """The values of [server]'s placeholders."""
    values = {"python": sys.executable, **found}
    if tmpdir is not None:
        values["tmpdir"] = str(tmpdir)
    if workdir is not None:
        values["workdir"] = str(workdir)
    if scenario is not None:
        values["scenario"] = scenario
    return values


__all__ = ["PLACEHOLDER", "McpMapping", "ServerSpec", "load_mapping", "mapping_source", "preset_names"]
