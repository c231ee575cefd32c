"""The metric registry: what each metric is (name, cutoff rule, harness role) and how a `name@k`
text parses.

A `MetricDef` describes a metric and points at the pure functions that compute it (one module
per metric in this package); a `MetricSpec` is a metric with its cutoff resolved, the thing a
caller computes per query and averages. Names are lower-case; `parse_metric` accepts any case
and surrounding spaces, and `MetricSpec.label` gives the canonical spelling ("ndcg@10").

A metric whose definition carries a `HarnessMetric` is a harness metric (SPEC §3.3):
`score_query` scores it for every query of every pass, and everything keyed by the harness
metrics derives from `HARNESS` (registry order): the per-query scores, the aggregates, the
thresholds file's schema (`harness.thresholds_file.MetricLevels`), the regressions, the frames'
columns, the console's columns and the tables' and charts' labels. A new harness metric is one
module in this package plus one `MetricDef(..., harness=HarnessMetric(...))` line below.

Behaviour metrics (`BEHAVIOUR`) measure memory as a process rather than relevance: stale facts,
forbidden hits, duplicates, rankings that ignore the query, abstention on no-match queries. Each
is scored per query from a `QueryEvidence` (what came back and what the scenario says about the
memory at that query) and only where it applies (None otherwise: a query without `forbid` has no
contamination); they are computed for suites that ask for them (`behaviour_metrics: true` in
suite.yaml), so reports of other suites keep their shape. A new one is a module here plus one
`BehaviourMetric` entry below, which must say what a score of 0 and of 1 means for one query
(the report's legend shows both; the entry is refused without them).

Cutoff rules: `ndcg`, `map`, `recall_all` and `success` need `@k`; `recall`, `precision` and
`mrr` take an optional `@k` (without it they are the SPEC §3.3 harness metrics over everything
returned, so `precision` divides by what was returned while `precision@k` divides by k);
`r_precision` and `hit_rate` take none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import cast

from evalkit.errors import UsageError
from evalkit.metrics.abstention import abstained
from evalkit.metrics.average_precision import average_precision_at_k
from evalkit.metrics.common import relevant_ids
from evalkit.metrics.contamination import contamination
from evalkit.metrics.duplicate_rate import duplicate_rate_at_k
from evalkit.metrics.hit_rate import hit_rate, success_at_k
from evalkit.metrics.ndcg import ndcg_at_k
from evalkit.metrics.precision import precision, precision_at_k
from evalkit.metrics.r_precision import r_precision
from evalkit.metrics.recall import recall, recall_at_k
from evalkit.metrics.recall_all import recall_all_at_k
from evalkit.metrics.reciprocal_rank import reciprocal_rank, reciprocal_rank_at_k
from evalkit.metrics.stale_rate import stale_fact_rate

Scorer = Callable[[Sequence[str], Mapping[str, int]], float]
"""Scores one query from its ranked ids and its qrels (doc id → grade)."""

CutScorer = Callable[[Sequence[str], Mapping[str, int], int], float]
"""Scores one query from its ranked ids, its qrels and a cutoff k >= 1."""

SetScorer = Callable[[Sequence[str], Collection[str]], float]
"""Scores one query from its ranked ids and its relevant-id set (a harness metric, SPEC §3.3)."""

_CUTOFF = re.compile(r"[1-9][0-9]*")


@dataclass(frozen=True, slots=True)
class HarnessMetric:
    """What makes a metric a harness metric and how it is shown.

    `score` scores a query over everything returned, from its relevant-id set. `label` names it
    in tables and chart titles ("MRR"); `column` heads its column of the console's pass table
    and `inline` precedes its value on the console's category lines (left empty, both default to
    the metric's name, filled in by `MetricDef`). `required`: every entry of a thresholds file
    must hold it (True for the four metrics of SPEC §3.5's file format). A metric added later is
    not required, so files recorded before it existed still load; an entry without it is not
    compared on it (no regression for that metric) until the next `evalkit baseline record` records it.
    `rate`: every per-query value is 0 or 1 (hit rate), so its mean is a proportion: its intervals
    are Wilson score intervals and paired comparisons use McNemar's exact test
    (`evalkit.harness.uncertainty`); other metrics are means of scores in [0, 1].
    """

    score: SetScorer
    label: str
    column: str = ""
    inline: str = ""
    required: bool = False
    rate: bool = False


@dataclass(frozen=True, slots=True)
class MetricDef:
    """One metric: its name, a one-line summary, how it scores a query, and its harness role.

    `full` scores the whole returned ranking (None: the metric needs a cutoff); `at_k` scores the
    top k (None: the metric takes no cutoff). `harness` makes it a harness metric (see
    `HarnessMetric`); its `full` then defaults to `harness.score` on the qrels' relevant ids
    (grade >= 1). At least one scorer must be set.
    """

    name: str
    summary: str
    full: Scorer | None = None
    at_k: CutScorer | None = None
    harness: HarnessMetric | None = None

    def __post_init__(self) -> None:
        if self.harness is not None:
            named = replace(
                self.harness, column=self.harness.column or self.name, inline=self.harness.inline or self.name
            )
            object.__setattr__(self, "harness", named)
            if self.full is None:
                object.__setattr__(self, "full", _on_qrels(named.score))
        if self.full is None and self.at_k is None:
            raise UsageError(f"metric {self.name!r} defines no scorer: give it `full`, `at_k` or both")

    @property
    def usage(self) -> str:
        """How to write the metric: `ndcg@k`, `mrr[@k]` or `r_precision`."""
        if self.at_k is None:
            return self.name
        return f"{self.name}@k" if self.full is None else f"{self.name}[@k]"


def _on_qrels(score: SetScorer) -> Scorer:
    """Adapt a harness metric on a relevant-id set to qrels (relevant = grade >= 1)."""

    def scorer(retrieved: Sequence[str], qrels: Mapping[str, int]) -> float:
        return score(retrieved, relevant_ids(qrels))

    scorer.__name__ = score.__name__
    scorer.__doc__ = score.__doc__
    return scorer


_DEFINITIONS = (
    MetricDef("ndcg", "nDCG of the top k, linear gains (trec_eval ndcg_cut_k)", at_k=ndcg_at_k),
    MetricDef("map", "average precision of the top k (trec_eval map_cut_k)", at_k=average_precision_at_k),
    MetricDef(
        "recall",
        "share of relevant retrieved; @k: in the top k (trec_eval set_recall / recall_k)",
        at_k=recall_at_k,
        harness=HarnessMetric(recall, "recall", required=True),
    ),
    MetricDef(
        "precision",
        "share of the returned ids that are relevant; @k: relevant in top k / k (trec_eval set_P / P_k)",
        at_k=precision_at_k,
        harness=HarnessMetric(precision, "precision", column="prec", required=True),
    ),
    MetricDef("recall_all", "1 if every relevant document is in the top k", at_k=recall_all_at_k),
    MetricDef("r_precision", "precision of the top R, R = |relevant| (trec_eval Rprec)", full=r_precision),
    MetricDef("success", "1 if a relevant document is in the top k (trec_eval success_k)", at_k=success_at_k),
    MetricDef(
        "mrr",
        "reciprocal rank of the first relevant; @k: within the top k (trec_eval recip_rank)",
        at_k=reciprocal_rank_at_k,
        harness=HarnessMetric(reciprocal_rank, "MRR", required=True),
    ),
    MetricDef(
        "hit_rate",
        "1 if any relevant document was returned",
        harness=HarnessMetric(hit_rate, "hit rate", column="hit", inline="hit", required=True, rate=True),
    ),
)

METRICS: Mapping[str, MetricDef] = MappingProxyType({metric.name: metric for metric in _DEFINITIONS})
"""Every metric by name, in display order."""

HARNESS: Mapping[str, HarnessMetric] = MappingProxyType(
    {metric.name: metric.harness for metric in _DEFINITIONS if metric.harness is not None}
)
"""The harness metrics (SPEC §3.3) by name, in registry order."""

HARNESS_METRICS: tuple[str, ...] = tuple(HARNESS)
"""The harness metrics' names, in order: the metric keys of every query, aggregate, baseline and
frame (benchmarks add `name@k` metrics), and the `QueryScores` field names."""


@dataclass(frozen=True, slots=True)
class QueryEvidence:
    """What a behaviour metric scores one query from: the returned ids in rank order and their
    `low_confidence` flags; the content of every thought in memory when the query was asked
    (id → content, updates applied); the query's `forbid` ids; the stale ids (superseded by a
    thought in memory, or deleted by an earlier step); whether the query has no answer in memory
    (`no_relevant` or `expect_no_strong_match`); its top_k."""

    retrieved: tuple[str, ...]
    low_confidence: tuple[bool | None, ...]
    contents: Mapping[str, str]
    forbidden: frozenset[str]
    stale: frozenset[str]
    no_match: bool
    top_k: int


EvidenceScorer = Callable[[QueryEvidence], "float | None"]
"""Scores one query from its evidence; None where the metric does not apply to it."""


@dataclass(frozen=True, slots=True)
class BehaviourMetric:
    """A behaviour metric: its name, label and summary, whether lower is better, what a score of
    0 and of 1 means for one query (`zero_means`, `one_means`: the report's legend shows them, so
    both are required and must say something: UsageError for a blank one), and its per-query
    scorer (None for `query_sensitivity`, which compares the queries of a scenario with each
    other and is scored by the harness when a scenario's queries are assembled)."""

    name: str
    label: str
    summary: str
    lower_is_better: bool
    zero_means: str
    one_means: str
    score: EvidenceScorer | None = None

    def __post_init__(self) -> None:
        blank = [field for field in ("zero_means", "one_means") if not getattr(self, field).strip()]
        if blank:
            raise UsageError(
                f"behaviour metric {self.name!r} leaves {' and '.join(blank)} blank: say what a score of "
                "0 and of 1 means for one query (the report's legend shows it)"
            )


_BEHAVIOUR = (
    BehaviourMetric(
        "stale_fact_rate", "stale-fact rate",
        "share of returned ids superseded or deleted (queries whose memory holds stale ids)", True,
        zero_means="no superseded or deleted id came back",
        one_means="every id returned was superseded or deleted",
        score=lambda e: stale_fact_rate(e.retrieved, e.stale) if e.stale else None,
    ),
    BehaviourMetric(
        "contamination", "contamination",
        "share of returned ids that are forbidden (queries with forbid)", True,
        zero_means="no forbidden id came back",
        one_means="every id returned is one the query forbids",
        score=lambda e: contamination(e.retrieved, e.forbidden) if e.forbidden else None,
    ),
    BehaviourMetric(
        "duplicate_rate", "duplicate rate@k", "share of the top k repeating the content of a hit above", True,
        zero_means="every hit in the top k says something new",
        one_means="every hit below the first repeats content already shown",
        score=lambda e: duplicate_rate_at_k(e.retrieved, e.contents, e.top_k),
    ),
    BehaviourMetric(
        "query_sensitivity", "query sensitivity", "1 when no query of another text in the scenario got the "
        "same ranking (scenarios of two or more query texts)", False,
        zero_means="another query of the scenario got the very same ranking (the query was ignored)",
        one_means="each query text got a ranking of its own",
    ),
    BehaviourMetric(
        "abstention", "abstention", "1 when a no-match query got no hit or only low-confidence ones", False,
        zero_means="a query with no answer in memory still got confident hits",
        one_means="it got no hit, or only hits flagged low-confidence",
        score=lambda e: abstained(e.low_confidence) if e.no_match else None,
    ),
)  # fmt: skip

BEHAVIOUR: Mapping[str, BehaviourMetric] = MappingProxyType({m.name: m for m in _BEHAVIOUR})
"""The behaviour metrics by name, in display order."""

BEHAVIOUR_METRICS: tuple[str, ...] = tuple(BEHAVIOUR)
"""The behaviour metrics' names, in order: the keys of `QueryResult.behaviour` and the means."""


def score_behaviour(evidence: QueryEvidence) -> dict[str, float]:
    """Every per-query behaviour metric that applies to the query of `evidence`, in order."""
    scores = {m.name: m.score(evidence) for m in _BEHAVIOUR if m.score is not None}
    return {name: value for name, value in scores.items() if value is not None}


def _valid_metrics() -> str:
    return ", ".join(definition.usage for definition in METRICS.values())


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A metric with its cutoff resolved: `k` is None exactly when the metric is used uncut.

    Construction checks the cutoff against the metric's rule and raises `UsageError` when it
    does not fit, so every `MetricSpec` can compute.
    """

    metric: MetricDef
    k: int | None = None

    def __post_init__(self) -> None:
        name = self.metric.name
        if self.k is None:
            if self.metric.full is None:
                raise UsageError(
                    f"metric {name!r} needs a cutoff: write {name}@k, e.g. {name}@10; "
                    f"valid metrics: {_valid_metrics()}"
                )
        elif self.metric.at_k is None:
            raise UsageError(
                f"metric {name!r} takes no cutoff: write {name} without @{self.k}; "
                f"valid metrics: {_valid_metrics()}"
            )
        elif isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise UsageError(f"cutoff of {name!r} must be a positive integer, got {self.k!r}; e.g. {name}@10")

    @property
    def name(self) -> str:
        """The metric's registry name, without cutoff."""
        return self.metric.name

    @property
    def label(self) -> str:
        """Canonical text of the spec, e.g. `ndcg@10` or `mrr`; usable as a column name."""
        return self.metric.name if self.k is None else f"{self.metric.name}@{self.k}"

    def compute(self, retrieved: Sequence[str], qrels: Mapping[str, int]) -> float:
        """Score one query: `retrieved` ranked best first (deduplicated inside), `qrels` id → grade."""
        # __post_init__ guarantees the scorer needed for this cutoff exists.
        if self.k is None:
            return cast(Scorer, self.metric.full)(retrieved, qrels)
        return cast(CutScorer, self.metric.at_k)(retrieved, qrels, self.k)


def parse_metric(text: str) -> MetricSpec:
    """Parse `name` or `name@k` (e.g. "ndcg@10", "MRR", " recall @ 100 ") into a `MetricSpec`.

    Raises `UsageError` naming the text and listing the valid metrics when the name is unknown,
    when the cutoff is missing or not a positive integer (no sign, no leading zero), or when it
    does not fit the metric's cutoff rule.
    """
    name_text, at, k_text = text.partition("@")
    name = name_text.strip().lower()
    definition = METRICS.get(name)
    if definition is None:
        raise UsageError(f"unknown metric {text!r}; valid metrics: {_valid_metrics()}")
    if not at:
        return MetricSpec(definition)
    k_text = k_text.strip()
    if not _CUTOFF.fullmatch(k_text):
        problem = "missing cutoff after '@'" if not k_text else f"invalid cutoff {k_text!r}"
        raise UsageError(
            f"{problem} in metric {text!r}: k must be a positive integer, e.g. {name}@10; "
            f"valid metrics: {_valid_metrics()}"
        )
    return MetricSpec(definition, int(k_text))


def parse_metrics(text: str) -> tuple[MetricSpec, ...]:
    """Parse a comma-separated list such as "ndcg@10,recall@100,mrr", keeping its order.

    Raises `UsageError` for an empty list, an empty item ("ndcg@10,,mrr"), any item
    `parse_metric` rejects, or two items with the same label.
    """
    items = text.split(",")
    if not text.strip():
        raise UsageError(f"no metrics given in {text!r}; write e.g. ndcg@10,recall@100")
    specs: list[MetricSpec] = []
    for position, item in enumerate(items, start=1):
        if not item.strip():
            raise UsageError(f"empty metric at position {position} of {text!r}; remove the extra comma")
        spec = parse_metric(item)
        if any(seen.label == spec.label for seen in specs):
            raise UsageError(f"metric {spec.label!r} is listed twice in {text!r}; keep one")
        specs.append(spec)
    return tuple(specs)
