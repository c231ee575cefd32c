"""Argument templates of an MCP mapping (format 2): JSON values with `{field}` placeholders.

A template is any TOML/JSON value. Inside it, every string is scanned for placeholders:
- a string that is exactly one placeholder (`"{top_k}"`) becomes the field's value with its own
  type (an int stays an int, `{seeded_ids}` a list); a None value leaves the argument (or the
  list item) out, unless the mapping says `null = "send"`;
- any other string has each placeholder replaced by the value as text (`"note {id}"`; None is
  the empty string, a bool `true`/`false`, a datetime ISO-8601);
- `{{` and `}}` are literal braces.
Dicts and lists are rendered item by item; other values (numbers, booleans) are constants.
Which names a template may use depends on where it is (`STORE_FIELDS`, `SEARCH_FIELDS`, …):
an unknown name is a mapping error naming the place and the known names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*(?::[^{}]+)?)\}")
"""`{name}`, `{kind:argument}` (e.g. `{npm:@scope/package}` in [server]), or an escaped brace."""

OMIT = object()
"""What a None placeholder renders to when nulls are omitted: the key or item is left out."""

_MISSING = object()

SCOPE_FIELDS = ("namespace", "scenario", "workdir")
"""Placeholders every call's template may use: the scenario's fresh namespace value
("evalkit-<hex>"), the scenario's name and its scratch directory."""


def placeholders(template: Any) -> set[str]:
    """The placeholder names used anywhere in `template`."""
    if isinstance(template, str):
        return {m.group(1) for m in PLACEHOLDER.finditer(template) if m.group(1)}
    if isinstance(template, Mapping):
        return set().union(*(placeholders(v) for v in template.values())) if template else set()
    if isinstance(template, list):
        return set().union(*(placeholders(v) for v in template)) if template else set()
    return set()


def unknown_placeholders(template: Any, known: Iterable[str]) -> list[str]:
    """The placeholder names in `template` that are not in `known`, sorted."""
    return sorted(placeholders(template) - set(known))


def render(template: Any, values: Mapping[str, Any], *, send_null: bool = False) -> Any:
    """`template` with its placeholders filled from `values` (see the module docstring); a name
    missing from `values` (an option the caller did not give) always leaves its argument out,
    and is the empty string inside a longer string."""
    if isinstance(template, str):
        whole = PLACEHOLDER.fullmatch(template)
        if whole and whole.group(1):
            value = _plain(values.get(whole.group(1), _MISSING))
            return OMIT if value is _MISSING or (value is None and not send_null) else value
        return PLACEHOLDER.sub(lambda m: _text(m, values), template)
    if isinstance(template, Mapping):
        rendered = {k: render(v, values, send_null=send_null) for k, v in template.items()}
        return {k: v for k, v in rendered.items() if v is not OMIT}
    if isinstance(template, list):
        items = [render(v, values, send_null=send_null) for v in template]
        return [v for v in items if v is not OMIT]
    return template


def compiled(template: Any, *, send_null: bool = False) -> Callable[[Mapping[str, Any]], Any]:
    """`render` of `template` prepared once: `compiled(t, send_null=s)(values)` equals
    `render(t, values, send_null=s)`, without scanning the template's strings again on every
    call (the adapter renders each thought and search with the same few templates)."""
    if isinstance(template, str):
        whole = PLACEHOLDER.fullmatch(template)
        if whole and whole.group(1):
            name = whole.group(1)

            def one(values: Mapping[str, Any]) -> Any:
                value = _plain(values.get(name, _MISSING))
                return OMIT if value is _MISSING or (value is None and not send_null) else value

            return one
        if PLACEHOLDER.search(template) is None:
            return lambda values: template
        return lambda values: PLACEHOLDER.sub(lambda m: _text(m, values), template)
    if isinstance(template, Mapping):
        items = [(key, compiled(value, send_null=send_null)) for key, value in template.items()]

        def table(values: Mapping[str, Any]) -> dict[str, Any]:
            rendered = {}
            for key, part in items:
                value = part(values)
                if value is not OMIT:
                    rendered[key] = value
            return rendered

        return table
    if isinstance(template, list):
        parts = [compiled(value, send_null=send_null) for value in template]

        def listed(values: Mapping[str, Any]) -> list[Any]:
            return [v for v in (part(values) for part in parts) if v is not OMIT]

        return listed
    return lambda values: template


def _text(match: re.Match[str], values: Mapping[str, Any]) -> str:
    if match.group(0) in ("{{", "}}"):
        return match.group(0)[0]
    value = _plain(values.get(match.group(1)))
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _plain(value: Any) -> Any:
    """Datetimes as ISO-8601 strings, tuples as lists (JSON arguments)."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value
