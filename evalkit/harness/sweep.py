"""Re-apply the relevance gate at another value to a run's recorded candidates (no re-seeding, no
re-embedding, no search): the basis of the gate sweep.

The gated pass records, per query, every row that reached the gate in pipeline order, with the
two signals the gate reads (`QueryResult.gate_candidates`). The gate at floor f keeps a row when
BM25 matched it or its similarity is >= f (SPEC §1.3 step 8; f <= 0 keeps every row), then the
search slices to top_k. Because the candidate budget is the same for every gate (4·top_k under
`supersession="suppress"`, which the harness always uses) and the gate only removes rows, this
gives exactly the gated pass that a run at f would have produced (tests/harness/test_sweep.py compares
with direct runs), and at f = 0 the ungated pass.

Decisions:
- Queries without recorded candidates keep their recorded result: queries that pin their own
  `min_relevance` (they use it in every pass) and systems that report no candidates.
- A re-gated query carries ids, metrics and gate counts only: its `hits` and `check_errors` are
  left empty (rows that a lower gate lets into the top-k were never recorded with their signals),
  and its metrics are the harness metrics (benchmark metrics such as ndcg@10 are not re-scored).
  Scenario statuses are those of the recorded gated pass.
- The reference system does not declare `regate` when its pipeline's strength or gate step is
  mutated, so such a run is never re-gated under a rule its gate does not follow.
"""

from __future__ import annotations

from collections.abc import Callable

from evalkit.errors import UsageError
from evalkit.harness.aggregation import mean_metrics, pass_result
from evalkit.harness.results import GATED, DroppedRecord, PassResult, QueryResult, RunResult, ScenarioResult
from evalkit.metrics import HARNESS_METRICS, score_query
from evalkit.records import GateCandidate
from evalkit.systems.declaration import REGATE_RULE


def lost_from_top_k(ungated: QueryResult, gated: QueryResult) -> list[str]:
    """The relevant ids `ungated` retrieved that `gated` (the same query under the gate) did not,
    in ungated rank order: what the gate took out of the user's top-k. Both passes draw on the same
    over-fetched pool and the gate only removes rows, so these are exactly the relevant rows of the
    ungated top-k that the gate dropped."""
    relevant, kept = set(ungated.relevant), set(gated.retrieved)
    return [i for i in ungated.retrieved if i in relevant and i not in kept]


def regate_query(
    query: QueryResult, min_relevance: float, keeps: Callable[[GateCandidate, float], bool] = REGATE_RULE
) -> QueryResult:
    """`query` as the gate at `min_relevance` would have returned it, the gate keeping a
    recorded candidate when `keeps` does (see the module docstring); `query` itself when it has
    no recorded candidates."""
    if query.gate_candidates is None:
        return query.model_copy(update={"metrics": {m: query.metrics[m] for m in HARNESS_METRICS}})
    rows = query.gate_candidates
    kept = [c for c in rows if keeps(c.candidate(), min_relevance)]
    retrieved = list(dict.fromkeys(c.id for c in kept[: query.top_k]))
    kept_ids = {c.id for c in kept}
    relevant = set(query.relevant)
    gated = min_relevance > 0.0
    return query.model_copy(
        update={
            "retrieved": retrieved,
            "hits": [],
            "metrics": score_query(retrieved, relevant).as_dict(),
            "check_errors": [],
            "candidates": len(rows) if gated else 0,
            "dropped": [
                DroppedRecord(id=c.id, relevant=c.id in relevant) for c in rows if c.id not in kept_ids
            ],
        }
    )


def regate_pass(result: RunResult, min_relevance: float) -> PassResult:
    """The gated pass of `result` re-gated at `min_relevance`, as a pass of role re-gated named
    `regated_name(min_relevance)` (add it to the run with `RunResult.with_pass`): per-query
    results, scenario means, category and overall means over counted scenarios, and the gate's
    totals. UsageError saying why (`unavailable`) when the run has no gated pass, its system did
    not declare `regate`, or it recorded no candidates (a report written before they were
    recorded: re-run it)."""
    reason = unavailable(result)
    gated = result.gated
    if reason is not None or gated is None:
        raise UsageError(f"cannot sweep the gate: {reason}")
    if not 0.0 <= min_relevance <= 1.0:
        raise UsageError(f"a gate value must be in [0, 1], got {min_relevance}")
    scenarios = [_regate_scenario(s, min_relevance) for s in gated.scenarios]
    return pass_result(regated_name(min_relevance), "re-gated", scenarios, min_relevance)


def regated_name(min_relevance: float) -> str:
    """The name of the gated pass re-gated at `min_relevance`: "gated@0.6"."""
    return f"{GATED}@{min_relevance:g}"


def unavailable(result: RunResult) -> str | None:
    """Why `result` cannot be re-gated, or None when it can."""
    gated = result.gated
    declared = result.provenance.declaration
    if gated is None and "relevance_gate" not in declared.capabilities:
        return f"the run's system {result.system!r} declares no relevance gate, so the run has no gated pass"
    if gated is None:
        return "the run has no gated pass (it ran with --gated-pass off); re-run it without --gated-pass off"
    if not declared.regates:
        return (
            f"the run's system {result.system!r} does not declare the regate capability (that its gate "
            "can be re-applied to the rows it reported), so its gate is not re-applied"
        )
    if not any(q.gate_candidates is not None for s in gated.scenarios for q in s.queries):
        return (
            "the run recorded no gate candidates (written by an older evalkit, or by a system that "
            "reports none); re-run it with this version"
        )
    return None


def _regate_scenario(scenario: ScenarioResult, min_relevance: float) -> ScenarioResult:
    queries = [regate_query(q, min_relevance) for q in scenario.queries]
    return scenario.model_copy(update={"queries": queries, "metrics": mean_metrics(queries)})
