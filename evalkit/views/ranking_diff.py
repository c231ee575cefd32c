"""How the ranking of each query changed between two saved runs: which ids entered the top-k,
which left it and which moved, biggest changes first.

`ranking_diff(a, b)` pairs the queries of one pass of each run by (scenario, query number), as
`evalkit.compare_runs` does, and returns one row per paired query whose ranking changed
(RANKING_DIFF_COLUMNS):
- `entered`: ids B retrieved that A did not, in B's rank order; `left`: ids A retrieved that B
  did not, in A's rank order; `moved`: ids both retrieved at different ranks, as
  "id 3→1" (A's rank → B's), biggest move first.
- Each id is marked: "+" after a relevant id (`id+`), "!" after a forbidden one (`id!`). A
  report does not store a query's forbidden ids; an id counts as forbidden when a `forbid`
  assertion of either run's pass named it. That finds every forbidden id of the diff: a
  forbidden id that entered, left or moved was retrieved by a run, whose forbid check named it.
- `change`: the size of the change, the number of ids that entered plus those that left plus
  the sum of the rank steps of those that moved; rows are sorted by it (largest first), then
  in A's suite order. `relevant_entered` / `relevant_left` count relevant ids; `forbidden_entered`
  counts forbidden ids that entered (what a reader checks first).
Queries present in only one run are not paired (see `RunComparison.only_a`/`only_b`).
"""

from __future__ import annotations

import re

import pandas as pd

from evalkit.errors import UsageError
from evalkit.views.frames import EvalRun

RANKING_DIFF_COLUMNS: tuple[str, ...] = (
    "scenario", "query_number", "query_id", "query", "change", "entered", "left", "moved",
    "relevant_entered", "relevant_left", "forbidden_entered",
)  # fmt: skip
"""One row per paired query whose ranking changed, biggest `change` first (see the module
docstring): `entered`, `left` and `moved` are lists of marked ids ("+" relevant, "!" forbidden)."""

RELEVANT_MARK = "+"
FORBIDDEN_MARK = "!"

_FORBID = re.compile(r"^forbid: '(?P<id>.+)' was retrieved")
"""A forbid assertion's error (`evalkit.scenarios.assertions`: "forbid: 'x' was retrieved at rank 2")."""


def ranking_diff(a: EvalRun, b: EvalRun, *, pass_name: str = "ungated") -> pd.DataFrame:
    """The ranking changes from `a` to `b` on `pass_name` (RANKING_DIFF_COLUMNS; empty with the
    columns when no ranking changed). UsageError when a run lacks the pass."""
    sides = [_rows(run, pass_name, label) for run, label in ((a, "A"), (b, "B"))]
    paired = sides[0].merge(sides[1], on=["scenario", "query_number"], suffixes=("_a", "_b"))
    rows = []
    for order, row in enumerate(paired.to_dict("records")):
        before, after = list(row["retrieved_a"]), list(row["retrieved_b"])
        if before == after:
            continue
        relevant: set[str] = set(row["relevant_a"]) | set(row["relevant_b"])
        forbidden = _forbidden(row["check_errors_a"]) | _forbidden(row["check_errors_b"])

        def mark(i: str, relevant: set[str] = relevant, forbidden: set[str] = forbidden) -> str:
            return i + (RELEVANT_MARK if i in relevant else "") + (FORBIDDEN_MARK if i in forbidden else "")

        entered = [i for i in after if i not in before]
        left = [i for i in before if i not in after]
        moves = sorted(
            ((i, before.index(i) + 1, after.index(i) + 1) for i in after if i in before),
            key=lambda m: -abs(m[1] - m[2]),
        )
        moved = [(i, x, y) for i, x, y in moves if x != y]
        rows.append(
            {
                "scenario": row["scenario"],
                "query_number": row["query_number"],
                "query_id": row["query_id_a"],
                "query": row["query_a"],
                "change": len(entered) + len(left) + sum(abs(x - y) for _, x, y in moved),
                "entered": [mark(i) for i in entered],
                "left": [mark(i) for i in left],
                "moved": [f"{mark(i)} {x}→{y}" for i, x, y in moved],
                "relevant_entered": sum(i in relevant for i in entered),
                "relevant_left": sum(i in relevant for i in left),
                "forbidden_entered": sum(i in forbidden for i in entered),
                "_order": order,
            }
        )
    frame = pd.DataFrame(rows, columns=[*RANKING_DIFF_COLUMNS, "_order"])
    frame = frame.sort_values(["change", "_order"], ascending=[False, True], kind="stable")
    return frame.drop(columns="_order").reset_index(drop=True)


def _rows(run: EvalRun, pass_name: str, label: str) -> pd.DataFrame:
    queries = run.queries
    rows = queries[queries["pass"] == pass_name]
    if rows.empty:
        raise UsageError(f"run {label} has no {pass_name} pass to compare")
    return rows[["scenario", "query_number", "query_id", "query", "relevant", "retrieved", "check_errors"]]


def _forbidden(errors: list[str]) -> set[str]:
    return {m.group("id") for e in errors if (m := _FORBID.match(e))}
