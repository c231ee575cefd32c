"""Benchmark runs on public data: a BEIR directory (e.g. SciFact) or LoCoMo, through the same
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
- The report's `notes` say what was loaded (documents, queries, what the importer skipped or
  repaired) and which categories ran, so a report file explains itself.

Layers: `beir_set` / `locomo_set` import a benchmark into a `BenchSet`; `run_bench` runs one on
any `MemorySystem` (so another memory system is benchmarked the same way); `run_beir` /
`run_locomo` do both on the reference store. `metric_table` and `category_table` are the
display frames (per scenario + overall; per LoCoMo category + overall).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evalkit.datasets import Suite
from evalkit.embedders.factory import embedder_provenance, make_embedder
from evalkit.errors import UsageError
from evalkit.evaluate import evaluate
from evalkit.frames import EvalRun
from evalkit.importers import LOCOMO_CATEGORIES, STANDARD_CATEGORIES, load_beir, load_locomo
from evalkit.memory import RETRIEVAL_MODES
from evalkit.memory.fts_query import QUERY_SYNTAX_MODES
from evalkit.memory.schema import FTS_TOKENIZERS
from evalkit.metrics import MetricSpec, parse_metrics
from evalkit.results import HARNESS_METRICS
from evalkit.system import MemorySystem, ReferenceSystem

BEIR_METRICS: tuple[str, ...] = ("ndcg", "recall", "map", "mrr", "success")
"""Metric families of a BEIR run, each computed at every cutoff of `ks`."""

LOCOMO_METRICS: tuple[str, ...] = ("recall", "success", "ndcg")
"""Metric families of a LoCoMo run, each computed at every cutoff of `ks`."""

DEFAULT_BEIR_KS: tuple[int, ...] = (10, 100)
DEFAULT_LOCOMO_KS: tuple[int, ...] = (5, 10)
MAX_K = 1000
"""Largest cutoff: the store returns at most 1000 rows per query."""


def check_ks(ks: Iterable[int]) -> tuple[int, ...]:
    """The cutoffs sorted ascending; UsageError when empty, repeated, or not integers in [1, 1000]."""
    values = list(ks)
    if not values:
        raise UsageError("no cutoff given; pass at least one k, e.g. 10,100")
    for k in values:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise UsageError(f"cutoff {k!r} is not an integer from 1 to {MAX_K}; use e.g. 10,100")
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
    the files read), the metrics to compute per query, and notes saying what was loaded."""

    suite: Suite
    metrics: tuple[MetricSpec, ...]
    notes: tuple[str, ...]

    @property
    def top_k(self) -> int:
        """Results per query: the largest cutoff of the metrics."""
        return max(spec.k for spec in self.metrics if spec.k is not None)


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
    suite = Suite(
        scenarios=selected.scenarios,
        sources={s.name: file for s in selected.scenarios},
        distractors=(),
        digest=files_digest(file.parent, [file]),
    )
    return BenchSet(suite=suite, metrics=metrics, notes=notes)


def run_bench(
    bench: BenchSet,
    system: MemorySystem,
    *,
    mode: str,
    embedder_info: Mapping[str, object],
    gated: bool = False,
    progress: bool | None = None,
) -> EvalRun:
    """Run `bench` on `system` at top_k = `bench.top_k`, ungated unless `gated` adds the
    report-only pass, without thresholds; the report's notes start with `bench.notes`."""
    report = evaluate(
        bench.suite,
        system,
        mode=mode,
        embedder_info=dict(embedder_info),
        top_k=bench.top_k,
        gated=gated,
        thresholds=None,
        extra_metrics=bench.metrics,
        progress=progress,
    )
    return EvalRun(report.model_copy(update={"notes": [*bench.notes, *report.notes]}))


def run_beir(
    path: str | Path,
    split: str = "test",
    retrieval: str = "bm25",
    mode: str = "deterministic",
    model: str | None = None,
    ks: Sequence[int] = DEFAULT_BEIR_KS,
    tokenizer: str = "unicode61",
    query_syntax: str = "delete",
    gated: bool = False,
    cache: bool | str | Path | None = None,
    progress: bool | None = None,
) -> EvalRun:
    """Run the BEIR directory `path` (split `split`) on the reference store.

    `retrieval`: bm25 | vector | hybrid; `mode`: deterministic (hashing embedder) | real
    (sentence-transformers; `model` a name or path, default the packaged all-MiniLM-L6-v2;
    `cache` as in `run_eval`); `tokenizer`: the store's FTS5 tokenizer, unicode61 | porter;
    `query_syntax`: delete (the SPEC) | space (FTS5 syntax characters inside a word split it into
    a phrase: "IL-6" → "IL 6"; see `evalkit.memory.fts_query`).
    Metrics: `BEIR_METRICS` at every k of `ks` (see the module docstring); top_k = max(ks).
    Raises UsageError for bad options (before anything is loaded), DatasetError for bad data,
    EmbedderError when the real model cannot be loaded.
    """
    _check_store_options(retrieval, tokenizer, query_syntax)
    bench = beir_set(path, split, ks, progress)
    return _run_reference(bench, retrieval, mode, model, tokenizer, query_syntax, gated, cache, progress)


def run_locomo(
    path: str | Path,
    categories: Iterable[str] = STANDARD_CATEGORIES,
    retrieval: str = "bm25",
    mode: str = "deterministic",
    model: str | None = None,
    ks: Sequence[int] = DEFAULT_LOCOMO_KS,
    tokenizer: str = "unicode61",
    query_syntax: str = "delete",
    gated: bool = False,
    cache: bool | str | Path | None = None,
    progress: bool | None = None,
) -> EvalRun:
    """Run the LoCoMo file `path` on the reference store, turn level: each conversation's turns
    are seeded into its own store and its questions of `categories` (default 1-4) search it.
    Metrics: `LOCOMO_METRICS` at every k of `ks`; top_k = max(ks). Other options and errors as in
    `run_beir`, plus those of `locomo_set`.
    """
    _check_store_options(retrieval, tokenizer, query_syntax)
    bench = locomo_set(path, categories, ks, progress)
    return _run_reference(bench, retrieval, mode, model, tokenizer, query_syntax, gated, cache, progress)


def _check_store_options(retrieval: str, tokenizer: str, query_syntax: str) -> None:
    if retrieval not in RETRIEVAL_MODES:
        raise UsageError(f"unknown retrieval {retrieval!r}; use one of: {', '.join(RETRIEVAL_MODES)}")
    if tokenizer not in FTS_TOKENIZERS:
        raise UsageError(f"unknown tokenizer {tokenizer!r}; use one of: {', '.join(FTS_TOKENIZERS)}")
    if query_syntax not in QUERY_SYNTAX_MODES:
        raise UsageError(
            f"unknown query_syntax {query_syntax!r}; use one of: {', '.join(QUERY_SYNTAX_MODES)}"
        )


def _run_reference(
    bench: BenchSet,
    retrieval: str,
    mode: str,
    model: str | None,
    tokenizer: str,
    query_syntax: str,
    gated: bool,
    cache: bool | str | Path | None,
    progress: bool | None,
) -> EvalRun:
    embedder = make_embedder(mode, model=model, cache=cache, progress=progress)
    system = ReferenceSystem(embedder, retrieval=retrieval, tokenizer=tokenizer, query_syntax=query_syntax)
    return run_bench(
        bench, system, mode=mode, embedder_info=embedder_provenance(embedder), gated=gated, progress=progress
    )


def metric_labels(run: EvalRun) -> list[str]:
    """The benchmark metric columns of `run` (those beyond the harness metrics), in column order."""
    return [c for c in run.overall.columns if "@" in c]


def metric_table(
    run: EvalRun, metrics: Sequence[str] | None = None, pass_name: str = "ungated"
) -> pd.DataFrame:
    """One row per scenario of the pass, then an "overall" row: `scenario`, `queries` and the
    mean of each metric (default: every benchmark metric of the run). UsageError for an unknown
    metric or pass."""
    labels = _checked_metrics(run, metrics)
    scenarios = _pass_rows(run.scenarios, pass_name)
    overall = _pass_rows(run.overall, pass_name).assign(scenario="overall")
    columns = ["scenario", "queries", *labels]
    return pd.concat([scenarios[columns], overall[columns]], ignore_index=True)


def category_table(
    run: EvalRun, metrics: Sequence[str] = ("recall@5", "recall@10"), pass_name: str = "ungated"
) -> pd.DataFrame:
    """Per LoCoMo question category: `category` ("1".."5", ascending), `name` (multi-hop,
    temporal, open-domain, single-hop, adversarial), `queries` and the mean of each metric over
    that category's queries; then an "overall" row over all of them. Only queries that count
    toward aggregates are used (every imported query does). UsageError when the run's queries
    carry no category (not a LoCoMo run), or for an unknown metric or pass."""
    labels = _checked_metrics(run, metrics)
    queries = _pass_rows(run.queries, pass_name)
    queries = queries[queries["counted"]]
    if queries.empty or queries["query_category"].isna().any():
        raise UsageError(
            "category_table needs a run whose queries all carry a category, such as a LoCoMo run"
        )
    grouped = queries.groupby("query_category", sort=False)
    table = grouped[labels].mean().join(grouped.size().rename("queries"))
    table = table.loc[sorted(table.index, key=_category_key)].rename_axis("category").reset_index()
    table.insert(1, "name", [LOCOMO_CATEGORIES.get(c, "") for c in table["category"]])
    overall = {"category": "overall", "name": "", "queries": len(queries), **queries[labels].mean().to_dict()}
    table = pd.concat([table, pd.DataFrame([overall])], ignore_index=True)
    return table[["category", "name", "queries", *labels]]


def _category_key(category: str) -> tuple[int, int, str]:
    """Numeric categories first, in numeric order, then any other label alphabetically."""
    return (0, int(category), "") if category.isdigit() else (1, 0, category)


def _checked_metrics(run: EvalRun, metrics: Sequence[str] | None) -> list[str]:
    available = [*HARNESS_METRICS, *metric_labels(run)]
    labels = metric_labels(run) if metrics is None else list(metrics)
    unknown = [m for m in labels if m not in available]
    if unknown:
        raise UsageError(f"metric(s) {', '.join(unknown)} not in this run; available: {', '.join(available)}")
    return labels


def _pass_rows(frame: pd.DataFrame, pass_name: str) -> pd.DataFrame:
    if pass_name not in set(frame["pass"]):
        raise UsageError(f"pass {pass_name!r} not in this run; passes: {', '.join(frame['pass'].unique())}")
    return frame[frame["pass"] == pass_name]
