"""The start-up check of a mapping's arguments against the server's tool `inputSchema`s.

For every call the mapping makes (store, edges, search, batch search, reset, drop) the argument
names it sends — its template's keys, plus the namespace argument — are compared with the tool's
schema: an argument the schema's `properties` do not list (unless `additionalProperties` allows
it) and a `required` property the mapping never sends are errors naming the tool, the argument,
the mapping's place and the schema's properties. With a batch, each item's keys are checked the
same way against the list's `items` schema when it is an object schema (and so are the edges'
with `edges.with_store`: they are items of the store call's list argument of that name). A schema without
`properties` (any object) accepts every argument. All problems are reported at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evalkit.errors import AdapterError
from evalkit.systems.mcp.mapping import McpMapping


def mapped_calls(mapping: McpMapping) -> list[tuple[str, str, set[str], list[tuple[str, str, set[str]]]]]:
    """(place, tool, argument names, [(items' place, list argument, item keys), ...]) for each call."""
    namespace = {mapping.isolation.argument} if mapping.isolation.argument else set()
    calls: list[tuple[str, str, set[str], list[tuple[str, str, set[str]]]]] = []
    edges = mapping.edges
    with_store = edges.with_store if edges is not None else None
    for place, spec in (("store", mapping.store), ("edges", edges)):
        if spec is None or spec.tool is None:
            continue  # edges.with_store: the edges are items of the store call
        if spec.batch is None:
            calls.append((place, spec.tool, set(spec.arguments) | namespace, []))
            continue
        names = {spec.batch, *spec.arguments} | namespace
        lists = [(f"{place} items ({spec.batch}[])", spec.batch, set(spec.item or {}))]
        if place == "store" and edges is not None and with_store is not None:
            names.add(with_store)
            lists.append((f"edges.with_store items ({with_store}[])", with_store, set(edges.item or {})))
        calls.append((place, spec.tool, names, lists))
    search = mapping.search
    calls.append(("search", search.tool, set(search.arguments) | namespace, []))
    if search.batch is not None:
        names = {search.batch.list, *search.batch.arguments} | namespace
        items = (f"search.batch items ({search.batch.list}[])", search.batch.list, set(search.arguments))
        calls.append(("search.batch", search.batch.tool, names, [items]))
    for place in ("reset", "drop"):
        call = getattr(mapping.isolation, place)
        if call is not None:
            calls.append((f"isolation.{place}", call.tool, set(call.arguments) | namespace, []))
    return calls


def check_arguments(mapping: McpMapping, schemas: Mapping[str, Mapping[str, Any]], label: str) -> None:
    """AdapterError listing every mapped argument that `schemas` (tool name → inputSchema) does
    not take and every required one that is not mapped."""
    problems: list[str] = []
    for place, tool, names, lists in mapped_calls(mapping):
        schema = schemas.get(tool)
        if schema is None:
            continue  # a missing tool is reported by the caller
        problems += _problems(tool, place, names, schema, mapping)
        for items_place, argument, keys in lists:
            items = resolved_ref(schema, (schema.get("properties") or {}).get(argument, {}).get("items"))
            if isinstance(items, dict) and items.get("type") in (None, "object"):
                problems += _problems(tool, items_place, keys, items, mapping)
    if problems:
        raise AdapterError(f"{label}: the mapping does not fit the server's tools: {'; '.join(problems)}")


def resolved_ref(schema: Mapping[str, Any], part: Any) -> Any:
    """`part`, or what its local `$ref` (`#/$defs/NAME`, `#/definitions/NAME`) points to."""
    if isinstance(part, dict) and isinstance(part.get("$ref"), str) and part["$ref"].startswith("#/"):
        target: Any = schema
        for key in part["$ref"][2:].split("/"):
            target = target.get(key) if isinstance(target, dict) else None
        return target
    return part


def _problems(
    tool: str, place: str, names: set[str], schema: Mapping[str, Any], mapping: McpMapping
) -> list[str]:
    properties = schema.get("properties")
    required = set(schema.get("required") or ())
    problems = []
    if isinstance(properties, dict) and schema.get("additionalProperties") in (None, False):
        for name in sorted(names - set(properties)):
            why = " (isolation.argument)" if name == mapping.isolation.argument else ""
            problems.append(
                f"tool {tool!r} has no argument {name!r}{why}, sent by {place}; its inputSchema's "
                f"properties: {_listed(properties, required)}"
            )
    for name in sorted(required - names):
        problems.append(
            f"tool {tool!r} requires argument {name!r}, which {place} does not send; its inputSchema's "
            f"properties: {_listed(properties or {}, required)}"
        )
    return problems


def _listed(properties: Iterable[str], required: set[str]) -> str:
    names = [f"{name} (required)" if name in required else name for name in properties]
    return ", ".join(names) or "none"
