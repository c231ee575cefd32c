"""Run files: rankings produced outside evalkit, read to be scored, and written from a report.

Formats (`RUN_FORMATS`):
- **trec**: trec_eval's run format, one retrieved document per line,
  `qid Q0 docid rank score tag`, whitespace-separated (ranx and ir_measures read it too). The
  second and sixth columns are not used. evalkit orders each query's documents by the `rank`
  column; trec_eval orders by `score` (descending, ties by docid), so a file whose scores
  increase with rank is refused, and a file compared with trec_eval should give strictly
  decreasing scores (evalkit's export does). The score becomes the hit's `relevance`; a TREC run
  carries no other signal (`low_confidence` None: `expect_no_strong_match` assertions then fail,
  never pass vacuously).
- **jsonl**: one JSON object per line, `{"query_id": "...", "results": [...]}`, results best
  first, each an id string or an object `{"id": ..., <signals>}` whose optional signals are the
  report's hit fields but `rank` (`evalkit.records.REPORTED_HIT_FIELDS`: `similarity`,
  `relevance` (default 0), `low_confidence`, `match_source`, `standing`, ...); unknown keys are
  errors.

Query ids are stable query ids (`evalkit.scenarios.stable_query_id`): a query's own id (BEIR
query id, LoCoMo `conv-26/q3`, LongMemEval question id), else `<scenario>#<n>` (the query's
number from 1) for the built-in suite, e.g. `temporal#2`. An id of the earlier 0-based form
(`temporal/1`) is an error that names the id to write instead.

`read_run` parses a file (DatasetError listing every problem with file and line: wrong column
count, a rank that is not an integer, a score that is not a finite number, a document listed
twice or two documents at one rank for a query, scores increasing with rank, malformed JSON,
unknown keys, a query id given twice). `check_run` matches it against a suite: a query id that
is not a query of the suite, or a document id that the query's scenario does not seed, is an
error (with the line); suite queries the run does not cover are scored 0 and counted in a note.
`write_trec` writes a report's ungated pass as `run.trec`, `qrels.trec` (graded: every relevant
id at grade 1, overridden by the query's grades) and `run.jsonl` (the same ranking with every
recorded signal, so a replay reproduces the assertions too).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import Field, ValidationError, create_model, field_validator

from evalkit.errors import DatasetError, ReportError, UsageError, listed
from evalkit.files import write_atomic
from evalkit.harness.results import RunResult
from evalkit.records import REPORTED_HIT_FIELDS, Hit, hit_from_values
from evalkit.scenarios import Suite, legacy_query_id, stable_query_id
from evalkit.shapes import hit_model_fields
from evalkit.suites.readers import json_lines
from evalkit.validation import FrozenModel, field_problems
from evalkit.wording import counted

RunFormat = Literal["trec", "jsonl"]
RUN_FORMATS: tuple[str, ...] = get_args(RunFormat)
"""Run file formats `read_run` understands."""

TREC_FILES: tuple[str, str, str] = ("run.trec", "qrels.trec", "run.jsonl")
"""What `write_trec` writes into its output directory."""

_SHOWN_IDS = 5


class RunHit(
    create_model(  # type: ignore[misc]
        "_RunHitFields",
        __base__=FrozenModel,
        **hit_model_fields(
            [f for f in REPORTED_HIT_FIELDS if f.name != "rank"],
            strict=True,
            overrides={"id": (str, Field(min_length=1)), "relevance": (float, Field(0.0))},
        ),
    )
):
    """One result of a JSONL run line with its optional signals: the report's hit fields but
    `rank` (the line's order is the ranking), with their declared types (labels are checked
    here, with the line), `relevance` defaulting to 0."""


class RunLine(FrozenModel):
    """One line of a JSONL run: a query's stable id and its results, best first."""

    query_id: str = Field(min_length=1)
    results: list[RunHit]

    @field_validator("results", mode="before")
    @classmethod
    def _ids_as_hits(cls, value: Any) -> Any:
        """A bare id string stands for a result without signals."""
        return (
            [{"id": item} if isinstance(item, str) else item for item in value]
            if isinstance(value, list)
            else value
        )


@dataclass(frozen=True)
class RunFile:
    """A parsed run: `rankings` (query id → hits, ranks 1..n, in file order of first appearance)
    and `lines` (query id → document id → the 1-based line that listed it)."""

    path: Path
    format: str
    sha256: str
    rankings: Mapping[str, tuple[Hit, ...]]
    lines: Mapping[str, Mapping[str, int]]

    def describe(self) -> dict[str, Any]:
        """What the report's provenance records about the run file."""
        return {
            "run_file": str(self.path),
            "format": self.format,
            "sha256": self.sha256,
            "queries": len(self.rankings),
        }


def run_format(path: str | Path, format: str | None = None) -> str:
    """`format` checked, or, when None, guessed from the suffix: `.jsonl`/`.json` → jsonl, any
    other → trec. UsageError for an unknown format."""
    if format is None:
        return "jsonl" if Path(path).suffix.lower() in (".jsonl", ".json") else "trec"
    if format not in RUN_FORMATS:
        raise UsageError(f"unknown run format {format!r}; use one of {', '.join(RUN_FORMATS)}")
    return format


def read_run(path: str | Path, format: str | None = None) -> RunFile:
    """Parse the run file `path` (format as in `run_format`). DatasetError for a missing file or
    any problem listed in the module docstring, all of them at once."""
    file = Path(path)
    kind = run_format(file, format)
    if not file.is_file():
        raise DatasetError(f"run file {file} not found; pass the path of a {kind} run file")
    problems: list[str] = []
    rows = _trec_rows(file, problems) if kind == "trec" else _jsonl_rows(file, problems)
    if not rows and not problems:
        problems.append(f"{file}: no results; a run file needs at least one ranked document")
    if problems:
        raise DatasetError(f"run file {file} is invalid ({counted(len(problems), 'problem')})", problems)
    rankings = {
        qid: tuple(
            hit_from_values({**signals.model_dump(), "content": "", "project": "", "rank": rank})
            for rank, (doc, signals, _) in enumerate(ranked, start=1)
        )
        for qid, ranked in rows.items()
    }
    lines = {qid: {doc: line for doc, _, line in ranked} for qid, ranked in rows.items()}
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    return RunFile(path=file, format=kind, sha256=digest, rankings=rankings, lines=lines)


_Ranked = list[tuple[str, RunHit, int]]
"""(document id, its signals, line) per result of one query, best first."""


def _trec_rows(file: Path, problems: list[str]) -> dict[str, _Ranked]:
    """Each query's documents ordered by the rank column, the score as relevance."""
    found: dict[str, list[tuple[int, float, str, int]]] = {}
    for number, raw in enumerate(file.read_bytes().splitlines(), start=1):
        where = f"{file} line {number}"
        try:
            fields = raw.decode("utf-8").split()
        except UnicodeDecodeError:
            problems.append(f"{where}: not UTF-8; re-encode the file as UTF-8")
            continue
        if not fields:
            continue
        if len(fields) != 6:
            problems.append(
                f"{where}: {len(fields)} columns; a TREC run line is 'qid Q0 docid rank score tag'"
            )
            continue
        qid, _, doc, rank_text, score_text, _ = fields
        try:
            rank, score = int(rank_text), float(score_text)
        except ValueError:
            problems.append(
                f"{where}: rank {rank_text!r} must be an integer and score {score_text!r} a number"
            )
            continue
        if not math.isfinite(score):
            problems.append(f"{where}: score {score_text!r} is not finite; write a finite number")
            continue
        found.setdefault(qid, []).append((rank, score, doc, number))
    rows: dict[str, _Ranked] = {}
    for qid, entries in found.items():
        entries.sort(key=lambda entry: (entry[0], entry[3]))  # by rank, then file order
        problems += _ranking_problems(file, qid, entries)
        rows[qid] = [(doc, RunHit(id=doc, relevance=score), line) for _, score, doc, line in entries]
    return rows


def _ranking_problems(file: Path, qid: str, entries: list[tuple[int, float, str, int]]) -> list[str]:
    """Repeated documents or ranks, and scores that increase with rank, in one query's rows."""
    out: list[str] = []
    first: dict[str, int] = {}
    for (rank, score, doc, line), previous in zip(entries, [None, *entries[:-1]], strict=True):
        where = f"{file} line {line}"
        if doc in first:
            out.append(
                f"{where}: query {qid!r} lists {doc!r} again (first on line {first[doc]}); keep one row"
            )
        first.setdefault(doc, line)
        if previous is not None and previous[0] == rank:
            out.append(
                f"{where}: query {qid!r} has two documents at rank {rank} (line {previous[3]}); renumber"
            )
        elif previous is not None and score > previous[1]:
            out.append(
                f"{where}: query {qid!r} scores rank {rank} ({score:g}) above rank {previous[0]} "
                f"({previous[1]:g}); trec_eval would reorder them: make scores decrease with rank"
            )
    return out


def _jsonl_rows(file: Path, problems: list[str]) -> dict[str, _Ranked]:
    rows: dict[str, _Ranked] = {}
    first_line: dict[str, int] = {}
    for number, obj in json_lines(file, problems):
        where = f"{file} line {number}"
        try:
            line = RunLine.model_validate(obj)
        except ValidationError as exc:
            problems += [f"{where}: {p}" for p in field_problems(exc, RunLine)]
            continue
        if line.query_id in first_line:
            problems.append(
                f"{where}: query id {line.query_id!r} again (first on line {first_line[line.query_id]}); "
                "give each query one line"
            )
            continue
        first_line[line.query_id] = number
        results = line.results
        repeated = sorted(doc for doc, count in Counter(r.id for r in results).items() if count > 1)
        if repeated:
            problems.append(
                f"{where}: query {line.query_id!r} lists {', '.join(repeated)} more than once; keep one"
            )
            continue
        rows[line.query_id] = [(r.id, r, number) for r in results]
    return rows


def check_run(run: RunFile, suite: Suite) -> tuple[str, ...]:
    """Match `run` against `suite`: DatasetError listing every query id of the run that is not a
    query of the suite, every document id its query's scenario does not seed, and any stable id
    two queries of the suite share. Returns the note saying how many queries it covers."""
    problems: list[str] = []
    seeded: dict[str, frozenset[str]] = {}
    owner: dict[str, str] = {}
    renamed: dict[str, str] = {}
    for scenario in suite.scenarios:
        ids = frozenset(
            t.id for t in [*scenario.thoughts, *(suite.distractors if scenario.distractors else ())]
        )
        for index, query in enumerate(scenario.queries):
            qid = stable_query_id(scenario.name, index, query.id)
            if qid in owner:
                problems.append(
                    f"query id {qid!r} names a query of {owner[qid]!r} and of {scenario.name!r}; "
                    "a run file cannot tell them apart: give the queries distinct ids"
                )
            owner[qid], seeded[qid] = scenario.name, ids
            if query.id is None:
                renamed[legacy_query_id(scenario.name, index)] = qid
    known = list(seeded)
    for qid, docs in run.lines.items():
        if qid not in seeded and qid in renamed:
            problems.append(
                f"{run.path} line {min(docs.values())}: query id {qid!r} is the old 0-based form; "
                f"queries are numbered from 1 now: write {renamed[qid]!r}"
            )
            continue
        if qid not in seeded:
            line = min(docs.values())
            problems.append(
                f"{run.path} line {line}: query id {qid!r} is not a query of the suite; "
                f"its ids look like {', '.join(known[:_SHOWN_IDS])}"
            )
            continue
        problems += [
            f"{run.path} line {line}: document {doc!r} of query {qid!r} is not a thought of scenario "
            f"{owner[qid]!r}; use the ids the suite seeds"
            for doc, line in docs.items()
            if doc not in seeded[qid]
        ]
    if problems:
        raise DatasetError(
            f"run file {run.path} does not match the suite ({counted(len(problems), 'problem')})",
            problems,
        )
    missing = [qid for qid in seeded if qid not in run.rankings]
    shown = (
        f" ({', '.join(missing[:_SHOWN_IDS])}{', ...' if len(missing) > _SHOWN_IDS else ''})"
        if missing
        else ""
    )
    return (
        f"replayed run file {run.path} ({run.format}, sha256 {run.sha256[:12]}): {len(run.rankings)} of "
        f"{len(seeded)} queries have results; {len(missing)} without results score 0{shown}",
    )


def write_trec(result: RunResult, outdir: str | Path) -> tuple[Path, Path, Path]:
    """Write the ungated pass of `result` into `outdir` as `TREC_FILES`: the run (score =
    n − rank + 1 for the n ids a query retrieved, so every reader keeps evalkit's order; tag =
    the system's name), the graded qrels (`qid 0 docid grade`; queries without judgements have
    no line) and the JSONL run with every recorded signal. ReportError when an id holds
    whitespace (a TREC line could not hold it). Returns the three paths."""
    run_lines: list[str] = []
    qrels_lines: list[str] = []
    jsonl_lines: list[str] = []
    problems: list[str] = []
    tag = re.sub(r"\s+", "_", result.system) or "evalkit"
    for scenario in result.scenarios:
        for query in scenario.queries:
            qid = stable_query_id(scenario.name, query.index, query.query_id)
            problems += [
                f"query {qid!r}: id {i!r} holds whitespace"
                for i in [qid, *query.retrieved, *query.qrels]
                if re.search(r"\s", i)
            ]
            n = len(query.retrieved)
            run_lines += [
                f"{qid} Q0 {doc} {rank} {n - rank + 1} {tag}" for rank, doc in enumerate(query.retrieved, 1)
            ]
            qrels_lines += [f"{qid} 0 {doc} {grade}" for doc, grade in query.qrels.items()]
            signals: dict[str, RunHit] = {}
            for hit in query.hits:
                signals.setdefault(hit.id, RunHit(**hit.model_dump(exclude={"rank", "relevant"})))
            results = [signals[doc] for doc in query.retrieved]
            jsonl_lines.append(RunLine(query_id=qid, results=results).model_dump_json())
    if problems:
        raise ReportError(
            listed(
                f"report of {result.system!r} cannot be written in TREC format: ids must not hold whitespace",
                problems,
            )
        )
    out = Path(outdir)
    return (
        write_atomic(out / TREC_FILES[0], "".join(f"{line}\n" for line in run_lines)),
        write_atomic(out / TREC_FILES[1], "".join(f"{line}\n" for line in qrels_lines)),
        write_atomic(out / TREC_FILES[2], "".join(f"{line}\n" for line in jsonl_lines)),
    )
