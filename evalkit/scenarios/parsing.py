"""Strict parsing of scenario files: YAML with a safe loader that rejects duplicate keys and keeps
dates as strings, JSON that rejects duplicate keys. Errors say where (line, column) and why.

Bounds, so that no file can exhaust memory or the stack: nesting deeper than MAX_DEPTH levels
(YAML: while composing, with the line; JSON: after parsing, and a RecursionError either way) and
more than MAX_VALUES values once YAML aliases are expanded (a "billion laughs" file: nine
anchors of nine aliases each is 387 million values) are SyntaxProblems. Values quoted in
messages are cut first (`evalkit.validation.shown_value`).

Two YAML loaders, one answer. PythonYamlLoader is PyYAML's pure-Python reader, scanner and
parser. LibyamlEventLoader (when PyYAML was built with libyaml; about 10x faster) takes its
events from libyaml's C parser; both compose with the same bounded Python composer and construct
with the same constructor. libyaml words its errors differently and stops deep nesting at its own
limit, and it reads a few spellings PyYAML refuses or reads otherwise, so whenever it refuses a
text, or the text holds such a spelling (`_LIBYAML_LENIENT`, `_LibyamlComposer`), the text is
read by PythonYamlLoader: the data and every message are PyYAML's whichever loader is in use.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from evalkit.scenarios.dates import DATE_HELP
from evalkit.validation import SURROGATE_FIX, lone_surrogate, shown_value

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


class _BoundedComposer(yaml.composer.Composer):
    """The pure-Python composer, stopping past MAX_DEPTH levels (before its recursion can)."""

    _depth = 0
    peek_event: Callable[[], Any]  # from the parser it is mixed with (the stubs' Composer has none)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(None, None, _too_deep(), mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _StrictConstructor(yaml.constructor.SafeConstructor):
    """SafeConstructor that rejects duplicate mapping keys (see `_construct_unique_mapping`)."""


class _StrictResolver(yaml.resolver.Resolver):
    """Resolver that leaves dates and times as strings."""


_StrictResolver.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}


class PythonYamlLoader(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    _BoundedComposer,
    _StrictConstructor,
    _StrictResolver,
):
    """The strict loader in pure Python: PyYAML's reader, scanner and parser, then the bounded
    composer, the strict constructor and resolver. Used when PyYAML was built without libyaml, and
    for every text LibyamlEventLoader refuses or might read otherwise."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        _BoundedComposer.__init__(self)
        _StrictConstructor.__init__(self)
        _StrictResolver.__init__(self)


class _PyYamlMightDiffer(yaml.YAMLError):
    """libyaml read a spelling that PyYAML's own scanner refuses or reads otherwise."""


class _LibyamlComposer(_BoundedComposer):
    """The bounded composer, refusing (with _PyYamlMightDiffer) what libyaml and PyYAML read
    differently, found by running both on the YAML test suite (yaml/yaml-test-suite, 402 files):
    a %directive, an explicit tag on a scalar (a lone `!` is '' for libyaml, None for PyYAML) and
    a `?` inside a plain scalar in a flow collection (`[a?b]`, `{query: Which port?}`), which
    libyaml reads and PyYAML refuses. What shows only in the text is `_LIBYAML_LENIENT`."""

    _flow = 0

    def compose_document(self) -> yaml.Node | None:
        start = self.peek_event()
        if start.version is not None or start.tags:
            raise _PyYamlMightDiffer("a %directive")
        return super().compose_document()

    def compose_scalar_node(self, anchor: Any) -> yaml.ScalarNode:
        event = self.peek_event()
        if event.tag is not None:
            raise _PyYamlMightDiffer("an explicit tag on a scalar")
        if self._flow and event.implicit[0] and "?" in event.value:
            raise _PyYamlMightDiffer("a '?' in a plain scalar in a flow collection")
        return super().compose_scalar_node(anchor)

    def compose_sequence_node(self, anchor: Any) -> yaml.SequenceNode:
        flow = self._enter(self.peek_event())
        try:
            return super().compose_sequence_node(anchor)
        finally:
            self._flow -= flow

    def compose_mapping_node(self, anchor: Any) -> yaml.MappingNode:
        flow = self._enter(self.peek_event())
        try:
            return super().compose_mapping_node(anchor)
        finally:
            self._flow -= flow

    def _enter(self, start: yaml.CollectionStartEvent) -> int:
        """1 when `start` opens a flow collection (counted in _flow until it closes), else 0."""
        flow = 1 if start.flow_style else 0
        self._flow += flow
        return flow


YAML_LOADERS: tuple[type[Any], ...] = (PythonYamlLoader,)
"""Every strict loader this PyYAML can build, the one `parse_text` uses first."""

if yaml.__with_libyaml__:
    from yaml._yaml import CParser

    class LibyamlEventLoader(_LibyamlComposer, CParser, _StrictConstructor, _StrictResolver):
        """The strict loader with libyaml's C scanner and parser: the events come from C, the nodes
        from the bounded Python composer. PyYAML's CSafeLoader composes in C, past any bound; here
        the composer's methods come before CParser's in the MRO, so CParser only supplies
        get_event, peek_event and check_event (tests/scenarios/test_parsing.py pins this)."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _LibyamlComposer.__init__(self)
            _StrictConstructor.__init__(self)
            _StrictResolver.__init__(self)

    YAML_LOADERS = (LibyamlEventLoader, PythonYamlLoader)


YAML_LOADER: type[Any] = YAML_LOADERS[0]
"""The loader `parse_text` uses: LibyamlEventLoader when PyYAML was built with libyaml, else
PythonYamlLoader."""


def _construct_unique_mapping(loader: _StrictConstructor, node: yaml.MappingNode) -> dict[Any, Any]:
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


_StrictConstructor.add_constructor("tag:yaml.org,2002:map", _construct_unique_mapping)  # type: ignore[type-var]


_LIBYAML_LENIENT = re.compile(r"\t|[|>][-+0-9]*#")
"""Text libyaml reads where PyYAML refuses it, seen before parsing: a tab (PyYAML refuses one
between tokens, libyaml often allows it) or a block scalar header with a comment glued on (`>#`)."""


def _parse_yaml(text: str) -> Any:
    """The data in `text` read by YAML_LOADER. When that is LibyamlEventLoader and the text matches
    _LIBYAML_LENIENT or libyaml refuses it (for any reason, _PyYamlMightDiffer included), the text
    is read by PythonYamlLoader instead, whose data or message is the answer."""
    if YAML_LOADER is not PythonYamlLoader and not _LIBYAML_LENIENT.search(text):
        try:
            return _load(YAML_LOADER, text)
        except (yaml.YAMLError, UnicodeEncodeError):  # CParser encodes to UTF-8: a lone surrogate
            pass
    try:
        return _load(PythonYamlLoader, text)
    except yaml.MarkedYAMLError as exc:
        where = f" at {_mark(exc.problem_mark)}" if exc.problem_mark is not None else ""
        message = f"YAML syntax error{where}: {exc.problem or exc.context}"
        if exc.problem and exc.context:
            started = f" started at {_mark(exc.context_mark)}" if exc.context_mark is not None else ""
            message += f" ({exc.context}{started})"
        raise SyntaxProblem(message) from None
    except yaml.YAMLError as exc:
        raise SyntaxProblem(f"YAML syntax error: {exc}") from None


def _load(loader: type[Any], text: str) -> Any:
    """What yaml.load does (its stubs accept only PyYAML's own loader classes)."""
    instance = loader(text)
    try:
        return instance.get_single_data()
    finally:
        instance.dispose()


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


def _utf8_json(data: Any) -> bool:
    """Whether `data` dumps to JSON that encodes as UTF-8; False also for what JSON cannot hold
    (a YAML set or binary value), which the caller then walks."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError):  # UnicodeEncodeError is a ValueError
        return False
    return True


def surrogate_problems(data: Any, path: str = "") -> list[str]:
    """`<field>: ...` for each string in `data` (keys included) holding a lone UTF-16 surrogate
    (a JSON escape such as \\ud800 without its pair): it cannot be encoded as UTF-8, so a store
    or a report could not hold it. Depth is bounded by `parse_text`'s checks. Data that encodes
    as UTF-8 JSON as a whole (nearly every file) holds none, which one C call settles."""
    if not path and _utf8_json(data):
        return []
    if isinstance(data, str):
        surrogate = lone_surrogate(data)
        if surrogate is None:
            return []
        return [f"{path or '<top level>'}: {surrogate}; {SURROGATE_FIX}"]
    if isinstance(data, dict):
        found = []
        for key, value in data.items():
            shown = str(key).encode("utf-8", "backslashreplace").decode("utf-8")
            field = f"{path}.{shown}" if path else shown
            found += surrogate_problems(key, f"{field} (key)") + surrogate_problems(value, field)
        return found
    if isinstance(data, list):  # a query is numbered from 1, as `validation.field_problems` does
        where = [f"query {i + 1}" if path == "queries" else f"{path}[{i}]" for i in range(len(data))]
        return [p for value, at in zip(data, where, strict=True) for p in surrogate_problems(value, at)]
    return []
