"""Benchmark runs on public data: a BEIR directory (e.g. SciFact), LoCoMo or LongMemEval, through the same
harness as `evalkit run`, so the result is an ordinary `EvalRun` (same report JSON, same frames).

What a benchmark run does that a scenario run does not:
- The imported scenarios are wrapped in a `Suite` directly (one scenario for BEIR, one per
  conversation for LoCoMo); the file-suite validator is not run on them, the importers check
  their input themselves. `Suite.digest` is a sha256 over the files read (see `files_digest`).
- `top_k` is the largest cutoff in `ks`, and the IR metrics are the metric family × every k:
  BEIR `BEIR_METRICS` (nDCG, recall, MAP, MRR, success at each k; with the default ks (10, 100):
  ndcg@10, ndcg@100, recall@10, recall@100, map@10, map@100, mrr@10, mrr@100, success@10,
  success@100), LoCoMo `LOCOMO_METRICS` (recall, success, nDCG at each k; with the default ks
  (5, 10): recall@5, recall@10, success@5, success@10, ndcg@5, ndcg@10). The harness metrics
  (recall, precision, MRR, hit rate over top_k) are always there too.
- No thresholds: nothing gates a benchmark run (its regressions can only be assertion errors,
  and imported queries carry no assertions).
- Ungated by default (min_relevance 0, the measurement); `gated=True` adds the report-only pass
  under the service's default relevance gate.
- LoCoMo evaluates categories 1-4 by default (`STANDARD_CATEGORIES`: 1 multi-hop, 2 temporal,
  3 open-domain, 4 single-hop; 5 adversarial is left out, as in the standard retrieval
  evaluation). Every conversation is seeded into its own store; its questions search only it.
- LongMemEval (`longmemeval_set`): one store per question, at session or turn granularity,
  `LONGMEMEVAL_METRICS` at every k (default (5, 10)); abstention questions are measure-only.
- The report's `notes` say what was loaded (documents, queries, what the importer skipped or
  repaired) and which categories ran, so a report file explains itself.

`beir_set` / `locomo_set` import a benchmark into a `BenchSet`: a suite plus the metrics to
compute. `BenchSet.config` turns a run configuration into the benchmark's (top_k, metrics, no
thresholds), so a benchmark runs through the one evaluation path (`evalkit.benchmarks.run_benchmark`) on
any `MemorySystem`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import UsageError
from evalkit.harness.config import RunConfig
from evalkit.metrics import MetricSpec, parse_metrics
from evalkit.records import MAX_TOP_K
from evalkit.scenarios import Scenario, Suite
from evalkit.suites.beir import load_beir
from evalkit.suites.locomo import LOCOMO_CATEGORIES, STANDARD_CATEGORIES, load_locomo
from evalkit.suites.longmemeval import load_longmemeval

BEIR_METRICS: tuple[str, ...] = ("ndcg", "recall", "map", "mrr", "success")
"""Metric families of a BEIR run, each computed at every cutoff of `ks`."""

LOCOMO_METRICS: tuple[str, ...] = ("recall", "success", "ndcg")
"""Metric families of a LoCoMo run, each computed at every cutoff of `ks`."""

LONGMEMEVAL_METRICS: tuple[str, ...] = ("recall", "recall_all", "success", "ndcg")
"""Metric families of a LongMemEval run, each computed at every cutoff of `ks`: LongMemEval's
own recall_any@k is success@k, its recall_all@k and ndcg_any@k (binary gains) are recall_all@k
and ndcg@k."""

DEFAULT_BEIR_KS: tuple[int, ...] = (10, 100)
DEFAULT_LOCOMO_KS: tuple[int, ...] = (5, 10)
DEFAULT_LONGMEMEVAL_KS: tuple[int, ...] = (5, 10)


def check_ks(ks: Iterable[int]) -> tuple[int, ...]:
    """The cutoffs sorted ascending; UsageError when empty, repeated, or not integers in
    [1, MAX_TOP_K] (a search returns at most MAX_TOP_K rows)."""
    values = list(ks)
    if not values:
        raise UsageError("no cutoff given; pass at least one k, e.g. 10,100")
    for k in values:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_TOP_K:
            raise UsageError(f"cutoff {k!r} is not an integer from 1 to {MAX_TOP_K}; use e.g. 10,100")
    repeated = sorted({k for k in values if values.count(k) > 1})
    if repeated:
        raise UsageError(f"cutoff(s) {', '.join(map(str, repeated))} given twice; list each k once")
    return tuple(sorted(values))


def bench_metrics(families: Sequence[str], ks: Iterable[int]) -> tuple[MetricSpec, ...]:
    """`family@k` for every family (in order) and every k (ascending), e.g. ndcg@10, ndcg@100, ..."""
    cutoffs = check_ks(ks)
    return parse_metrics(",".join(f"{family}@{k}" for family in families for k in cutoffs))


def files_digest(root: Path, files: Sequence[Path]) -> str:
    """sha256 (hex) over `files` in the given order, each as its path relative to `root`, NUL, its
    size, NUL, then its bytes (the layout of `Suite.digest` for scenario files), read in blocks so
    a large corpus is never held in memory for hashing."""
    digest = hashlib.sha256()
    for file in files:
        relative = file.resolve().relative_to(root.resolve()).as_posix()
        digest.update(relative.encode("utf-8") + b"\0" + str(file.stat().st_size).encode("ascii") + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class BenchSet:
    """An imported benchmark, ready to run: the suite (scenarios wrapped directly, digest over
    the files read), the metrics to compute per query, notes saying what was loaded and the
    names of its question categories (`query_category` → name: LoCoMo's "1" → "multi-hop", ...;
    empty when its categories are names already), which the run records in its provenance."""

    suite: Suite
    metrics: tuple[MetricSpec, ...]
    notes: tuple[str, ...]
    category_names: Mapping[str, str] = field(default_factory=dict)

    @property
    def top_k(self) -> int:
        """Results per query: the largest cutoff of the metrics."""
        return max(spec.k for spec in self.metrics if spec.k is not None)

    def config(self, base: RunConfig) -> RunConfig:
        """`base` as this benchmark runs it: top_k = the largest cutoff, its metrics, and no
        thresholds (nothing gates a benchmark run but assertion errors)."""
        return base.model_copy(
            update={"top_k": self.top_k, "metrics": tuple(s.label for s in self.metrics), "thresholds": None}
        )


def _file_suite(file: Path, scenarios: tuple[Scenario, ...]) -> Suite:
    """The suite of scenarios imported from one benchmark file (no distractors; the digest is
    over that file)."""
    return Suite(
        scenarios=scenarios,
        sources={s.name: file for s in scenarios},
        distractors=(),
        digest=files_digest(file.parent, [file]),
    )


def beir_set(
    path: str | Path, split: str = "test", ks: Iterable[int] = DEFAULT_BEIR_KS, progress: bool | None = None
) -> BenchSet:
    """Import the BEIR directory `path` (split `split`) with `BEIR_METRICS` at every k of `ks`.
    Raises UsageError for bad ks (before reading anything) and DatasetError for bad data."""
    metrics = bench_metrics(BEIR_METRICS, ks)
    root = Path(path)
    loaded = load_beir(root, split, progress=progress)
    report = loaded.report
    digest = files_digest(
        root, [root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / f"{split}.tsv"]
    )
    note = (
        f"benchmark: BEIR {report.dataset} ({split} split): {report.documents} documents, "
        f"{report.queries} judged queries; skipped: {len(report.queries_without_qrels)} queries without "
        f"qrels in the split, {len(report.queries_without_known_docs)} judging only unknown documents; "
        f"ignored qrels rows: {len(report.unknown_doc_qrels)} naming unknown documents, "
        f"{len(report.unknown_query_qrels)} naming unknown queries"
    )
    suite = Suite(
        scenarios=(loaded.scenario,), sources={loaded.scenario.name: root}, distractors=(), digest=digest
    )
    return BenchSet(suite=suite, metrics=metrics, notes=(note,))


def locomo_set(
    path: str | Path,
    categories: Iterable[str] = STANDARD_CATEGORIES,
    ks: Iterable[int] = DEFAULT_LOCOMO_KS,
    progress: bool | None = None,
) -> BenchSet:
    """Import the LoCoMo file `path`, keeping the questions of `categories` (strings "1".."5"),
    with `LOCOMO_METRICS` at every k of `ks`: one scenario per conversation that has such a
    question. Raises UsageError for bad ks, an empty or unknown category, or a selection that
    leaves no question; DatasetError for bad data."""
    metrics = bench_metrics(LOCOMO_METRICS, ks)
    wanted = tuple(dict.fromkeys(categories))
    if not wanted:
        raise UsageError(f"no LoCoMo category given; use some of {', '.join(LOCOMO_CATEGORIES)}")
    file = Path(path)
    loaded = load_locomo(file, progress=progress)
    selected = loaded.with_categories(wanted)
    if not selected.scenarios:
        raise UsageError(
            f"LoCoMo file {file} has no question with evidence in categories {', '.join(wanted)}; "
            f"choose among {', '.join(sorted(loaded.report.kept_by_category))}"
        )
    report = loaded.report
    names = ", ".join(f"{c} {LOCOMO_CATEGORIES[c]}" for c in sorted(wanted))
    notes = (
        f"benchmark: LoCoMo {report.file}: {report.conversations} conversations, {report.turns} turns, "
        f"{report.questions} questions ({report.kept} with evidence, {len(report.without_evidence)} "
        f"without: not queries); {report.questions_repaired} questions with repaired evidence, "
        f"{len(report.unresolved)} evidence strings unresolved",
        f"categories evaluated: {names} ({selected.query_count} queries); each conversation is its own store",
    )
    return BenchSet(
        suite=_file_suite(file, selected.scenarios),
        metrics=metrics,
        notes=notes,
        category_names=LOCOMO_CATEGORIES,
    )


def longmemeval_set(
    path: str | Path,
    granularity: str = "session",
    ks: Iterable[int] = DEFAULT_LONGMEMEVAL_KS,
    progress: bool | None = None,
) -> BenchSet:
    """Import the LongMemEval file `path` at `granularity` ("session" or "turn") with
    `LONGMEMEVAL_METRICS` at every k of `ks`: one scenario per question (see
    `evalkit.suites.longmemeval`). Abstention questions run as measure-only scenarios: reported,
    never in the aggregates. Raises UsageError for bad ks or granularity, or a file with no
    scored question; DatasetError for bad data."""
    metrics = bench_metrics(LONGMEMEVAL_METRICS, ks)
    file = Path(path)
    loaded = load_longmemeval(file, granularity, progress=progress)
    report = loaded.report
    if not report.scored:
        raise UsageError(
            f"LongMemEval file {file} has no non-abstention question with evidence at {granularity} "
            "level; nothing would be scored"
        )
    notes = (
        f"benchmark: {report.summary()}",
        f"each question is its own store; query categories are question types; abstention questions "
        f"({len(report.abstention)}) are scenarios of category longmemeval-abstention, measure-only",
    )
    return BenchSet(suite=_file_suite(file, loaded.scenarios), metrics=metrics, notes=notes)
