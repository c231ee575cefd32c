"""Hard per-query assertions (SPEC §3.4) and the scenario status they imply.

Checks run in a fixed order — forbid, no_relevant, expect_no_strong_match, rank_before — and
return one readable message per violation. They never pass vacuously: a hit that carries no
confidence signal fails `expect_no_strong_match`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from evalkit.records import Hit
from evalkit.scenarios.model import QuerySpec


def check_query(query: QuerySpec, hits: Sequence[Hit], own_ids: Collection[str]) -> list[str]:
    """Every assertion error of `query` against `hits` (rank order); [] when all hold.

    `own_ids` are the scenario's own thought ids (distractors excluded), used by `no_relevant`.
    """
    rank: dict[str, int] = {}
    for hit in hits:
        rank.setdefault(hit.id, hit.rank)
    errors: list[str] = []
    for forbidden in query.forbid:
        if forbidden in rank:
            errors.append(f"forbid: {forbidden!r} was retrieved at rank {rank[forbidden]}")
    if query.no_relevant:
        for hit in hits:
            if hit.id in own_ids:
                errors.append(
                    f"no_relevant: the scenario's own thought {hit.id!r} was retrieved at rank {hit.rank}"
                )
    if query.expect_no_strong_match:
        for hit in hits:
            if hit.low_confidence is None:
                errors.append(
                    f"expect_no_strong_match: {hit.id!r} at rank {hit.rank} has no confidence signal"
                )
            elif not hit.low_confidence:
                errors.append(
                    f"expect_no_strong_match: {hit.id!r} at rank {hit.rank} is a strong match "
                    f"(matched by {'+'.join(hit.match_source) or 'nothing'}, similarity {hit.similarity})"
                )
    if query.rank_before is not None:
        before, after = query.rank_before.before, query.rank_before.after
        if before not in rank:
            errors.append(f"rank_before: {before!r} was not retrieved (expected above {after!r})")
        elif after in rank and rank[after] < rank[before]:
            errors.append(
                f"rank_before: {before!r} (rank {rank[before]}) ranks below {after!r} (rank {rank[after]})"
            )
    return errors


def scenario_status(outcome: str, has_errors: bool) -> str:
    """pass/fail for outcome "pass"; xfail (errors, as expected) / xpass (none) for outcome "xfail"."""
    if outcome == "xfail":
        return "xfail" if has_errors else "xpass"
    return "fail" if has_errors else "pass"
