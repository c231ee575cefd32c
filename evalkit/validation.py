"""Turn pydantic validation errors into problems a person can act on: `<field path>: <message
with the fix>` (`queries[1].rank_before.before: ...`, `thresholds.overall.recall: ...`).

Used wherever data crosses a file or API boundary (scenario files, thresholds, run and store
options). `CheckedModel` is the base of option models built in code: its constructor raises
`UsageError` listing every bad field, never pydantic's `ValidationError`.
"""

from __future__ import annotations

import difflib
import re
import reprlib
import types
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from evalkit.errors import EvalkitError, UsageError

MAX_SHOWN_VALUE = 60
"""A rejected value is quoted up to this many characters (cut before formatting the rest)."""

_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxlevel = 3
_SHORT_REPR.maxother = MAX_SHOWN_VALUE


class FrozenModel(BaseModel):
    """Immutable, and unknown keys are errors (a typo never passes silently)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class CheckedModel(FrozenModel):
    """A FrozenModel whose constructor raises `error` (UsageError unless a subclass says
    otherwise) naming each bad field and the fix, never pydantic's ValidationError."""

    error: ClassVar[type[EvalkitError]] = UsageError

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            problems = "; ".join(field_problems(exc, type(self)))
            raise self.error(f"invalid {type(self).__name__}: {problems}") from None


def one_of(name: str, allowed: Sequence[str]) -> Callable[[object], object]:
    """A before-validator: the value unchanged when it is one of `allowed`, else a ValueError
    "unknown <name> <value>; use one of: <allowed>"."""

    def check(value: object) -> object:
        if value not in allowed:
            hint = did_you_mean(value, allowed) if isinstance(value, str) else ""
            raise ValueError(f"unknown {name} {shown_value(value)}{hint}; use one of: {', '.join(allowed)}")
        return value

    return check


class ProblemList(ValueError):
    """What a validator raises when it finds several problems: `field_problems` reports each of
    `problems` on its own (under the validator's field path, none for a model validator)."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def field_problems(exc: ValidationError, model: type[BaseModel]) -> list[str]:
    """Each pydantic error of `exc` (raised validating `model`) as `<field path>: <message>`; a
    `ProblemList` as its problems, one each."""
    found = []
    for err in exc.errors():
        listed = (err.get("ctx") or {}).get("error")
        if err["type"] == "value_error" and isinstance(listed, ProblemList):
            where = _field_path(model, tuple(err["loc"])) if err["loc"] else ""
            found += [f"{where}: {p}" if where else p for p in listed.problems]
        else:
            path, msg = _problem(err, model)
            found.append(f"{path}: {msg}")
    return found


def grouped_problems(errors: Sequence[Any], model: type[BaseModel]) -> list[str]:
    """pydantic `errors` (of validating `model`) as `field_problems` words them, but a problem
    repeated across the items of a list (the same kind at the same field of every hit) once,
    with a count: `hits[0].rank: Input should be a valid integer (got '1'); 4 more like it
    (hits[*].rank)`. Groups keep the order of their first error."""
    groups: dict[tuple[str, str], list[str]] = {}
    for err in errors:
        path, msg = _problem(err, model)
        key = (re.sub(r"\[\d+\]", "[*]", path), str(err.get("type")))
        groups.setdefault(key, []).append(f"{path}: {msg}")
    out = []
    for (pattern, _), lines in groups.items():
        more = len(lines) - 1
        out.append(lines[0] + (f"; {more} more like it ({pattern})" if more else ""))
    return out


def collapsed_path(model: type[BaseModel], loc: Sequence[str | int]) -> str:
    """The field path of `loc` in `model` with list positions as `[*]` (`hits[*].score`)."""
    return re.sub(r"\[\d+\]", "[*]", _field_path(model, tuple(loc)))


def _problem(err: Any, model: type[BaseModel]) -> tuple[str, str]:
    """One pydantic error as (field path, message)."""
    loc = tuple(err["loc"])
    kind = err["type"]
    given = shown_value(err.get("input"))
    if kind == "extra_forbidden":
        key = str(loc[-1])
        allowed = _fields_at(model, loc[:-1])
        msg = f"unknown key {key!r}{did_you_mean(key, allowed)}"
        msg += f"; allowed keys: {', '.join(allowed)}" if allowed else ""
    elif kind == "missing":
        msg = f"required key {loc[-1]!r} is missing"
    elif kind == "value_error":
        msg = str(err["ctx"]["error"])
    elif kind == "string_pattern_mismatch" and loc == ("name",):
        msg = (
            f"scenario name {given} is not kebab-case; use lower-case letters and digits "
            "in words joined by single hyphens, e.g. 'explicit-fact'"
        )
    elif kind == "literal_error" and isinstance(err.get("input"), str):  # a choice: "did you mean"
        choices = re.findall(r"'((?:[^'\\]|\\.)*)'", str(err["ctx"]["expected"]))
        msg = f"{err['msg']} (got {given}){did_you_mean(err['input'], choices)}"
    else:
        msg = f"{err['msg']} (got {given})"
    return _field_path(model, loc), msg


def unknown_key_hint(model: type[BaseModel], loc: Sequence[str | int]) -> str:
    """' (did you mean 'x'?)' for the unknown key at `loc` of `model`, or ''."""
    return did_you_mean(str(loc[-1]), _fields_at(model, tuple(loc[:-1])))


def shown_value(value: object) -> str:
    """`repr(value)` cut to MAX_SHOWN_VALUE characters. The value is cut before it is formatted
    (strings sliced, containers through `reprlib`, which stops at a few items and levels), so a
    huge or deeply nested value (a YAML alias bomb) costs no more than a small one."""
    text = repr(value[: MAX_SHOWN_VALUE + 1]) if isinstance(value, str | bytes) else _SHORT_REPR.repr(value)
    return text if len(text) <= MAX_SHOWN_VALUE else text[: MAX_SHOWN_VALUE - 3] + "..."


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


SURROGATE_FIX = "a \\uD800-\\uDFFF escape must be followed by its pair (or write the character itself)"
"""The fix of a lone surrogate in a JSON or YAML file."""


def lone_surrogate(text: str) -> str | None:
    """The problem of `text` holding a lone UTF-16 surrogate (a JSON escape such as \\ud800
    without its pair, which UTF-8 cannot encode, so no file or store can hold it): "lone surrogate
    \\ud800 at character 4", or None when it holds none."""
    found = _LONE_SURROGATE.search(text)
    return (
        None if found is None else f"lone surrogate \\u{ord(found.group()):04x} at character {found.start()}"
    )


def did_you_mean(word: str, options: Sequence[str]) -> str:
    """' (did you mean 'x'?)' for the closest option, or ''."""
    hint = difflib.get_close_matches(word, options, n=1)
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def _options(annotation: Any) -> tuple[Any, ...]:
    """The members of a union annotation (`X | None`), or the annotation itself."""
    if get_origin(annotation) in (Union, types.UnionType):
        return get_args(annotation)
    return (annotation,)


def _step(annotation: Any, part: str | int) -> Any:
    """The annotation one location step below `annotation`, or None when unknown."""
    for option in _options(annotation):
        if isinstance(option, type) and issubclass(option, BaseModel) and isinstance(part, str):
            field = option.model_fields.get(part)
            return None if field is None else field.annotation
        origin, args = get_origin(option), get_args(option)
        if origin is list and isinstance(part, int):
            return args[0]
        if origin is dict:
            return args[1]
    return None


def _is_dict(annotation: Any) -> bool:
    return any(get_origin(option) is dict for option in _options(annotation))


def _field_path(model: type[BaseModel], loc: tuple[str | int, ...]) -> str:
    """`query 2.rank_before.before`, `query 1.grades['a']`, `thoughts[0].id`; '<top level>' for ().
    A position in a top-level `queries` list is the query's number from 1 (`query 2`), the
    number every message, table and stable query id (`<scenario>#2`) gives it."""
    path = ""
    annotation: Any = model
    for part in loc:
        if part == "[key]":
            path += " (key)"
            continue
        if path == "queries" and isinstance(part, int):
            path = f"query {part + 1}"
        elif _is_dict(annotation) or (isinstance(part, str) and not part.isidentifier()):
            path += f"[{part!r}]"
        elif isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else part
        annotation = _step(annotation, part)
    return path or "<top level>"


def _fields_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    annotation: Any = model
    for part in loc:
        annotation = _step(annotation, part)
    for option in _options(annotation):
        if isinstance(option, type) and issubclass(option, BaseModel):
            return list(option.model_fields)
    return []
