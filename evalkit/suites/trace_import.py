"""`import_traces`: turn the searches of OpenTelemetry traces into files `evalkit score` reads —
a run file, a scenario suite carrying the labels, and a query log — so production retrieval is
scored, gated and shown exactly like any other run.

Written into the output directory (`IMPORT_FILES`), atomically and only after everything was
read and checked (on any error nothing is written):
- `run.jsonl`: evalkit's JSONL run format (`evalkit.suites.runfiles`), one line per search:
  `{"query_id": "<trace id>/<span id>", "results": [{"id", "relevance": <span score>}]}`, best
  first. Never holds user text (ids and scores only).
- `suite.yaml` and `scenarios/<store>-labelled.json` / `<store>-unlabelled.json`: a scenario
  suite the loader accepts, one category per memory store (the store id; `(none)` for searches
  without one). A store's records are its thoughts (every record id its searches returned,
  deleted, wrote or a label names); each search is a query with its id, its labels (`relevant`
  from the label file, `forbid` from the rules, see `evalkit.suites.trace_labels`) and `top_k`
  = the larger of its results and its requested top_k. Labelled searches (relevant ids given)
  go into `<store>-labelled`, the only scenarios the metrics average; the others into the
  measure-only `<store>-unlabelled`, where their forbids are still asserted (and gate). So the
  console's per-scenario table shows how many searches were labelled (and `replay_notes` puts it
  in the score report's notes). No shared distractors.
- `queries.json`: the query log (`QUERY_LOG_FORMAT`): whether the files hold user text, the
  conventions read, the files read (with sha256), every warning, and one entry per search with
  the fields of `QUERY_LOG_FIELDS` (see `evalkit.views.traces` for the frames built from it).

Privacy: without `with_content` no text leaves the traces: thoughts have empty content,
queries an empty `query` (the log keeps its length), and every file says
`holds user text: no`. With it, thoughts carry the latest content the traces show for the
record (`latest_contents`) and queries their text.

Decisions: the output directory must be empty, absent, or an earlier import (it holds
`queries.json` of `QUERY_LOG_FORMAT`); an earlier import's files are replaced, all at once
(`_write_whole`: a Ctrl-C leaves the earlier import as it was, never a mix of two imports). Store
ids become scenario names by `slug` (`-<sha256 prefix>` added if two stores share one). A
record id the rules or labels name but no search returned is still seeded, with the content the
traces show for it (or none). Placeholder ids (records without ids) are seeded like any id.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from evalkit.errors import DatasetError, OutputError, UsageError
from evalkit.files import os_reason, replace_parts, signals_held, write_atomic
from evalkit.records import MAX_TOP_K
from evalkit.scenarios import Scenario
from evalkit.scenarios.loading import SCENARIOS_SUBDIR
from evalkit.suites.readers import slug
from evalkit.suites.runfiles import RunHit, RunLine
from evalkit.suites.trace_labels import QueryLabels, label_searches, read_labels
from evalkit.suites.traces import CONVENTIONS, MemoryOp, TraceSet, read_traces
from evalkit.wording import counted

QUERY_LOG = "queries.json"
RUN_FILE = "run.jsonl"
SUITE_FILE = "suite.yaml"
IMPORT_FILES: tuple[str, ...] = (RUN_FILE, QUERY_LOG, SUITE_FILE, SCENARIOS_SUBDIR)
"""What `import_traces` writes into its output directory."""

QUERY_LOG_FORMAT = "evalkit.trace-queries/1"
"""The `format` of a query log this module writes (and `evalkit.views.traces` reads)."""

QUERY_LOG_FIELDS: tuple[str, ...] = (
    "query_id",
    "trace_id",
    "span_id",
    "parent_span_id",
    "file",
    "convention",
    "operation",
    "store_id",
    "service",
    "schema_url",
    "start",
    "start_unix_nano",
    "latency_ms",
    "top_k",
    "result_count",
    "results",
    "degenerate",
    "labelled",
    "relevant",
    "forbid",
    "forbidden_returned",
    "stale",
    "stale_rate",
    "stale_unknown",
    "query",
    "query_chars",
    "scenario",
)
"""One query log entry's keys. `start` is ISO-8601 UTC; `latency_ms` None when a time is missing
or skewed; `results` the returned ids best first; `degenerate` the ranking's defects
(`DEGENERATE`); `forbidden_returned` the forbidden ids it returned (a failure the rules found);
`stale_rate` = stale ids / results (0 without results); `query` None without content;
`scenario` the scenario that holds it."""

DEGENERATE: Mapping[str, str] = {
    "empty": "no result",
    "unscored": "no result carries a score",
    "tied": "two or more results, all with the same score",
    "unsorted": "a score rises further down the ranking",
    "unidentified": "a result without an id (a placeholder)",
}
"""The ranking defects a query log entry may list, each needing no label."""

NO_STORE = "(none)"
"""The category of searches whose span names no store."""


@dataclass(frozen=True)
class ImportCounts:
    """What an import holds, as `evalkit import traces` reports it: the number of searches, of
    labelled ones and of ones with a forbid, the stores, every warning, and whether the files
    hold user text. Computed once, by `plan_import` (`ImportPlan.counts`); `TraceImport` is these
    numbers plus where they were written."""

    searches: int
    labelled: int
    forbidden: int
    stores: tuple[str, ...]
    warnings: tuple[str, ...]
    holds_user_text: bool


@dataclass(frozen=True)
class ImportPlan:
    """Everything an import writes, computed before anything is written: file name (relative
    to the output directory) → text, and the `counts` the import reports."""

    texts: Mapping[str, str]
    counts: ImportCounts


@dataclass(frozen=True)
class TraceImport(ImportCounts):
    """What `import_traces` did: its plan's counts (`ImportCounts`), the output directory and
    the files written."""

    out: Path
    files: tuple[Path, ...]

    @classmethod
    def written(cls, counts: ImportCounts, out: Path, files: Sequence[Path]) -> TraceImport:
        """`counts` as written into `out` (`files`)."""
        values = {f.name: getattr(counts, f.name) for f in fields(ImportCounts)}
        return cls(**values, out=out, files=tuple(files))

    def summary(self) -> str:
        text = "yes (--with-content)" if self.holds_user_text else "no"
        return (
            f"imported {self.searches} searches from {counted(len(self.stores), 'store')} into {self.out}: "
            f"{self.labelled} labelled, {self.forbidden} with a forbid from a later delete, "
            f"{counted(len(self.warnings), 'warning')}; holds user text: {text}"
        )


def import_traces(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    labels: str | Path | None = None,
    rules: bool = True,
    with_content: bool = False,
) -> TraceImport:
    """Read the OTLP JSON files `paths`, label their searches (`labels`: a label file; `rules`:
    the rules of `evalkit.suites.trace_labels`) and write the files of the module docstring
    into `out`. DatasetError for bad traces or labels or traces without any search span,
    UsageError for an output directory that holds something else; nothing is written then."""
    target = Path(out)
    _check_out(target)
    traces = read_traces(paths)
    if not traces.searches:
        raise DatasetError(
            f"no search span in {', '.join(map(str, paths))} ({traces.spans} spans read); evalkit reads "
            "search_memory and retrieval spans (gen_ai.operation.name) and OpenInference RETRIEVER spans; "
            "nothing was written",
            list(traces.warnings),
        )
    explicit = read_labels(labels) if labels is not None else None
    plan = plan_import(traces, explicit, rules=rules, with_content=with_content, label_file=labels)
    _write_whole(target, plan.texts)
    return TraceImport.written(plan.counts, target, [target / name for name in plan.texts])


def _write_whole(target: Path, texts: Mapping[str, str]) -> None:
    """Write `texts` (relative path → text) as the import in `target`, whole or not at all, also
    under Ctrl-C: into a temporary sibling folder first, whose parts (`IMPORT_FILES`) then
    replace an earlier import's by renames (`evalkit.files.replace_parts`), or which becomes
    `target` when there is none. An earlier import's scenario files go with its `scenarios/`;
    any other file there (a note of the user's) is carried over; files beside the parts are kept.
    The temporary folder is removed on every path."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.import-"))
    except OSError as exc:
        raise OutputError(f"cannot write the import into {target}: {os_reason(exc)}") from None
    try:
        for name, text in texts.items():
            write_atomic(build / name, text)
        earlier = target / SCENARIOS_SUBDIR
        if earlier.is_dir():
            for own in earlier.iterdir():
                if own.is_file() and own.suffix != ".json":
                    shutil.copy2(own, build / SCENARIOS_SUBDIR / own.name)
        if target.exists():
            replace_parts(build, target, IMPORT_FILES)
        else:
            with signals_held():
                build.rename(target)
    finally:
        shutil.rmtree(build, ignore_errors=True)


def _check_out(target: Path) -> None:
    if not target.exists():
        return
    if not target.is_dir():
        raise UsageError(f"--out {target} is a file; give a directory for the imported run and suite")
    if not any(target.iterdir()):
        return
    log = target / QUERY_LOG
    try:
        earlier = json.loads(log.read_text(encoding="utf-8")).get("format") if log.is_file() else None
    except (OSError, ValueError, AttributeError):
        earlier = None
    if earlier != QUERY_LOG_FORMAT:
        raise UsageError(
            f"--out {target} is not empty and holds no earlier trace import ({QUERY_LOG}); "
            "give an empty or new directory"
        )


def plan_import(
    traces: TraceSet,
    explicit: Mapping[str, Sequence[str]] | None = None,
    *,
    rules: bool = True,
    with_content: bool = False,
    label_file: str | Path | None = None,
) -> ImportPlan:
    """The files an import of `traces` writes (module docstring), without writing them.
    DatasetError when `explicit` names a query that is not a search."""
    labels, label_warnings = label_searches(traces, explicit, rules=rules, label_file=label_file)
    searches = traces.searches
    stores = tuple(dict.fromkeys(op.store_id for op in searches))
    names = _scenario_names(stores)
    contents = latest_contents(traces)
    held = "yes (imported with --with-content)" if with_content else "no (imported without --with-content)"
    texts: dict[str, str] = {}
    run_lines = [
        RunLine(
            query_id=op.query_id,
            results=[RunHit(id=r.id, relevance=r.score if r.score is not None else 0.0) for r in op.records],
        ).model_dump_json(exclude_defaults=True)
        for op in searches
    ]
    texts[RUN_FILE] = "".join(f"{line}\n" for line in run_lines)
    categories = [_category(store) for store in stores]
    texts[SUITE_FILE] = yaml.safe_dump({"categories": categories}, sort_keys=False, allow_unicode=True)
    entries: list[dict[str, Any]] = []
    for store in stores:
        own = [op for op in searches if op.store_id == store]
        ids = _store_ids(traces, store, labels, own)
        thoughts = [
            {"id": i, "content": (contents.get((store, i)) or "") if with_content else ""} for i in ids
        ]
        for labelled in (True, False):
            chosen = [op for op in own if labels[op.query_id].labelled == labelled]
            if not chosen:
                continue
            name = f"{names[store]}-{'labelled' if labelled else 'unlabelled'}"
            kind = "labelled (relevant ids from the label file)" if labelled else "unlabelled (measured only)"
            scenario = {
                "name": name,
                "category": _category(store),
                "description": (
                    f"Searches of memory store {store or NO_STORE!r} imported from OpenTelemetry traces: "
                    f"{len(chosen)} {kind} of {len(own)}. Holds user text: {held}."
                ),
                "measure_only": not labelled,
                "distractors": False,
                "thoughts": thoughts,
                "queries": [_query(op, labels[op.query_id], with_content) for op in chosen],
            }
            Scenario.model_validate(scenario)
            texts[f"{SCENARIOS_SUBDIR}/{name}.json"] = (
                json.dumps(scenario, indent=1, ensure_ascii=False) + "\n"
            )
            entries += [_log_entry(op, labels[op.query_id], with_content, name) for op in chosen]
    entries.sort(key=lambda e: (e["start_unix_nano"] is None, e["start_unix_nano"] or 0))
    warnings = (*traces.warnings, *label_warnings)
    log = {
        "format": QUERY_LOG_FORMAT,
        "holds_user_text": with_content,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "conventions": dict(CONVENTIONS),
        "sources": [{"file": f, "sha256": digest} for f, digest in traces.files],
        "spans_read": traces.spans,
        "store_lifecycle_spans_ignored": traces.ignored,
        "rules": rules,
        "label_file": str(label_file) if label_file is not None else None,
        "warnings": list(warnings),
        "queries": entries,
    }
    texts[QUERY_LOG] = json.dumps(log, indent=1, ensure_ascii=False) + "\n"
    counts = ImportCounts(
        searches=len(searches),
        labelled=sum(1 for q in labels.values() if q.labelled),
        forbidden=sum(1 for q in labels.values() if q.forbid),
        stores=stores,
        warnings=warnings,
        holds_user_text=with_content,
    )
    return ImportPlan(texts=texts, counts=counts)


def _category(store: str) -> str:
    return store or NO_STORE


def _scenario_names(stores: Sequence[str]) -> dict[str, str]:
    """A scenario-name stem per store: its slug, made unique with a digest suffix."""
    stems = {store: slug(store) or "no-store" for store in stores}
    counts: dict[str, int] = {}
    for stem in stems.values():
        counts[stem] = counts.get(stem, 0) + 1
    return {
        store: stem if counts[stem] == 1 else f"{stem}-{hashlib.sha256(store.encode()).hexdigest()[:8]}"
        for store, stem in stems.items()
    }


def latest_contents(traces: TraceSet) -> dict[tuple[str, str], str]:
    """(store, record id) → the latest content the traces show for the record: the latest a
    write gave it, else (never written in the traces) the latest a search returned; by end
    time. A search may return stale content, so a write always wins."""
    out: dict[tuple[str, str], str] = {}
    for op in sorted(traces.operations, key=_content_order):
        for record in op.records:
            if record.content is not None:
                out[(op.store_id, record.id)] = record.content
    return out


def _content_order(op: MemoryOp) -> tuple[bool, bool, int]:
    """Searches before writes, each by end time (unknown first)."""
    return op.kind == "write", op.end_ns is not None, op.end_ns or 0


def _store_ids(
    traces: TraceSet, store: str, labels: Mapping[str, QueryLabels], searches: Sequence[MemoryOp]
) -> list[str]:
    """Every record id of `store`, in order of first appearance (searches' results, then what
    deletes, writes and labels name)."""
    ids: dict[str, None] = {}
    for op in traces.operations:
        if op.store_id == store:
            ids.update(dict.fromkeys(r.id for r in op.records))
            ids.update(dict.fromkeys(op.targets))
    for op in searches:
        ids.update(dict.fromkeys(labels[op.query_id].relevant))
        ids.update(dict.fromkeys(labels[op.query_id].forbid))
    return list(ids)


def query_top_k(op: MemoryOp) -> int | None:
    """The top_k an imported search is replayed at: the larger of its result count and its
    requested top_k (None when both are 0/absent), capped at MAX_TOP_K."""
    k = max(len(op.records), op.top_k or 0)
    return min(k, MAX_TOP_K) if k else None


def _query(op: MemoryOp, labels: QueryLabels, with_content: bool) -> dict[str, Any]:
    query: dict[str, Any] = {"id": op.query_id, "query": (op.query or "") if with_content else ""}
    if labels.relevant:
        query["relevant"] = list(labels.relevant)
    if labels.forbid:
        query["forbid"] = list(labels.forbid)
    top_k = query_top_k(op)
    if top_k is not None:
        query["top_k"] = top_k
    return query


def degenerate(op: MemoryOp) -> list[str]:
    """The `DEGENERATE` defects of a search's ranking, in that order."""
    if not op.records:
        return ["empty"]
    out: list[str] = []
    scores = [r.score for r in op.records]
    known = [s for s in scores if s is not None]
    if not known:
        out.append("unscored")
    elif len(op.records) > 1 and len(known) == len(scores) and len(set(known)) == 1:
        out.append("tied")
    if any(b > a for a, b in itertools.pairwise(known)):
        out.append("unsorted")
    if any(r.placeholder for r in op.records):
        out.append("unidentified")
    return out


def _log_entry(op: MemoryOp, labels: QueryLabels, with_content: bool, scenario: str) -> dict[str, Any]:
    results = [r.id for r in op.records]
    start = (
        datetime.fromtimestamp(op.start_ns / 1e9, UTC).isoformat(timespec="microseconds")
        if op.start_ns is not None
        else None
    )
    latency = op.latency_ms if not op.skewed else None
    return {
        "query_id": op.query_id,
        "trace_id": op.trace_id,
        "span_id": op.span_id,
        "parent_span_id": op.parent_span_id,
        "file": op.file,
        "convention": op.convention,
        "operation": op.operation,
        "store_id": op.store_id,
        "service": op.service,
        "schema_url": op.schema_url,
        "start": start,
        "start_unix_nano": op.start_ns,
        "latency_ms": latency if latency is None or math.isfinite(latency) else None,
        "top_k": op.top_k,
        "result_count": len(results),
        "results": results,
        "degenerate": degenerate(op),
        "labelled": labels.labelled,
        "relevant": list(labels.relevant),
        "forbid": list(labels.forbid),
        "forbidden_returned": [r for r in results if r in labels.forbid],
        "stale": list(labels.stale),
        "stale_rate": len(labels.stale) / len(results) if results else 0.0,
        "stale_unknown": labels.stale_unknown,
        "query": op.query if with_content else None,
        "query_chars": len(op.query) if op.query is not None else None,
        "scenario": scenario,
    }


def replay_notes(datasets: str | Path) -> tuple[str, ...]:
    """The report note of a suite that is a trace import (`datasets` holds a query log of
    `QUERY_LOG_FORMAT`): how many searches were labelled, how many are measured without labels,
    and whether the import holds user text. () for any other suite (or an unreadable log: the
    suite itself was loaded, so the run goes on without the note)."""
    log = Path(datasets) / QUERY_LOG
    try:
        data = json.loads(log.read_text(encoding="utf-8")) if log.is_file() else None
    except (OSError, ValueError):
        return ()
    if not isinstance(data, dict) or data.get("format") != QUERY_LOG_FORMAT:
        return ()
    queries = data.get("queries") or []
    labelled = sum(1 for q in queries if isinstance(q, dict) and q.get("labelled"))
    text = "yes" if data.get("holds_user_text") else "no"
    return (
        f"production replay of {len(queries)} searches imported from OpenTelemetry traces: {labelled} "
        f"labelled (scored on recall, precision, MRR), {len(queries) - labelled} measured without labels "
        f"(latency, result count, degenerate rankings, stale-fact rate: see {log}); holds user text: {text}",
    )
