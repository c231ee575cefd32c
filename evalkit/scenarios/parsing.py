"""Strict parsing of scenario files: YAML with a safe loader that rejects duplicate keys and keeps
dates as strings, JSON that rejects duplicate keys. Errors say where (line, column) and why."""

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


class _StrictYamlLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys and leaves dates and times as strings."""


_StrictYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _construct_unique_mapping(loader: _StrictYamlLoader, node: yaml.MappingNode) -> dict[Any, Any]:
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


_StrictYamlLoader.add_constructor("tag:yaml.org,2002:map", _construct_unique_mapping)


def _parse_yaml(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_StrictYamlLoader)
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
    """Dates that are not strings (pydantic would read a number as a Unix timestamp): each
    thought's created_at and a scenario's distractors_created_at."""
    thoughts = data.get("thoughts")
    dates = [("distractors_created_at", data.get("distractors_created_at"))]
    if isinstance(thoughts, list):
        dates += [
            (f"thoughts[{i}].created_at", t.get("created_at"))
            for i, t in enumerate(thoughts)
            if isinstance(t, dict)
        ]
    return [
        f"{field}: {value!r} is not a string; {DATE_HELP} (quoted in YAML)"
        for field, value in dates
        if value is not None and not isinstance(value, str)
    ]
