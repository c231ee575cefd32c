"""From a production failure to a regression scenario: `trace_scenario` turns searches read
from OpenTelemetry traces into one scenario of the built-in format, so the failure becomes a
permanent test.

What is chosen: a query id (`<trace id>/<span id>`) names one search, failing or not; a trace
id names every *failing* search of that trace (DatasetError when it has none: pass a query id to
keep a passing one). A search fails when it returned a forbidden record (deleted earlier, see
`evalkit.suites.trace_labels`) or, when labelled, left a relevant record out.

What is written: the records each chosen search returned (in rank order), then those it should
have returned (`relevant`) and the forbidden ones, as thoughts with the content the search
returned, else the latest content the traces show for the record (empty, with a warning, when
the traces hold none); one query per search with its text, `relevant`, `forbid` and `top_k`
(as `evalkit.suites.trace_import.query_top_k`). No shared distractors (the scenario is the
production world as far as the traces show it). A scenario whose searches have no relevant ids
is `measure_only` (its forbids still assert and gate). The description names the trace, the
files and says that the scenario holds user text.

Privacy: a scenario needs the query and record texts, so building one requires
`with_content=True` (UsageError otherwise): the caller opts in to copying user text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from evalkit.errors import DatasetError, UsageError
from evalkit.files import read_regular, write_atomic
from evalkit.scenarios import Scenario
from evalkit.scenarios.loading import SCENARIOS_SUBDIR
from evalkit.scenarios.model import BUILTIN_CATEGORIES
from evalkit.scenarios.parsing import parse_text
from evalkit.scenarios.references import scenario_problems
from evalkit.suites.trace_import import latest_contents, query_top_k
from evalkit.suites.trace_labels import QueryLabels, label_searches, read_labels
from evalkit.suites.traces import MemoryOp, TraceSet, read_traces
from evalkit.validation import field_problems

DEFAULT_CATEGORY = "retrieval-quality"
"""The category of a written scenario unless the caller names one (a built-in category, so the
scenario fits the built-in suite)."""

_TRACE_ID = re.compile(r"^[0-9a-fA-F]{32}$")
_QUERY_ID = re.compile(r"^[0-9a-fA-F]{32}/[0-9a-fA-F]{16}$")


@dataclass(frozen=True)
class TraceScenario:
    """A scenario built from traces: its data (the scenario file's mapping), the query ids it
    holds, and warnings (records whose content the traces do not hold)."""

    data: Mapping[str, Any]
    query_ids: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def name(self) -> str:
        return str(self.data["name"])


def failures(search: MemoryOp, labels: QueryLabels) -> list[str]:
    """Why `search` failed: each forbidden record it returned, each relevant one it missed."""
    returned = [r.id for r in search.records]
    out = [f"returned {r!r}, deleted before the search" for r in returned if r in labels.forbid]
    out += [f"missed relevant {r!r}" for r in labels.relevant if r not in returned]
    return out


def trace_scenario(
    traces: TraceSet,
    ident: str,
    *,
    explicit: Mapping[str, Sequence[str]] | None = None,
    rules: bool = True,
    with_content: bool = False,
    name: str | None = None,
    category: str = DEFAULT_CATEGORY,
) -> TraceScenario:
    """The scenario of the searches `ident` names (module docstring). UsageError without
    `with_content` or for an id that is neither a trace id nor a query id; DatasetError when
    nothing matches, a chosen search has no query text, or the scenario would be invalid."""
    _require_content(with_content)
    labels, _ = label_searches(traces, explicit, rules=rules)
    chosen = _chosen(traces, ident.lower(), labels)
    missing_query = [op.query_id for op in chosen if op.query is None]
    if missing_query:
        raise DatasetError(
            "a search without its query text cannot become a scenario (gen_ai.memory.query.text, "
            "gen_ai.retrieval.query.text and input.value are opt-in: enable content capture)",
            [f"{op.where()}: no query text" for op in chosen if op.query is None],
        )
    contents = latest_contents(traces)
    thoughts: dict[str, str | None] = {}
    for op in chosen:
        for record in op.records:
            thoughts.setdefault(record.id, record.content)
        for record_id in (*labels[op.query_id].relevant, *labels[op.query_id].forbid):
            thoughts.setdefault(record_id, None)
    warnings: list[str] = []
    store = chosen[0].store_id
    for record_id, content in list(thoughts.items()):
        if content is None:
            content = contents.get((store, record_id))
            if content is None:
                warnings.append(
                    f"record {record_id!r}: the traces hold no content for it; seeded with empty "
                    "content (write what it said into the scenario)"
                )
            thoughts[record_id] = content or ""
    queries = []
    for op in chosen:
        query: dict[str, Any] = {"id": op.query_id, "query": op.query}
        if labels[op.query_id].relevant:
            query["relevant"] = list(labels[op.query_id].relevant)
        if labels[op.query_id].forbid:
            query["forbid"] = list(labels[op.query_id].forbid)
        top_k = query_top_k(op)
        if top_k is not None:
            query["top_k"] = top_k
        queries.append(query)
    trace_ids = list(dict.fromkeys(op.trace_id for op in chosen))
    why = "; ".join(
        f"{op.query_id}: {', '.join(failures(op, labels[op.query_id])) or 'passed'}" for op in chosen
    )
    data = {
        "name": name or _default_name(ident),
        "category": category,
        "description": (
            f"Production search(es) of memory store {store!r} from OpenTelemetry trace "
            f"{', '.join(trace_ids)} "
            f"({', '.join(dict.fromkeys(op.file for op in chosen))}): {why}. Holds user text: yes "
            "(copied with --with-content)."
        ),
        "measure_only": not any(labels[op.query_id].relevant for op in chosen),
        "distractors": False,
        "thoughts": [{"id": i, "content": c} for i, c in thoughts.items()],
        "queries": queries,
    }
    return TraceScenario(data=data, query_ids=tuple(op.query_id for op in chosen), warnings=tuple(warnings))


def _require_content(with_content: bool) -> None:
    if not with_content:
        raise UsageError(
            "a regression scenario holds the query and the records' texts; pass --with-content to "
            "copy that user text out of the traces"
        )


def _default_name(ident: str) -> str:
    trace, _, span = ident.lower().partition("/")
    return f"trace-{trace[:12]}" + (f"-{span[:8]}" if span else "")


def _chosen(traces: TraceSet, ident: str, labels: Mapping[str, QueryLabels]) -> list[MemoryOp]:
    searches = traces.searches
    if _QUERY_ID.match(ident):
        found = [op for op in searches if op.query_id == ident]
        if not found:
            raise DatasetError(f"no search span {ident} (<trace id>/<span id>) in the traces")
        return found
    if not _TRACE_ID.match(ident):
        raise UsageError(
            f"{ident!r} is neither a trace id (32 hex digits) nor a query id (<trace id>/<span id>)"
        )
    in_trace = [op for op in searches if op.trace_id == ident]
    if not in_trace:
        raise DatasetError(f"trace {ident} holds no search span (search_memory, retrieval, RETRIEVER)")
    failing = [op for op in in_trace if failures(op, labels[op.query_id])]
    if not failing:
        raise DatasetError(
            f"no search of trace {ident} failed (none returned a deleted record or missed a labelled one); "
            f"pass a query id to keep a passing search: {', '.join(op.query_id for op in in_trace)}"
        )
    stores = {op.store_id for op in failing}
    if len(stores) > 1:
        raise DatasetError(
            f"the failing searches of trace {ident} span {len(stores)} stores; pass one query id: "
            + ", ".join(op.query_id for op in failing)
        )
    return failing


def write_trace_scenario(
    paths: Sequence[str | Path],
    ident: str,
    out: str | Path,
    *,
    labels: str | Path | None = None,
    rules: bool = True,
    with_content: bool = False,
    name: str | None = None,
    category: str = DEFAULT_CATEGORY,
) -> tuple[Path, TraceScenario]:
    """Read `paths`, build the scenario of `ident` (`trace_scenario`) and write it as
    `<out>/scenarios/<name>.yaml`, `out` being a suite directory (new or existing). The scenario
    is validated against the suite's categories first (its suite file, else the built-in
    ones); DatasetError, and nothing written, when it is invalid or the file already exists."""
    _require_content(with_content)
    traces = read_traces(paths)
    explicit = read_labels(labels) if labels is not None else None
    built = trace_scenario(
        traces, ident, explicit=explicit, rules=rules, with_content=with_content, name=name, category=category
    )
    root = Path(out)
    target = root / SCENARIOS_SUBDIR / f"{built.name}.yaml"
    if target.exists():
        raise DatasetError(f"{target} exists; pass another --name or remove it")
    try:
        scenario = Scenario.model_validate(built.data)
    except ValidationError as exc:
        raise DatasetError(
            f"{target}: the scenario would be invalid; nothing was written", field_problems(exc, Scenario)
        ) from None
    problems = scenario_problems(scenario, None, _categories(root))
    if problems:
        raise DatasetError(f"{target}: the scenario would be invalid; nothing was written", problems)
    text = yaml.safe_dump(dict(built.data), sort_keys=False, allow_unicode=True, width=100)
    return write_atomic(target, text), built


def _categories(root: Path) -> tuple[str, ...]:
    """The categories the suite in `root` declares (its suite file), else the built-in ones."""
    for suffix in (".yaml", ".yml", ".json"):
        path = root / f"suite{suffix}"
        if path.is_file():
            data = parse_text(read_regular(path).decode("utf-8-sig"), suffix)
            if isinstance(data, dict) and isinstance(data.get("categories"), list):
                return tuple(str(c) for c in data["categories"])
    return BUILTIN_CATEGORIES
