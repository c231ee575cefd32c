"""Strict parsing of scenario files: YAML with a safe loader that rejects duplicate keys and keeps
dates as strings, JSON that rejects duplicate keys. Errors say where (line, column) and why.

Bounds, so that no file can exhaust memory or the stack: nesting deeper than MAX_DEPTH levels
(YAML: while composing, with the line; JSON: after parsing, and a RecursionError either way) and
more than MAX_VALUES values once YAML aliases are expanded (a "billion laughs" file: nine
anchors of nine aliases each is 387 million values) are SyntaxProblems. Values quoted in
messages are cut first (`evalkit.validation.shown_value`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from evalkit.scenarios.dates import DATE_HELP
from evalkit.validation import shown_value

MAX_DEPTH = 64
"""Deepest nesting of lists and mappings a scenario file may have (real files use about 5)."""

MAX_VALUES = 1_000_000
"""Most values (scalars, lists, mappings) a file may hold with every YAML alias expanded."""


class SyntaxProblem(Exception):
    """A file that does not parse; the message says where and why."""


def parse_text(text: str, suffix: str) -> Any:
    """The data in `text`: JSON for the suffix ".json", YAML otherwise. Raises SyntaxProblem,
    also for a file past MAX_DEPTH or MAX_VALUES (see the module docstring)."""
    try:
        data = _parse_json(text) if suffix == ".json" else _parse_yaml(text)
    except RecursionError:
        raise SyntaxProblem(_too_deep()) from None
    _check_size(data)
    return data


def _too_deep() -> str:
    return f"nested deeper than {MAX_DEPTH} levels of lists or mappings; flatten the data"


def _check_size(data: Any) -> None:
    """Raise SyntaxProblem when `data` nests deeper than MAX_DEPTH or holds more than MAX_VALUES
    values counting every alias expansion. Shared sub-objects (what a YAML alias yields) are
    measured once, so a bomb costs as little to measure as its text is long."""
    measured: dict[int, tuple[int, int]] = {}

    def measure(value: Any, depth: int) -> tuple[int, int]:
        """(values, height) of `value` found at nesting level `depth`."""
        if depth > MAX_DEPTH:
            raise SyntaxProblem(_too_deep())
        if not isinstance(value, list | dict):
            return 1, 0
        known = measured.get(id(value))
        if known is not None:
            if depth + known[1] > MAX_DEPTH:
                raise SyntaxProblem(_too_deep())
            return known
        children = value.values() if isinstance(value, dict) else value
        count, height = 1, 0
        for child in children:
            child_count, child_height = measure(child, depth + 1)
            count, height = count + child_count, max(height, child_height + 1)
            if count > MAX_VALUES:
                raise SyntaxProblem(
                    f"holds more than {MAX_VALUES:,} values once its YAML aliases (*name) are expanded; "
                    "write the values out instead of repeating anchors"
                )
        measured[id(value)] = (count, height)
        return count, height

    measure(data, 0)


class _StrictYamlLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys, leaves dates and times as strings and
    stops composing past MAX_DEPTH levels (before the pure-Python composer's recursion can)."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(None, None, _too_deep(), mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


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
                None,
                None,
                f"duplicate key {shown_value(key)} (first given on line {line})",
                key_node.start_mark,
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
        raise SyntaxProblem(f"JSON error: duplicate key {shown_value(exc.args[0])} in one object") from None


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
        f"{field}: {shown_value(value)} is not a string; {DATE_HELP} (quoted in YAML)"
        for field, value in dates
        if value is not None and not isinstance(value, str)
    ]


def surrogate_problems(data: Any, path: str = "") -> list[str]:
    """`<field>: ...` for each string in `data` (keys included) holding a lone UTF-16 surrogate
    (a JSON escape such as \\ud800 without its pair): it cannot be encoded as UTF-8, so a store
    or a report could not hold it. Depth is bounded by `parse_text`'s checks."""
    if isinstance(data, str):
        bad = next((i for i, ch in enumerate(data) if "\ud800" <= ch <= "\udfff"), None)
        if bad is None:
            return []
        return [
            f"{path or '<top level>'}: lone surrogate \\u{ord(data[bad]):04x} at character {bad}; "
            "a \\uD800-\\uDFFF escape must be followed by its pair (or write the character itself)"
        ]
    if isinstance(data, dict):
        found = []
        for key, value in data.items():
            shown = str(key).encode("utf-8", "backslashreplace").decode("utf-8")
            field = f"{path}.{shown}" if path else shown
            found += surrogate_problems(key, f"{field} (key)") + surrogate_problems(value, field)
        return found
    if isinstance(data, list):
        return [p for i, value in enumerate(data) for p in surrogate_problems(value, f"{path}[{i}]")]
    return []
