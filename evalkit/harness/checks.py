"""Hard per-query assertions (SPEC §3.4) and the scenario status they imply.

`check_query` runs every assertion of the registry (`evalkit.scenarios.assertions.ASSERTIONS`) in
its order — forbid, no_relevant, expect_no_strong_match, rank_before — and returns one readable
message per violation, each starting with the assertion's field. They never pass vacuously: a hit
that carries no confidence signal fails `expect_no_strong_match`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from evalkit.records import Hit
from evalkit.scenarios import assertions
from evalkit.scenarios.model import QuerySpec


def check_query(query: QuerySpec, hits: Sequence[Hit], own_ids: Collection[str]) -> list[str]:
    """Every assertion error of `query` against `hits` (rank order); [] when all hold.

    `own_ids` are the scenario's own thought ids (distractors excluded), used by `no_relevant`.
    The registry is read at each call, so an assertion registered later is checked too.
    """
    return [error for assertion in assertions.ASSERTIONS for error in assertion.errors(query, hits, own_ids)]


def scenario_status(outcome: str, has_errors: bool) -> str:
    """pass/fail for outcome "pass"; xfail (errors, as expected) / xpass (none) for outcome "xfail"."""
    if outcome == "xfail":
        return "xfail" if has_errors else "xpass"
    return "fail" if has_errors else "pass"
