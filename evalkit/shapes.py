"""Pydantic field definitions derived from the records' declarations, so that a hit or thought
field is declared once (`evalkit.records.Hit`, `evalkit.records.Thought`) and every shape that
validates it at a boundary — the HTTP/MCP wire (`evalkit.systems.http.wire`), the JSON report
(`evalkit.harness.results.HitRecord`), JSONL run files (`evalkit.suites.runfiles.RunHit`) —
is built from it.

Each shape asks for its fields with `hit_model_fields` / `thought_model_fields` and builds its
model with `pydantic.create_model` (its public class subclasses the built one, so it keeps its
name and docstring). Two ways to translate a declared type:
- lenient (wire, report): a `Literal` becomes `str` — a system's odd label reaches the harness's
  checks (`evalkit.systems.checked`), which name the hit and the fix, and an old report with a
  label since renamed still loads;
- strict (`strict=True`, run files): the declared type as it is.
In both, a tuple becomes a list (JSON arrays) whose default is an empty list.
"""

from __future__ import annotations

import types as types_module
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, fields
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from pydantic import Field

from evalkit.records import HIT_FIELDS, HitField, Thought

ModelFields = dict[str, tuple[Any, Any]]
"""Field definitions as `pydantic.create_model` takes them: name → (type, FieldInfo)."""


def hit_model_fields(
    declared: Iterable[HitField] = HIT_FIELDS,
    *,
    strict: bool = False,
    required: Iterable[str] = ("id",),
    overrides: Mapping[str, tuple[Any, Any]] | None = None,
    after: Mapping[str, ModelFields] | None = None,
) -> ModelFields:
    """The pydantic fields of `declared` hit fields, in declaration order, each described by its
    declaration. `required` names fields without a default; `overrides` replaces a field's
    (type, FieldInfo) outright; `after` inserts a shape's own fields after a declared one (the
    report's `relevant` after `rank`)."""
    needed, replaced, inserted = set(required), dict(overrides or {}), dict(after or {})
    out: ModelFields = {}
    for spec in declared:
        if spec.name in replaced:
            out[spec.name] = replaced[spec.name]
        else:
            default = ... if spec.name in needed or spec.required else spec.default
            out[spec.name] = _field(spec.annotation, default, strict, description=spec.description)
        out.update(inserted.get(spec.name, {}))
    return out


def thought_model_fields(
    *, exclude: Iterable[str] = (), strict: bool = False, types: Mapping[Any, Any] | None = None
) -> ModelFields:
    """The pydantic fields of `Thought` (but `exclude`), in declaration order, with the value
    constraints its declaration gives (`min_length`, `ge`, `le`); `types` replaces a declared
    type wherever it occurs (the strict wire reads `datetime` as an ISO-8601 string)."""
    hints = get_type_hints(Thought)
    skipped = set(exclude)
    out: ModelFields = {}
    for spec in fields(Thought):
        if spec.name in skipped:
            continue
        default = ... if spec.default is MISSING else spec.default
        annotation = _replaced(hints[spec.name], dict(types or {}))
        about = spec.metadata.get("description")
        enum = spec.metadata.get("enum") or ()
        extra = {"json_schema_extra": {"enum": list(enum)}} if enum else {}
        out[spec.name] = _field(
            annotation, default, strict, description=about, **extra, **spec.metadata.get("constraints", {})
        )
    return out


def _field(annotation: Any, default: Any, strict: bool, **info: Any) -> tuple[Any, Any]:
    shape = _shape(annotation, strict)
    if not strict and "json_schema_extra" not in info:
        info.update(_enum_schema(annotation))
    if isinstance(default, tuple):
        return shape, Field(default_factory=list, **info)
    return shape, Field(default, **info)


def _enum_schema(annotation: Any) -> dict[str, Any]:
    """For a Literal read as `str` (lenient shapes), its values as the JSON schema's `enum`
    (inside `items` for a tuple of them), so documents such as the HTTP contract's OpenAPI list
    them although validation leaves the check to the harness; {} for other types."""
    origin = get_origin(annotation)
    if origin is Literal:
        return {"json_schema_extra": {"enum": list(get_args(annotation))}}
    if origin is tuple and get_origin(get_args(annotation)[0]) is Literal:
        values = list(get_args(get_args(annotation)[0]))
        return {"json_schema_extra": {"items": {"type": "string", "enum": values}}}
    return {}


def _replaced(annotation: Any, types: dict[Any, Any]) -> Any:
    """`annotation` with each type of `types` replaced, inside an optional (`X | None`) too."""
    if annotation in types:
        return types[annotation]
    if get_origin(annotation) in (Union, types_module.UnionType):
        return Union[tuple(_replaced(a, types) for a in get_args(annotation))]  # noqa: UP007
    return annotation


def _shape(annotation: Any, strict: bool) -> Any:
    """The JSON-side type of a declared one: tuples as lists, Literals as str unless strict."""
    origin = get_origin(annotation)
    if origin is tuple:
        return list[_shape(get_args(annotation)[0], strict)]  # type: ignore[misc]
    if origin is Literal:
        return annotation if strict else str
    if origin in (Union, types_module.UnionType):
        return Union[tuple(_shape(a, strict) for a in get_args(annotation))]  # noqa: UP007
    return annotation
