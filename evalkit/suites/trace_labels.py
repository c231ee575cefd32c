"""Labels for searches read from traces: from what happened later in the same store, by
documented rules, and from an explicit label file, which always wins.

Rules (`rules=True`, the default; each can only add labels, never remove a person's):
- **deleted → forbid**: a record deleted by a `delete_memory` of the same store that ended
  before a search started is forbidden for that search, unless a write (`create_memory`,
  `update_memory`, `upsert_memory`) of the record ended in between (it exists again).
- **updated → stale**: a record a search returned is *stale* when a write of the record ended
  before the search started and gave it content other than what the search returned (both
  contents must be in the traces; otherwise staleness is unknown and not counted).
Ordering needs trustworthy times: an operation without both times, or flagged for clock skew
(see `evalkit.suites.traces`), labels nothing, and a delete that overlaps a search in time
leaves their order unknown, so it labels nothing either. Each such case is a warning naming
both spans when it concerns a record the search returned.

The **label file** (`read_labels`) says, per query id (`<trace id>/<span id>`, as in the run
file), which record ids are relevant; a person wrote it, so it wins: an id it calls relevant is
never forbidden by a rule. Two formats, by suffix: `.jsonl`/`.json`, one
`{"query_id": ..., "relevant": [...]}` per line; anything else TREC qrels
(`qid 0 docid grade`, grade > 0 = relevant). A query id that is not a search of the traces is an
error (a typo must not leave a query silently unlabelled).

A search is **labelled** when the label file gives it relevant ids: only those are scored on
recall, precision and MRR. The others are scored on what needs no labels (latency, result
count, degenerate rankings, stale-fact rate) and on their forbids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import DatasetError
from evalkit.suites.readers import json_lines
from evalkit.suites.traces import MemoryOp, TraceSet
from evalkit.validation import SURROGATE_FIX, lone_surrogate
from evalkit.wording import counted


@dataclass(frozen=True)
class QueryLabels:
    """The labels of one search: `relevant` (label file), `forbid` (deleted records, minus what
    the label file calls relevant) and `stale` (returned records whose content had been
    replaced). `stale_unknown` counts returned records rewritten before the search whose old or
    new content is not in the traces (their staleness cannot be judged)."""

    relevant: tuple[str, ...] = ()
    forbid: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    stale_unknown: int = 0

    @property
    def labelled(self) -> bool:
        return bool(self.relevant)


def read_labels(path: str | Path) -> dict[str, tuple[str, ...]]:
    """The label file `path` (module docstring) as query id → relevant ids in file order.
    DatasetError listing every problem (a missing file, a malformed line, a query given twice
    in the JSONL format, a non-integer grade)."""
    file = Path(path)
    if not file.is_file():
        raise DatasetError(f"label file {file} not found; pass a JSONL or TREC qrels file")
    problems: list[str] = []
    labels: dict[str, list[str]] = {}
    if file.suffix.lower() in (".jsonl", ".json"):
        for number, obj in json_lines(file, problems):
            where = f"{file} line {number}"
            qid = obj.get("query_id") if isinstance(obj, dict) else None
            relevant = obj.get("relevant") if isinstance(obj, dict) else None
            if (
                not isinstance(qid, str)
                or not isinstance(relevant, list)
                or not all(isinstance(r, str) and r for r in relevant)
                or set(obj) - {"query_id", "relevant"}
            ):
                problems.append(
                    f'{where}: expected {{"query_id": "<trace>/<span>", "relevant": ["<id>", ...]}}'
                )
                continue
            texts = [("query_id", qid), *((f"relevant[{i}]", r) for i, r in enumerate(relevant))]
            bad = [(at, problem) for at, text in texts if (problem := lone_surrogate(text)) is not None]
            if bad:
                problems += [f"{where}: {at} holds a {problem}; {SURROGATE_FIX}" for at, problem in bad]
                continue
            if qid in labels:
                problems.append(f"{where}: query id {qid!r} again; give each query one line")
                continue
            labels[qid] = list(dict.fromkeys(relevant))
    else:
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:  # a traceback before
            raise DatasetError(
                f"label file {file} is not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
                "save it as UTF-8"
            ) from None
        for number, raw in enumerate(text.splitlines(), start=1):
            fields = raw.split()
            if not fields:
                continue
            if len(fields) != 4 or not fields[3].lstrip("-").isdigit():
                problems.append(
                    f"{file} line {number}: a qrels line is 'qid 0 docid grade' (grade an integer)"
                )
                continue
            qid, _, doc, grade = fields
            entry = labels.setdefault(qid, [])
            if int(grade) > 0 and doc not in entry:
                entry.append(doc)
    if problems:
        raise DatasetError(f"label file {file} is invalid ({counted(len(problems), 'problem')})", problems)
    return {qid: tuple(ids) for qid, ids in labels.items()}


def label_searches(
    traces: TraceSet,
    explicit: Mapping[str, Sequence[str]] | None = None,
    *,
    rules: bool = True,
    label_file: str | Path | None = None,
) -> tuple[dict[str, QueryLabels], tuple[str, ...]]:
    """Labels of every search of `traces` by query id, and the warnings the rules raised
    (module docstring). `explicit` is a label file's content (`read_labels`), `label_file` its
    name for messages. DatasetError when `explicit` names a query that is not a search."""
    searches = {op.query_id: op for op in traces.searches}
    explicit = dict(explicit or {})
    unknown = [qid for qid in explicit if qid not in searches]
    if unknown:
        where = f"label file {label_file}" if label_file else "labels"
        shown = ", ".join(list(searches)[:3]) or "none"
        raise DatasetError(
            f"{where} names {counted(len(unknown), 'query id')} that are not searches of the traces; "
            "nothing was written",
            [
                f"{qid}: no search span with this <trace id>/<span id> (they look like {shown})"
                for qid in unknown
            ],
        )
    warnings: list[str] = []
    out: dict[str, QueryLabels] = {}
    timed = [op for op in traces.operations if op.kind != "search"]
    if rules:
        warnings += [
            f"{op.where()}: startTimeUnixNano/endTimeUnixNano missing: the {op.operation} cannot be "
            "ordered and labels nothing"
            for op in timed
            if op.start_ns is None or op.end_ns is None
        ]
    for qid, search in searches.items():
        relevant = tuple(explicit.get(qid, ()))
        forbid: tuple[str, ...] = ()
        stale: tuple[str, ...] = ()
        unjudged = 0
        if rules:
            forbid, stale, unjudged = _rule_labels(search, timed, warnings)
            forbid = tuple(r for r in forbid if r not in relevant)
        out[qid] = QueryLabels(relevant=relevant, forbid=forbid, stale=stale, stale_unknown=unjudged)
    return out, tuple(warnings)


def _times(op: MemoryOp) -> tuple[int, int] | None:
    """(start, end) of an operation whose times can be trusted, else None."""
    if op.start_ns is None or op.end_ns is None or op.skewed:
        return None
    return op.start_ns, op.end_ns


def _rule_labels(
    search: MemoryOp, others: Sequence[MemoryOp], warnings: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """(forbid, stale, records whose staleness is unknown) of one search from the other
    operations of its store."""
    returned = {r.id: r for r in search.records}
    span = _times(search)
    if span is None:
        return (), (), 0
    start, end = span
    last: dict[str, tuple[int, MemoryOp]] = {}  # record id → (end, its latest delete or write before `start`)
    for op in others:
        if op.store_id != search.store_id:
            continue
        touched = op.targets if op.kind == "delete" else tuple(r.id for r in op.records)
        hit = ", ".join(t for t in touched if t in returned)
        times = _times(op)
        if times is None:
            if hit and op.start_ns is not None and op.start_ns <= start:
                warnings.append(
                    f"{op.where()}: the {op.operation} of {hit} cannot be ordered (clock skew or a "
                    f"missing time); not used to label search {search.query_id}"
                )
            continue
        op_start, op_end = times
        if op_end <= start:
            for record_id in touched:
                if record_id not in last or last[record_id][0] <= op_end:
                    last[record_id] = (op_end, op)
        elif op_start < end and op.kind == "delete" and hit:
            warnings.append(
                f"{op.where()}: the delete_memory of {hit} overlaps search {search.query_id} in time; "
                "their order is unknown, so no forbid"
            )
    forbid = tuple(record_id for record_id, (_, op) in last.items() if op.kind == "delete")
    stale: list[str] = []
    unknown = 0
    for record_id, record in returned.items():
        entry = last.get(record_id)
        if entry is None or entry[1].kind != "write":
            continue
        new = next((r.content for r in entry[1].records if r.id == record_id), None)
        if new is None or record.content is None:
            unknown += 1
        elif new != record.content:
            stale.append(record_id)
    return forbid, tuple(stale), unknown
