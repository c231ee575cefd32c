"""Read OpenTelemetry traces (OTLP JSON) and pick out the memory operations evalkit can score.

Input: the OTLP JSON encoding of an `ExportTraceServiceRequest` (`{"resourceSpans": [...]}`,
what the OTLP/HTTP JSON body and the collector's file exporter hold), either one document per
file or JSON Lines of them (the file exporter writes one request per line). Field names are the
proto3 JSON mapping's lowerCamelCase (`scopeSpans`, `traceId`, `startTimeUnixNano`); the
original snake_case names are accepted too, as the mapping allows. Ids are hex strings
(lower-cased here), times unix nanoseconds as a string or a number, attributes a list of
`{key, value: AnyValue}` with `stringValue`, `boolValue`, `intValue` (string or number),
`doubleValue`, `arrayValue {values}`, `kvlistValue {values: [{key, value}]}` or `bytesValue`.

Spans are matched by the attribute names of the conventions' current versions (`CONVENTIONS`
says which were read); nothing else is guessed:

- **gen_ai memory spans** (OpenTelemetry GenAI semantic conventions, `gen_ai.memory.client`,
  status Development): `gen_ai.operation.name` one of `MEMORY_OPERATIONS`.
  `search_memory` → a search: `gen_ai.memory.query.text`, `gen_ai.memory.store.id`,
  `gen_ai.memory.records` (the returned records, best first: a structured array or the JSON
  string the conventions allow, each `{content, id, score, metadata}`), `gen_ai.request.top_k`
  when present. `delete_memory` → a delete of `gen_ai.memory.record.id` (and of the ids in
  `gen_ai.memory.records`); a delete naming no record (the conventions say it *may* mean the
  whole store) labels nothing and is warned about. `create_memory`, `update_memory`,
  `upsert_memory` → a write of the named records, with their new content when recorded.
  `create_memory_store` / `delete_memory_store` are counted and otherwise ignored.
- **gen_ai retrieval spans** (`gen_ai.retrieval.client`): `gen_ai.operation.name` = `retrieval`,
  `gen_ai.retrieval.query.text`, `gen_ai.retrieval.documents` (`[{id, score}]`),
  `gen_ai.request.top_k`, `gen_ai.data_source.id` as the store.
- **OpenInference RETRIEVER spans** (what Phoenix reads): `openinference.span.kind` =
  `RETRIEVER`, the query in `input.value`, the documents flattened as
  `retrieval.documents.{i}.document.{id,content,score,metadata}` (i from 0, best first). The
  conventions name no store: these searches belong to the store "" (and so no gen_ai delete
  ever labels them).

Warnings (the import goes on; each names the file, the trace and span ids and the attribute):
a search without its query text (it can be scored, not turned into a scenario); a search
without its returned records (`gen_ai.memory.records` is opt-in: the span is skipped unless
`gen_ai.memory.record.count` says 0); a record without an id (it keeps its rank under the
placeholder id `unidentified/<span id>/<rank>`, which no label can name); a record listed
twice in one result (the first is kept); a score that is not a finite number (dropped); an
attribute of a read namespace that the conventions do not define (`gen_ai.memory.*`,
`gen_ai.retrieval.*`, `retrieval.documents.*`; `gen_ai.retrieval.top_k`, from drafts, is named
`gen_ai.request.top_k` now); a span ending before it starts or lying outside its parent's time
(clock skew: it labels nothing, see `evalkit.suites.trace_labels`).

Errors (DatasetError listing every problem, nothing returned): a missing file, a file that is
not JSON or not OTLP JSON (no `resourceSpans`), a span without a valid trace or span id, and
the same span id twice in one trace (within or across files).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evalkit.errors import DatasetError
from evalkit.validation import lone_surrogate
from evalkit.wording import counted

OpKind = Literal["search", "delete", "write"]
Convention = Literal["gen_ai.memory", "gen_ai.retrieval", "openinference"]

CONVENTIONS: Mapping[str, str] = {
    "gen_ai.memory": "OpenTelemetry GenAI semantic conventions, gen_ai.memory.client spans "
    "(semantic-conventions-genai model/gen-ai/spans.yaml at 002c8a6, memory operations of PR #140; "
    "status Development)",
    "gen_ai.retrieval": "OpenTelemetry GenAI semantic conventions, gen_ai.retrieval.client spans "
    "(semantic-conventions-genai model/gen-ai/spans.yaml at 002c8a6; status Development)",
    "openinference": "OpenInference semantic conventions, RETRIEVER spans "
    "(Arize-ai/openinference spec/semantic_conventions.md at 1fe497f, "
    "openinference-semantic-conventions 0.1.32)",
}
"""The conventions (and the versions read) each matched span follows; recorded in the query log."""

MEMORY_OPERATIONS: tuple[str, ...] = (
    "create_memory_store",
    "search_memory",
    "create_memory",
    "update_memory",
    "upsert_memory",
    "delete_memory",
    "delete_memory_store",
)
"""`gen_ai.operation.name` values of a gen_ai memory span."""

_WRITES = ("create_memory", "update_memory", "upsert_memory")
_STORE_LIFECYCLE = ("create_memory_store", "delete_memory_store")

OPERATION = "gen_ai.operation.name"
MEMORY_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "gen_ai.memory.store.id",
        "gen_ai.memory.record.id",
        "gen_ai.memory.record.count",
        "gen_ai.memory.query.text",
        "gen_ai.memory.records",
    }
)
"""The `gen_ai.memory.*` attributes the conventions define (any other is reported)."""

RETRIEVAL_ATTRIBUTES: frozenset[str] = frozenset(
    {"gen_ai.retrieval.query.text", "gen_ai.retrieval.documents"}
)
"""The `gen_ai.retrieval.*` attributes the conventions define (any other is reported)."""

TOP_K = "gen_ai.request.top_k"
DATA_SOURCE = "gen_ai.data_source.id"
OI_KIND = "openinference.span.kind"
OI_INPUT = "input.value"
OI_DOCUMENTS = "retrieval.documents."
OI_DOCUMENT_FIELDS: frozenset[str] = frozenset({"id", "content", "score", "metadata"})
"""The `document.*` fields of an OpenInference retrieved document."""

_RENAMED = {"gen_ai.retrieval.top_k": TOP_K}


@dataclass(frozen=True)
class Record:
    """One memory record of a span, in the span's order: `id` (a placeholder for a record the
    span gave without one, see `placeholder`), `score` (None when absent or not finite) and
    `content` (None when not recorded; structured content as canonical JSON text)."""

    id: str
    score: float | None
    content: str | None
    placeholder: bool = False


@dataclass(frozen=True)
class MemoryOp:
    """A memory operation read from one span. `kind`: search (query, records best first,
    top_k), delete (`targets`: the record ids deleted) or write (`records`: the records created
    or updated, with their new content when recorded). Times are unix nanoseconds (None when
    absent); `skewed` marks a span whose times cannot be trusted (see the module docstring)."""

    kind: OpKind
    convention: Convention
    operation: str
    file: str
    trace_id: str
    span_id: str
    parent_span_id: str | None
    start_ns: int | None
    end_ns: int | None
    store_id: str
    query: str | None = None
    top_k: int | None = None
    records: tuple[Record, ...] = ()
    targets: tuple[str, ...] = ()
    service: str | None = None
    schema_url: str | None = None
    skewed: bool = False

    @property
    def query_id(self) -> str:
        """The id its search is known by in the run file and the query log: `<trace>/<span>`."""
        return f"{self.trace_id}/{self.span_id}"

    @property
    def latency_ms(self) -> float | None:
        """end − start in milliseconds; None when a time is missing or the span is skewed."""
        if self.start_ns is None or self.end_ns is None or self.end_ns < self.start_ns:
            return None
        return (self.end_ns - self.start_ns) / 1e6

    def where(self) -> str:
        return span_where(self.file, self.trace_id, self.span_id)


@dataclass(frozen=True)
class TraceSet:
    """What `read_traces` found: the memory operations in time order (start, then file order),
    the per-span `warnings`, each file read with its sha256, and counts of spans read and of
    spans ignored (store lifecycle operations)."""

    operations: tuple[MemoryOp, ...]
    warnings: tuple[str, ...]
    files: tuple[tuple[str, str], ...]
    spans: int
    ignored: int = 0

    @property
    def searches(self) -> tuple[MemoryOp, ...]:
        return tuple(op for op in self.operations if op.kind == "search")


def span_where(file: str, trace_id: str, span_id: str) -> str:
    """The prefix naming one span in a warning or an error."""
    return f"{file}: trace {trace_id} span {span_id}"


@dataclass
class _Span:
    file: str
    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_ns: int | None
    end_ns: int | None
    attributes: dict[str, Any]
    service: str | None
    schema_url: str | None
    order: int
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def read_traces(paths: Sequence[str | Path]) -> TraceSet:
    """Read the OTLP JSON files `paths` (see the module docstring) into a `TraceSet`.
    DatasetError listing every error of every file; warnings never stop the read."""
    if not paths:
        raise DatasetError("no trace file given; pass one or more OTLP JSON files")
    problems: list[str] = []
    spans: list[_Span] = []
    files: list[tuple[str, str]] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_file():
            problems.append(f"{path}: trace file not found; pass an OTLP JSON file")
            continue
        data = path.read_bytes()
        files.append((str(path), hashlib.sha256(data).hexdigest()))
        spans += _file_spans(path, data, problems, len(spans))
    seen: dict[tuple[str, str], str] = {}
    for span in spans:
        key = (span.trace_id, span.span_id)
        if key in seen:
            problems.append(
                f"{span_where(span.file, *key)}: duplicate span id (also in {seen[key]}); "
                "a span id names one span of a trace: export each span once"
            )
        seen.setdefault(key, span.file)
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    skewed = {id(s) for s in spans if _skew_warnings(s, by_id)}
    operations: list[MemoryOp] = []
    ignored = 0
    for span in spans:
        op, lifecycle = _operation(span, id(span) in skewed)
        ignored += lifecycle
        if op is not None:
            operations.append(op)
    problems += [e for s in spans for e in s.errors]  # the spans' own, with the files' problems
    if problems:
        raise DatasetError(
            f"cannot read the traces ({counted(len(problems), 'problem')}); nothing was written", problems
        )
    operations.sort(key=lambda op: (op.start_ns is None, op.start_ns or 0))
    warnings = [w for s in spans for w in s.warnings]
    return TraceSet(tuple(operations), tuple(warnings), tuple(files), len(spans), ignored)


# --- OTLP JSON -------------------------------------------------------------------------------


def _file_spans(path: Path, data: bytes, problems: list[str], offset: int) -> list[_Span]:
    """Every span of one file (a JSON document or JSON Lines of them)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        problems.append(f"{path}: not UTF-8; an OTLP JSON file is UTF-8 text")
        return []
    documents: list[tuple[str, Any]] = []
    try:
        documents.append((str(path), json.loads(text)))
    except RecursionError:  # a traceback (exit 1) before
        problems.append(f"{path}: JSON nested deeper than Python's limit; no OTLP export nests that deep")
        return []
    except json.JSONDecodeError as whole:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                documents.append((f"{path} line {number}", json.loads(line)))
            except RecursionError:
                problems.append(f"{path} line {number}: JSON nested deeper than Python's limit; skipped")
                continue
            except json.JSONDecodeError as exc:
                if not documents:  # not even the first line: not JSON Lines either
                    problems.append(
                        f"{path}: not JSON ({whole.msg} at line {whole.lineno} column {whole.colno}); "
                        "an OTLP JSON file holds one ExportTraceServiceRequest, or one per line"
                    )
                    return []
                problems.append(
                    f"{path} line {number}: not JSON ({exc.msg} at column {exc.colno}); an OTLP JSON "
                    "file holds one ExportTraceServiceRequest, or one per line"
                )
    if not documents and not problems:
        problems.append(f"{path}: empty; an OTLP JSON file holds at least one ExportTraceServiceRequest")
    spans: list[_Span] = []
    for where, document in documents:
        resource_spans = _field(document, "resourceSpans") if isinstance(document, dict) else None
        if not isinstance(resource_spans, list):
            problems.append(
                f"{where}: not OTLP JSON: expected an object with a 'resourceSpans' list "
                "(an ExportTraceServiceRequest, as the OTLP file exporter writes)"
            )
            continue
        spans += _request_spans(path, where, resource_spans, problems, offset + len(spans))
    return spans


def _field(obj: Mapping[str, Any], camel: str) -> Any:
    """`obj[camel]`, or its snake_case spelling (the proto3 JSON mapping accepts both)."""
    if camel in obj:
        return obj[camel]
    return obj.get("".join(f"_{c.lower()}" if c.isupper() else c for c in camel))


def _request_spans(
    path: Path, where: str, resource_spans: list[Any], problems: list[str], offset: int
) -> list[_Span]:
    spans: list[_Span] = []
    for ri, rs in enumerate(resource_spans):
        if not isinstance(rs, dict):
            problems.append(f"{where}: resourceSpans[{ri}] is not an object")
            continue
        resource = _field(rs, "resource") or {}
        resource_attrs = _attributes(resource.get("attributes") if isinstance(resource, dict) else None)
        service = resource_attrs.get("service.name")
        scope_spans = _field(rs, "scopeSpans") or []
        if not isinstance(scope_spans, list):
            problems.append(f"{where}: resourceSpans[{ri}].scopeSpans is not a list")
            continue
        for si, ss in enumerate(scope_spans):
            raw_spans = _field(ss, "spans") if isinstance(ss, dict) else None
            if not isinstance(raw_spans, list):
                problems.append(f"{where}: resourceSpans[{ri}].scopeSpans[{si}].spans is not a list")
                continue
            schema_url = _field(ss, "schemaUrl") or _field(rs, "schemaUrl") or None
            for pi, raw in enumerate(raw_spans):
                at = f"{where}: resourceSpans[{ri}].scopeSpans[{si}].spans[{pi}]"
                span = _span(path, at, raw, problems)
                if span is None:
                    continue
                span.service = service if isinstance(service, str) else None
                span.schema_url = schema_url if isinstance(schema_url, str) else None
                span.order = offset + len(spans)
                spans.append(span)
    return spans


def _hex_id(value: Any, length: int) -> str | None:
    if not isinstance(value, str) or len(value) != length:
        return None
    try:
        int(value, 16)
    except ValueError:
        return None
    return None if set(value) == {"0"} else value.lower()


def _span(path: Path, at: str, raw: Any, problems: list[str]) -> _Span | None:
    if not isinstance(raw, dict):
        problems.append(f"{at}: not an object")
        return None
    trace_id = _hex_id(_field(raw, "traceId"), 32)
    span_id = _hex_id(_field(raw, "spanId"), 16)
    if trace_id is None or span_id is None:
        problems.append(
            f"{at}: traceId {_field(raw, 'traceId')!r} / spanId {_field(raw, 'spanId')!r}: a span needs "
            "a 32-hex-digit trace id and a 16-hex-digit span id (not all zeros)"
        )
        return None
    parent = _hex_id(_field(raw, "parentSpanId"), 16)
    span = _Span(
        file=str(path),
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=str(raw.get("name", "")),
        start_ns=None,
        end_ns=None,
        attributes=_attributes(raw.get("attributes")),
        service=None,
        schema_url=None,
        order=0,
    )
    span.start_ns = _nanos(span, raw, "startTimeUnixNano")
    span.end_ns = _nanos(span, raw, "endTimeUnixNano")
    return span


def _nanos(span: _Span, raw: Mapping[str, Any], name: str) -> int | None:
    value = _field(raw, name)
    if isinstance(value, bool) or value is None:
        return None
    try:
        nanos = int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: Infinity
        span.warnings.append(f"{_where(span)}: {name} {value!r} is not unix nanoseconds; time ignored")
        return None
    if nanos > MAX_NANOS:  # 10^26 failed later with "[Errno 75] Value too large"
        span.warnings.append(f"{_where(span)}: {name} {value!r} is after the year 9999; time ignored")
        return None
    return nanos if nanos > 0 else None


MAX_NANOS = 253_402_300_799 * 10**9
"""The last unix nanosecond a timestamp may hold: the end of the year 9999 (Python's datetime)."""


def _attributes(raw: Any) -> dict[str, Any]:
    """OTLP `[{key, value}]` as a plain dict of decoded values (later duplicates win)."""
    out: dict[str, Any] = {}
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict) and isinstance(item.get("key"), str):
                out[item["key"]] = _any_value(item.get("value"))
    return out


def _any_value(value: Any) -> Any:
    """An OTLP AnyValue decoded: str, bool, int, float, list, dict, bytes or None."""
    if not isinstance(value, dict) or not value:
        return None
    if "stringValue" in value or "string_value" in value:
        return _field(value, "stringValue")
    if "boolValue" in value or "bool_value" in value:
        return bool(_field(value, "boolValue"))
    if "intValue" in value or "int_value" in value:
        try:
            return int(_field(value, "intValue"))
        except (TypeError, ValueError):
            return None
    if "doubleValue" in value or "double_value" in value:
        try:
            return float(_field(value, "doubleValue"))
        except (TypeError, ValueError):
            return None
    if "arrayValue" in value or "array_value" in value:
        inner = _field(value, "arrayValue") or {}
        return [_any_value(v) for v in inner.get("values", []) or []] if isinstance(inner, dict) else None
    if "kvlistValue" in value or "kvlist_value" in value:
        inner = _field(value, "kvlistValue") or {}
        return _attributes(inner.get("values")) if isinstance(inner, dict) else None
    if "bytesValue" in value or "bytes_value" in value:
        try:
            return base64.b64decode(_field(value, "bytesValue"))
        except (TypeError, ValueError):
            return None
    return None


# --- clock skew ------------------------------------------------------------------------------


def _where(span: _Span) -> str:
    return span_where(span.file, span.trace_id, span.span_id)


def _skew_warnings(span: _Span, by_id: Mapping[tuple[str, str], _Span]) -> bool:
    """Record clock-skew warnings of `span`; True when its times cannot be trusted: it ends
    before it starts, or it starts before its parent starts or ends after its parent ends."""
    skewed = False
    if span.start_ns is not None and span.end_ns is not None and span.end_ns < span.start_ns:
        span.warnings.append(
            f"{_where(span)}: endTimeUnixNano is {(span.start_ns - span.end_ns) / 1e6:g} ms before "
            "startTimeUnixNano (clock skew); its latency is unknown and it labels nothing"
        )
        skewed = True
    parent = by_id.get((span.trace_id, span.parent_span_id)) if span.parent_span_id else None
    if parent is not None and _outside(span.start_ns, span.end_ns, parent.start_ns, parent.end_ns):
        span.warnings.append(
            f"{_where(span)}: startTimeUnixNano/endTimeUnixNano lie outside its parent span "
            f"{parent.span_id} (clock skew between hosts?); it labels nothing"
        )
        skewed = True
    return skewed


def _outside(start: int | None, end: int | None, parent_start: int | None, parent_end: int | None) -> bool:
    """True when all four times are known and [start, end] is not inside [parent_start, parent_end]."""
    if start is None or end is None or parent_start is None or parent_end is None:
        return False
    return start < parent_start or end > parent_end


# --- conventions -----------------------------------------------------------------------------


def _operation(span: _Span, skewed: bool) -> tuple[MemoryOp | None, int]:
    """The memory operation `span` records (None for any other span) and 1 for an ignored
    store lifecycle span."""
    attrs = span.attributes
    operation = attrs.get(OPERATION)
    common: dict[str, Any] = {
        "file": span.file,
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "service": span.service,
        "schema_url": span.schema_url,
        "skewed": skewed,
    }
    if operation in MEMORY_OPERATIONS or operation == "retrieval" or attrs.get(OI_KIND) is not None:
        common.update(  # the query log holds them
            service=_text(span, "resource attribute service.name", span.service),
            schema_url=_text(span, "schemaUrl", span.schema_url),
        )
    if operation in MEMORY_OPERATIONS:
        _unknown(span, "gen_ai.memory.", MEMORY_ATTRIBUTES)
        if operation in _STORE_LIFECYCLE:
            return None, 1
        store = _store(span, "gen_ai.memory.store.id")
        common.update(convention="gen_ai.memory", operation=operation, store_id=store)
        if operation == "search_memory":
            return _search(span, common, "gen_ai.memory.query.text", "gen_ai.memory.records"), 0
        records = _records(span, "gen_ai.memory.records", attrs.get("gen_ai.memory.records"))
        single = attrs.get("gen_ai.memory.record.id")
        named = (
            [str(single)]
            if isinstance(single, (str, int)) and _text(span, "gen_ai.memory.record.id", str(single))
            else []
        )
        targets = tuple(dict.fromkeys([*named, *(r.id for r in records or () if not r.placeholder)]))
        if operation == "delete_memory":
            if not targets:
                span.warnings.append(
                    f"{_where(span)}: gen_ai.memory.record.id missing: a delete_memory naming no record "
                    "may delete the whole store; not guessed, so it labels nothing"
                )
                return None, 0
            return MemoryOp(kind="delete", targets=targets, **common), 0
        written = tuple(r for r in records or () if not r.placeholder)
        if named and not any(r.id == named[0] for r in written):
            written = (Record(id=named[0], score=None, content=None), *written)
        if not written:
            span.warnings.append(
                f"{_where(span)}: gen_ai.memory.record.id missing: the {operation} names no record; "
                "it labels nothing"
            )
            return None, 0
        return MemoryOp(kind="write", records=written, targets=targets, **common), 0
    if operation == "retrieval":
        _unknown(span, "gen_ai.retrieval.", RETRIEVAL_ATTRIBUTES)
        store = _text(span, DATA_SOURCE, str(attrs.get(DATA_SOURCE) or "")) or ""
        common.update(convention="gen_ai.retrieval", operation="retrieval", store_id=store)
        return _search(span, common, "gen_ai.retrieval.query.text", "gen_ai.retrieval.documents"), 0
    if isinstance(attrs.get(OI_KIND), str) and attrs[OI_KIND].upper() == "RETRIEVER":
        common.update(convention="openinference", operation="RETRIEVER", store_id="")
        return _openinference_search(span, common), 0
    return None, 0


def _unknown(span: _Span, prefix: str, known: frozenset[str]) -> None:
    for key in sorted(span.attributes):
        if key in _RENAMED:
            span.warnings.append(
                f"{_where(span)}: {key} is not in the conventions read (it is {_RENAMED[key]} now); ignored"
            )
        elif key.startswith(prefix) and key not in known:
            span.warnings.append(
                f"{_where(span)}: {key} is not an attribute of the conventions read; ignored"
            )


def _store(span: _Span, attribute: str) -> str:
    value = span.attributes.get(attribute)
    if not isinstance(value, str) or not value:
        span.warnings.append(f"{_where(span)}: {attribute} missing; grouped under the store ''")
        return ""
    return _text(span, attribute, value) or ""


def _top_k(span: _Span) -> int | None:
    value = span.attributes.get(TOP_K)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)  # inf and nan were tracebacks
        or value != int(value)
        or value < 1
    ):
        span.warnings.append(f"{_where(span)}: {TOP_K} {value!r} is not a positive whole number; ignored")
        return None
    return int(value)


def _query(span: _Span, attribute: str) -> str | None:
    value = span.attributes.get(attribute)
    if isinstance(value, str) and value.strip():
        return _text(span, attribute, value)
    span.warnings.append(
        f"{_where(span)}: {attribute} missing (it is opt-in): the search is scored but cannot become "
        "a scenario"
    )
    return None


def _search(span: _Span, common: dict[str, Any], query_attr: str, records_attr: str) -> MemoryOp | None:
    query = _query(span, query_attr)
    raw = span.attributes.get(records_attr)
    if raw is None:
        count = span.attributes.get("gen_ai.memory.record.count")
        if count == 0:
            return MemoryOp(kind="search", query=query, top_k=_top_k(span), **common)
        span.warnings.append(
            f"{_where(span)}: {records_attr} missing (it is opt-in): the returned records are unknown; "
            "span skipped"
        )
        return None
    records = _records(span, records_attr, raw)
    if records is None:
        return None
    return MemoryOp(kind="search", query=query, top_k=_top_k(span), records=_deduped(span, records), **common)


def _records(span: _Span, attribute: str, raw: Any) -> tuple[Record, ...] | None:
    """The records of a structured array or a JSON string (None, warned, when unreadable)."""
    if raw is None:
        return ()
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            span.warnings.append(f"{_where(span)}: {attribute} is a string but not JSON; span skipped")
            return None
    if not isinstance(raw, list):
        span.warnings.append(f"{_where(span)}: {attribute} is not an array of records; span skipped")
        return None
    out: list[Record] = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            span.warnings.append(f"{_where(span)}: {attribute}[{index}] is not an object; record skipped")
            continue
        out.append(
            _record(span, f"{attribute}[{index}]", index, item.get("id"), item.get("score"), item, "content")
        )
    return tuple(out)


def _record(
    span: _Span, where: str, index: int, raw_id: Any, raw_score: Any, item: Mapping[str, Any], key: str
) -> Record:
    score: float | None = None
    if raw_score is not None:
        if (
            isinstance(raw_score, (int, float))
            and not isinstance(raw_score, bool)
            and math.isfinite(raw_score)
        ):
            score = float(raw_score)
        else:
            span.warnings.append(
                f"{_where(span)}: {where}.score {raw_score!r} is not a finite number; dropped"
            )
    content = _text(span, f"{where}.{key}", _content(item.get(key))) if key in item else None
    if isinstance(raw_id, str):
        _text(span, f"{where}.id", raw_id)
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or not str(raw_id):
        placeholder = f"unidentified/{span.span_id}/{index + 1}"
        span.warnings.append(
            f"{_where(span)}: {where}.id missing: the record keeps rank {index + 1} as {placeholder}, "
            "which no label can name"
        )
        return Record(id=placeholder, score=score, content=content, placeholder=True)
    return Record(id=str(raw_id), score=score, content=content)


def _text(span: _Span, where: str, value: Any) -> str | None:
    """`value` when it is text UTF-8 can hold, else None: not a str, or (an error of the span,
    naming `where`) holding a lone UTF-16 surrogate, which no file the import writes can hold."""
    if not isinstance(value, str):
        return None
    problem = lone_surrogate(value)
    if problem is not None:
        span.errors.append(
            f"{_where(span)}: {where} holds a {problem}; fix the exporter (a \\uD800-\\uDFFF escape must "
            "be followed by its pair) or remove the span"
        )
        return None
    return value


def _content(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _deduped(span: _Span, records: Iterable[Record]) -> tuple[Record, ...]:
    seen: set[str] = set()
    out: list[Record] = []
    for rank, record in enumerate(records, start=1):
        if record.id in seen:
            span.warnings.append(
                f"{_where(span)}: record {record.id!r} is returned again at rank {rank}; the first is kept"
            )
            continue
        seen.add(record.id)
        out.append(record)
    return tuple(out)


def _openinference_search(span: _Span, common: dict[str, Any]) -> MemoryOp | None:
    query = _query(span, OI_INPUT)
    documents: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        if not key.startswith(OI_DOCUMENTS):
            continue
        index_text, _, rest = key[len(OI_DOCUMENTS) :].partition(".")
        name = rest.removeprefix("document.")
        if not index_text.isdigit() or not rest.startswith("document.") or name not in OI_DOCUMENT_FIELDS:
            span.warnings.append(
                f"{_where(span)}: {key} is not an attribute of the conventions read; ignored"
            )
            continue
        documents.setdefault(int(index_text), {})[name] = value
    if not documents:
        span.warnings.append(
            f"{_where(span)}: retrieval.documents.0.document.id missing: the returned documents are "
            "unknown; span skipped"
        )
        return None
    records = [
        _record(
            span, f"retrieval.documents.{i}.document", rank, doc.get("id"), doc.get("score"), doc, "content"
        )
        for rank, (i, doc) in enumerate(sorted(documents.items()))
    ]
    expected = list(range(len(documents)))
    if sorted(documents) != expected:
        span.warnings.append(
            f"{_where(span)}: retrieval.documents indices {sorted(documents)} are not "
            f"0..{len(documents) - 1}; "
            "ranked in index order"
        )
    return MemoryOp(kind="search", query=query, top_k=_top_k(span), records=_deduped(span, records), **common)
