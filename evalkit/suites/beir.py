"""Import a BEIR-layout benchmark directory (e.g. SciFact) as one evalkit scenario.

Layout (BEIR v1.0.0, Thakur et al. 2021): `corpus.jsonl` (one JSON object per line:
`_id`, `title` (optional), `text`, `metadata` (ignored)), `queries.jsonl` (`_id`, `text`,
`metadata` (ignored)) and `qrels/<split>.tsv` (tab-separated, header `query-id corpus-id score`,
one graded judgement per row). Blank lines are ignored; CRLF line endings are accepted.

Mapping onto the scenario model:
- one `ThoughtSpec` per corpus line: `id` = `_id`, `content` = title + "\\n\\n" + text, or only
  the non-blank one of the two when the other is blank; project "default", no dates;
- one `QuerySpec` per query of `queries.jsonl` (in file order) that has at least one qrels row
  in the split pointing at a known document: `id` = query id, `grades` = every such row's grade
  as given (0 and negative grades included), `relevant` = ids with grade >= 1 in qrels-row order,
  `top_k` None (the runner decides);
- the scenario is named `beir-<directory name>` (lower-cased, non-alphanumerics → "-"),
  category "beir", no distractors (the corpus is large enough on its own).

Nothing is dropped silently: `BeirReport` counts and lists queries without qrels in the split,
qrels rows naming unknown documents or queries, queries left without any known judged document,
and kept queries that have no grade >= 1. Invalid input (missing file, malformed JSON line, bad
or duplicate qrels row, duplicate or missing ids, wrong header) raises one `DatasetError` listing
every problem with file, line number and the fix.

Memory: `corpus.jsonl` is streamed line by line; each line's JSON object is discarded as soon as
its `ThoughtSpec` exists, so the corpus is held once (plus a set of its ids).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import DatasetError
from evalkit.scenarios.model import QuerySpec, Scenario, ThoughtSpec
from evalkit.suites.readers import json_lines, slug
from evalkit.wording import counted

QRELS_HEADER: tuple[str, str, str] = ("query-id", "corpus-id", "score")
"""The header row every BEIR qrels file starts with (tab-separated)."""


@dataclass(frozen=True, slots=True)
class QrelRow:
    """One qrels row, located by its 1-based line number in the split's TSV file."""

    line: int
    query_id: str
    doc_id: str
    grade: int


@dataclass(frozen=True, slots=True)
class BeirReport:
    """What `load_beir` read and everything it left out.

    - `documents`: corpus lines loaded (one thought each).
    - `queries`: queries kept in the scenario.
    - `qrels_rows`: data rows of the split's qrels file (header excluded).
    - `queries_without_qrels`: ids in queries.jsonl with no qrels row in this split (skipped;
      usually the other splits' queries).
    - `unknown_doc_qrels`: rows whose corpus-id is not in corpus.jsonl (left out of the query's
      `relevant` and `grades`, which may only name seeded thoughts).
    - `unknown_query_qrels`: rows whose query-id is not in queries.jsonl (unusable: no text).
    - `queries_without_known_docs`: ids of queries whose every qrels row names an unknown
      document (skipped: nothing they judge can be retrieved).
    - `queries_without_relevant`: kept query ids whose grades are all <= 0 (they score 0).
    """

    dataset: str
    split: str
    documents: int
    queries: int
    qrels_rows: int
    queries_without_qrels: tuple[str, ...]
    unknown_doc_qrels: tuple[QrelRow, ...]
    unknown_query_qrels: tuple[QrelRow, ...]
    queries_without_known_docs: tuple[str, ...]
    queries_without_relevant: tuple[str, ...]

    def summary(self) -> str:
        """A few human-readable lines, one figure each."""
        return "\n".join(
            [
                f"BEIR {self.dataset} ({self.split} split)",
                f"  documents: {self.documents}",
                f"  queries kept: {self.queries}",
                f"  qrels rows: {self.qrels_rows}",
                f"  queries without qrels in split (skipped): {len(self.queries_without_qrels)}",
                f"  qrels rows naming unknown documents (ignored): {len(self.unknown_doc_qrels)}",
                f"  qrels rows naming unknown queries (ignored): {len(self.unknown_query_qrels)}",
                f"  queries judging only unknown documents (skipped): {len(self.queries_without_known_docs)}",
                f"  kept queries without a relevant document: {len(self.queries_without_relevant)}",
            ]
        )


@dataclass(frozen=True, slots=True)
class BeirSet:
    """A loaded BEIR split: the scenario to run and the report of what was loaded."""

    scenario: Scenario
    report: BeirReport


def load_beir(path: str | Path, split: str = "test", *, progress: bool | None = None) -> BeirSet:
    """Load the BEIR directory `path` for `split` (a file `qrels/<split>.tsv` must exist).

    `progress`: True/False forces the corpus progress bar (on stderr) on/off; None decides with
    `evalkit.progress.progress_enabled` (an interactive stderr outside CI and Jupyter).
    Raises `DatasetError` for any invalid or missing input.
    """
    root = Path(path)
    files = _files(root, split)
    name = _scenario_name(root)
    problems: list[str] = []
    qrels = _read_qrels(files["qrels"], problems)
    thoughts = _read_corpus(files["corpus"], progress, problems)
    query_texts = _read_queries(files["queries"], problems)
    if not thoughts and not problems:
        problems.append(f"{files['corpus']}: the corpus is empty; it needs one JSON document per line")
    if problems:
        raise DatasetError(f"BEIR dataset {root} is invalid ({counted(len(problems), 'problem')})", problems)

    doc_ids = {t.id for t in thoughts}
    judged: dict[str, dict[str, int]] = {}
    unknown_docs: list[QrelRow] = []
    unknown_queries: list[QrelRow] = []
    for row in qrels:
        if row.query_id not in query_texts:
            unknown_queries.append(row)
        elif row.doc_id not in doc_ids:
            unknown_docs.append(row)
        else:
            judged.setdefault(row.query_id, {})[row.doc_id] = row.grade
    with_qrels = {row.query_id for row in qrels}
    queries = [
        QuerySpec(
            query=text,
            id=query_id,
            grades=judged[query_id],
            relevant=[doc for doc, grade in judged[query_id].items() if grade >= 1],
        )
        for query_id, text in query_texts.items()
        if query_id in judged
    ]
    if not queries:
        raise DatasetError(
            f"BEIR dataset {root}: no query of {files['queries']} has a qrels row naming a known "
            f"document in {files['qrels']}; check that the split and the corpus belong together"
        )
    report = BeirReport(
        dataset=root.resolve().name,
        split=split,
        documents=len(thoughts),
        queries=len(queries),
        qrels_rows=len(qrels),
        queries_without_qrels=tuple(q for q in query_texts if q not in with_qrels),
        unknown_doc_qrels=tuple(unknown_docs),
        unknown_query_qrels=tuple(unknown_queries),
        queries_without_known_docs=tuple(q for q in query_texts if q in with_qrels and q not in judged),
        queries_without_relevant=tuple(q.id for q in queries if q.id is not None and not q.relevant),
    )
    scenario = Scenario(
        name=name,
        category="beir",
        description=f"BEIR {report.dataset} ({split} split): {report.documents} documents, "
        f"{report.queries} judged queries.",
        distractors=False,
        thoughts=thoughts,
        queries=queries,
    )
    return BeirSet(scenario=scenario, report=report)


def _files(root: Path, split: str) -> dict[str, Path]:
    """The three input files, after checking that each exists (one error lists every missing one)."""
    files = {
        "corpus": root / "corpus.jsonl",
        "queries": root / "queries.jsonl",
        "qrels": root / "qrels" / f"{split}.tsv",
    }
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        splits = sorted(p.stem for p in (root / "qrels").glob("*.tsv")) if (root / "qrels").is_dir() else []
        hint = f"available splits: {', '.join(splits)}" if splits else "no qrels/*.tsv found"
        raise DatasetError(
            f"BEIR dataset {root} is incomplete: point `path` at a BEIR directory "
            f"(corpus.jsonl, queries.jsonl, qrels/<split>.tsv); {hint}",
            [f"{m}: file not found" for m in missing],
        )
    return files


def _scenario_name(root: Path) -> str:
    """`beir-<directory name>`, lower-cased, runs of non-alphanumerics turned into "-"."""
    name = slug(root.resolve().name)
    if not name:
        raise DatasetError(f"BEIR dataset {root}: cannot derive a scenario name from the directory name")
    return f"beir-{name}"


def _string_field(
    obj: Any, key: str, where: str, problems: list[str], *, required: bool = True
) -> str | None:
    """`obj[key]` when it is a string; None (and a recorded problem when required or mistyped) otherwise."""
    if not isinstance(obj, dict):
        found = type(obj).__name__
        problems.append(f"{where}: expected a JSON object, got {found}; write one JSON object per line")
        return None
    value = obj.get(key)
    if isinstance(value, str):
        return value
    if value is None and not required:
        return ""
    found = "missing" if value is None else f"a {type(value).__name__}"
    problems.append(f'{where}: "{key}" must be a string, found {found}; add it as a JSON string')
    return None


def _read_corpus(path: Path, progress: bool | None, problems: list[str]) -> list[ThoughtSpec]:
    thoughts: list[ThoughtSpec] = []
    first_line: dict[str, int] = {}
    for number, obj in json_lines(path, problems, progress):
        where = f"{path} line {number}"
        doc_id = _string_field(obj, "_id", where, problems)
        title = _string_field(obj, "title", where, problems, required=False) if doc_id is not None else None
        text = _string_field(obj, "text", where, problems) if title is not None else None
        if doc_id is None or title is None or text is None:
            continue
        if not doc_id:
            problems.append(f'{where}: "_id" is empty; give every document a non-empty id')
            continue
        if doc_id in first_line:
            problems.append(
                f"{where}: duplicate document id {doc_id!r} (first on line {first_line[doc_id]}); "
                "remove or rename one"
            )
            continue
        first_line[doc_id] = number
        content = "\n\n".join(part for part in (title, text) if part.strip())
        thoughts.append(ThoughtSpec(id=doc_id, content=content))
    return thoughts


def _read_queries(path: Path, problems: list[str]) -> dict[str, str]:
    """Query id → text, in file order."""
    texts: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for number, obj in json_lines(path, problems):
        where = f"{path} line {number}"
        query_id = _string_field(obj, "_id", where, problems)
        text = _string_field(obj, "text", where, problems) if query_id is not None else None
        if query_id is None or text is None:
            continue
        if query_id in first_line:
            problems.append(
                f"{where}: duplicate query id {query_id!r} (first on line {first_line[query_id]}); "
                "remove or rename one"
            )
            continue
        first_line[query_id] = number
        texts[query_id] = text
    return texts


def _read_qrels(path: Path, problems: list[str]) -> list[QrelRow]:
    """Rows of a qrels TSV in file order; bad, duplicate and header problems are recorded."""
    rows: list[QrelRow] = []
    first_line: dict[tuple[str, str], int] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.rstrip("\r\n").split("\t")
            if number == 1:
                if tuple(fields) != QRELS_HEADER:
                    problems.append(
                        f"{path} line 1: expected the header {'<TAB>'.join(QRELS_HEADER)!r}, "
                        f"found {line.rstrip()!r}; add or fix the header row"
                    )
                continue
            if not line.strip():
                continue
            row = _qrels_row(fields, f"{path} line {number}", number, problems)
            if row is None:
                continue
            key = (row.query_id, row.doc_id)
            if key in first_line:
                problems.append(
                    f"{path} line {number}: duplicate judgement of document {row.doc_id!r} for query "
                    f"{row.query_id!r} (first on line {first_line[key]}); keep one row per pair"
                )
                continue
            first_line[key] = number
            rows.append(row)
    return rows


def _qrels_row(fields: list[str], where: str, number: int, problems: list[str]) -> QrelRow | None:
    if len(fields) != 3:
        problems.append(
            f"{where}: expected 3 tab-separated fields (query-id, corpus-id, score), found "
            f"{len(fields)}; separate the fields with single tabs"
        )
        return None
    query_id, doc_id, score = (f.strip() for f in fields)
    if not query_id or not doc_id:
        problems.append(f"{where}: empty query-id or corpus-id; fill in both ids")
        return None
    try:
        grade = int(score)
    except ValueError:
        problems.append(f"{where}: score {score!r} is not an integer; write the grade as an integer")
        return None
    return QrelRow(line=number, query_id=query_id, doc_id=doc_id, grade=grade)
