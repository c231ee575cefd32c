"""`evalkit mcp inspect`: a server's tools with their input schemas, and a draft mapping.

`inspect_server(server)` starts the server (or connects to its URL), lists its tools and stops it.
`draft_mapping(tools, server)` guesses a format 2 mapping from the tools' names and schemas:
the store, edges, search and cleanup tools by name (store/save/remember/create/add…,
edges/link/relate…, search/recall/query/find…, drop/delete/forget/clear…), their arguments by
name (evalkit's own field names first, then query/q/text, limit/k/max_results, content/text/
observations, id/key/name, ids/names for `{seeded_ids}`, a namespace-like argument shared by the
store and search tools as the isolation argument), a list-of-objects argument as a batch with an
item template, and the hit list and hit fields from the search tool's outputSchema. Whatever it
cannot tell is written `"TODO"`, and the draft says so in a comment: it is a starting point to
review, never a finished mapping (capabilities are always left empty)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalkit.systems.mcp.mapping import EDGE_FIELDS, HIT_FIELDS, SEARCH_OPTIONS, THOUGHT_FIELDS, ServerSpec
from evalkit.systems.mcp.schema import resolved_ref
from evalkit.systems.mcp.session import Session

TODO = "TODO"

_STORE = ("store", "save", "remember", "create", "memorize", "write", "insert", "upsert", "add", "put")
_SEARCH = ("search", "recall", "query", "find", "retrieve", "lookup", "get_relevant")
_CLEANUP = ("drop", "delete", "forget", "clear", "reset", "remove", "purge")
_NAMESPACE = ("namespace", "ns", "collection", "user_id", "session_id", "tenant", "scope", "bank")
_CONTENT = (
    "content", "contents", "text", "memory", "observation", "observations", "body", "title", "data", "value",
    "note", "fact",
)  # fmt: skip
_ID = ("id", "key", "name", "memory_id", "uid")
_LIMIT = ("top_k", "limit", "k", "n", "max_results", "count", "size", "num_results")
_LINK = ("edges", "link", "relate", "relation", "relations", "connect")
STORE_CHOICES: dict[Any, str] = {
    **{(name,): "{" + name + "}" for name in THOUGHT_FIELDS},
    _CONTENT: "{content}", _ID: "{id}", ("timestamp",): "{created_at}",
}  # fmt: skip
EDGE_CHOICES: dict[Any, str] = {
    **{(name,): "{" + name + "}" for name in EDGE_FIELDS},
    ("from", "from_id", "source_id"): "{source}", ("to", "to_id", "target_id"): "{target}",
    ("kind", "rel", "relation", "relationtype", "relation_type"): "{type}",
}  # fmt: skip
SEARCH_CHOICES: dict[Any, str] = {
    **{(name,): "{" + name + "}" for name in (*SEARCH_OPTIONS, "query_id")},
    ("q", "text", "question", "search", "prompt"): "{query}", _LIMIT: "{top_k}",
}  # fmt: skip


@dataclass(frozen=True)
class ToolInfo:
    name: str
    description: str
    schema: dict[str, Any]
    output: dict[str, Any]


def inspect_server(server: ServerSpec, label: str = "MCP server") -> list[ToolInfo]:
    """The tools `server` lists (AdapterError when it cannot be started or reached)."""
    session = Session(label, server)
    try:
        return [
            ToolInfo(name, session.descriptions[name], schema, session.output_schemas[name])
            for name, schema in session.schemas.items()
        ]
    finally:
        session.close()


def shown_tools(tools: list[ToolInfo]) -> str:
    """Each tool's name, description and inputSchema (indented JSON)."""
    blocks = []
    for tool in tools:
        schema = json.dumps(tool.schema, indent=2, sort_keys=False)
        blocks.append(f"tool {tool.name}: {tool.description or '(no description)'}\n{_indent(schema)}")
    return "\n\n".join(blocks) if blocks else "(the server lists no tools)"


def draft_mapping(tools: list[ToolInfo], server: ServerSpec, name: str = "my-memory") -> str:
    """A format 2 mapping for `tools` as TOML text (see the module docstring)."""
    store = _pick(tools, _STORE)
    search = _pick(tools, _SEARCH, exclude=store)
    cleanup = _pick(tools, _CLEANUP, exclude=None)
    link = _pick(tools, _LINK, exclude=store)
    namespace = _namespace_argument([t for t in (store, search) if t is not None])
    lines = [
        "# A draft written by `evalkit mcp inspect`: review every TODO, then declare what the server can",
        "# do in capabilities (every key: docs/reference/mcp-mapping.md).",
        "version = 2",
        f"name = {json.dumps(name)}",
        "capabilities = []",
        "",
        "[server]",
    ]
    if server.url is not None:
        lines.append(f"url = {json.dumps(server.url)}")
    else:
        lines.append(f"command = {json.dumps(server.command)}")
        lines.append(f"args = {json.dumps(server.args)}")
    lines += ["", "[isolation]"]
    if namespace:
        lines += ['strategy = "namespace"', f"argument = {json.dumps(namespace)}"]
    elif server.command is not None:
        lines.append(
            'strategy = "process"  # one server per scenario: point its data file at {workdir} in env'
        )
    else:
        lines.append(f'strategy = "{TODO}"  # namespace, tools (reset/drop) or process')
    if cleanup is not None:
        lines.append(
            f"drop = {_inline({'tool': cleanup.name, 'arguments': _cleanup_arguments(cleanup, namespace)})}"
        )
    lines += ["", "[store]", f"tool = {json.dumps(store.name if store else TODO)}"]
    if store is not None:
        lines += _store_lines(store, namespace)
    if link is not None:
        lines += [
            "",
            "[edges]",
            f"tool = {json.dumps(link.name)}",
            *_write_lines(link, namespace, EDGE_CHOICES),
        ]
    lines += ["", "[search]", f"tool = {json.dumps(search.name if search else TODO)}"]
    arguments = _search_arguments(search, namespace) if search else {"query": "{query}"}
    hits, hit = _hits(search)
    lines += [
        f"arguments = {_inline(arguments)}",
        f'hits = {json.dumps(hits)}  # the path of the hit list in the result ("" = the result itself)',
        f"hit = {_inline(hit)}  # hit field = key in each hit (relevance, content, … when it has them)",
    ]
    return "\n".join(lines) + "\n"


def _hits(search: ToolInfo | None) -> tuple[str, dict[str, str]]:
    """The hit list's path and the hit fields, from the search tool's outputSchema: its first
    list-of-objects property, and the item properties named like `evalkit.Hit` fields."""
    if search is None:
        return TODO, {"id": "id"}
    for name, schema in (search.output.get("properties") or {}).items():
        items = resolved_ref(search.output, schema.get("items")) if isinstance(schema, dict) else None
        if isinstance(items, dict) and isinstance(items.get("properties"), dict):
            fields = {f: f for f in items["properties"] if f in HIT_FIELDS}
            return name, {"id": "id" if "id" in fields else TODO, **fields}
    return TODO, {"id": "id"}


def _pick(tools: list[ToolInfo], words: tuple[str, ...], exclude: ToolInfo | None = None) -> ToolInfo | None:
    for word in words:  # the first word that names a tool wins: the order is the preference
        for tool in tools:
            if tool is not exclude and word in _words(tool.name):
                return tool
    return None


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])", name) if w]


def _properties(tool: ToolInfo) -> dict[str, Any]:
    properties = tool.schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _namespace_argument(tools: list[ToolInfo]) -> str | None:
    shared = None
    for tool in tools:
        names = {n for n in _properties(tool) if n.lower() in _NAMESPACE}
        shared = names if shared is None else shared & names
    return sorted(shared)[0] if shared else None


def _guess(name: str, choices: Mapping[Any, str]) -> str | None:
    for words, value in choices.items():
        if name.lower() in words:
            return value
    return None


def _template(properties: Mapping[str, Any], required: set[str], choices: Mapping[Any, str],
              namespace: str | None) -> dict[str, Any]:  # fmt: skip
    out: dict[str, Any] = {}
    for name, schema in properties.items():
        if name == namespace:
            continue
        value = _guess(name, choices)
        if value not in (None, "{seeded_ids}") and isinstance(schema, dict) and schema.get("type") == "array":
            out[name] = [value]
        elif value is not None:
            out[name] = value
        elif name in required:
            out[name] = TODO
    return out


def _store_lines(store: ToolInfo, namespace: str | None) -> list[str]:
    return _write_lines(store, namespace, STORE_CHOICES)


def _write_lines(store: ToolInfo, namespace: str | None, choices: Mapping[Any, str]) -> list[str]:
    properties = _properties(store)
    required = set(store.schema.get("required") or ())
    for name, schema in properties.items():
        items = resolved_ref(store.schema, schema.get("items")) if isinstance(schema, dict) else None
        if isinstance(items, dict) and isinstance(items.get("properties"), dict):
            item = _template(items["properties"], set(items.get("required") or ()), choices, None)
            rest = _template({k: v for k, v in properties.items() if k != name}, required, choices, namespace)
            lines = [f"batch = {json.dumps(name)}", f"item = {_inline(item)}"]
            return [*lines, f"arguments = {_inline(rest)}"] if rest else lines
    return [f"arguments = {_inline(_template(properties, required, choices, namespace))}"]


def _search_arguments(search: ToolInfo, namespace: str | None) -> dict[str, Any]:
    return _template(_properties(search), set(search.schema.get("required") or ()), SEARCH_CHOICES, namespace)


def _cleanup_arguments(tool: ToolInfo, namespace: str | None) -> dict[str, Any]:
    choices = {("ids", "names", "entitynames", "keys", "memory_ids"): "{seeded_ids}"}
    return _template(_properties(tool), set(tool.schema.get("required") or ()), choices, namespace)


def _inline(value: Any) -> str:
    """`value` as a TOML inline value."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_inline(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return json.dumps(value)


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
