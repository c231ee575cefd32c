"""Strict parsing of scenario files: YAML with a safe loader that rejects duplicate keys and keeps
dates as strings, JSON that rejects duplicate keys. Errors say where (line, column) and why.

YAML is read with libyaml's C parser when PyYAML has it (`FAST_YAML_LOADER`); the constructor
and resolver stay PyYAML's Python ones, so a file that parses gives the same data either way. A
file the C parser rejects is read again with the pure-Python loader, whose messages are the ones
reported (the C parser words some errors differently)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from evalkit.scenarios.dates import DATE_HELP


class SyntaxProblem(Exception):
    """A file that does not parse; the message says where and why."""


def parse_text(text: str, suffix: str) -> Any:
    """The data in `text`: JSON for the suffix ".json", YAML otherwise. Raises SyntaxProblem."""
    return _parse_json(text) if suffix == ".json" else _parse_yaml(text)


def _strict_loader(base: type[Any]) -> type[Any]:
    """A subclass of the safe loader `base` that rejects duplicate mapping keys and leaves dates
    and times as strings (no implicit timestamp resolver)."""
    loader: Any = type(f"Strict{base.__name__}", (base,), {})
    loader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    loader.add_constructor("tag:yaml.org,2002:map", _construct_unique_mapping)
    return loader


def _construct_unique_mapping(
    loader: yaml.constructor.SafeConstructor, node: yaml.MappingNode
) -> dict[Any, Any]:
    first_line: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            line = first_line.setdefault(key, key_node.start_mark.line + 1)
        except TypeError:
            continue  # unhashable key: construct_mapping reports it
        if line != key_node.start_mark.line + 1:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first given on line {line})", key_node.start_mark
            )
    return loader.construct_mapping(node, deep=True)


PURE_YAML_LOADER = _strict_loader(yaml.SafeLoader)
"""The pure-Python strict loader: the reference behaviour, and the one that words every error."""

FAST_YAML_LOADER = _strict_loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader))
"""The same loader on libyaml's C parser when PyYAML was built with it (about 10x faster),
otherwise the pure-Python one."""


def _parse_yaml(text: str) -> Any:
    """Parse with the fast loader; a text it rejects is parsed again with the pure-Python loader,
    so problems are worded (and found) exactly as without libyaml."""
    try:
        return yaml.load(text, Loader=FAST_YAML_LOADER)
    except yaml.YAMLError:
        return parse_yaml_with(PURE_YAML_LOADER, text)


def parse_yaml_with(loader: type[Any], text: str) -> Any:
    """The data in the YAML `text` read with `loader`; raises SyntaxProblem saying where and why."""
    try:
        return yaml.load(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        where = f" at {_mark(exc.problem_mark)}" if exc.problem_mark is not None else ""
        message = f"YAML syntax error{where}: {exc.problem or exc.context}"
        if exc.problem and exc.context:
            started = f" started at {_mark(exc.context_mark)}" if exc.context_mark is not None else ""
            message += f" ({exc.context}{started})"
        raise SyntaxProblem(message) from None
    except yaml.YAMLError as exc:
        raise SyntaxProblem(f"YAML syntax error: {exc}") from None


def _mark(mark: yaml.Mark) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


class _DuplicateJsonKey(ValueError):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateJsonKey(key)
        out[key] = value
    return out


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_unique_object)
    except json.JSONDecodeError as exc:
        raise SyntaxProblem(
            f"JSON syntax error at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except _DuplicateJsonKey as exc:
        raise SyntaxProblem(f"JSON error: duplicate key {exc.args[0]!r} in one object") from None


def raw_date_problems(data: Mapping[str, Any]) -> list[str]:
    """created_at values that are not strings (pydantic would read a number as a Unix timestamp)."""
    thoughts = data.get("thoughts")
    if not isinstance(thoughts, list):
        return []
    return [
        f"thoughts[{i}].created_at: {t['created_at']!r} is not a string; {DATE_HELP} (quoted in YAML)"
        for i, t in enumerate(thoughts)
        if isinstance(t, dict) and t.get("created_at") is not None and not isinstance(t["created_at"], str)
    ]
