"""Repeated runs of one suite: which queries got other ids, or the same ids in another order?

`evalkit run --repeat N` (`evalkit.run_eval(repeat=N)`) runs the suite N times on the same
system at the same clock and compares, per pass and query, the retrieved ids. A query is
*unstable* when its rankings differ between runs: `change` "ids" when the set of ids differs
(a relevant id may fall in or out of the top_k, and the metrics move), "order" when only the
order differs. The first run is the one reported; `Stability` is saved with it under the
report's optional `stability` key (absent for a run without --repeat), and the verdict names
the unstable queries (`evalkit.harness.verdict.judge`). Instability does not change the verdict's
value: it says the value may not hold on a rerun, with the queries that decide it.

A baseline is recorded from repeated runs only when they agree (`Stability.agree`), unless the
caller accepts the disagreement, which the entry then records as its `note`
(`evalkit.harness.baselines.record_baseline`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from evalkit.validation import FrozenModel

MAX_REPEAT = 100
"""The most runs `repeat` may ask for: each is a whole run of the suite, and a disagreement shows
in two or three."""

if TYPE_CHECKING:
    from evalkit.harness.results import RunResult

UNSTABLE_SHOWN = 10
"""At most this many unstable queries are named in a verdict reason or a note (then "and N more")."""


class UnstableQuery(FrozenModel):
    """One query whose rankings differed between repeated runs: its pass (`pass_name`), `scenario`, `query`
    (0-based index, as `DegenerateFinding.query`), its text, what changed (`change`: "ids" or
    "order") and each distinct ranking seen, in the order the runs first gave it (`rankings`),
    with the 1-based runs that gave it (`runs`, one list per ranking)."""

    pass_name: str
    scenario: str
    query: int
    text: str
    change: Literal["ids", "order"]
    rankings: list[list[str]]
    runs: list[list[int]]

    @property
    def label(self) -> str:
        """ "scenario query N (ids)": how messages name it (1-based query number)."""
        return f"{self.scenario} query {self.query + 1} ({self.change})"


class Stability(FrozenModel):
    """What `runs` repeated runs showed: the `unstable` queries (measurement pass first, then
    the other passes, each in suite and query order) and each run's verdict (`verdicts`, run 1
    first — the reported run's)."""

    runs: int = Field(ge=2)
    unstable: list[UnstableQuery]
    verdicts: list[str]

    @property
    def agree(self) -> bool:
        """Every run gave every query the same ids in the same order."""
        return not self.unstable

    def summary(self) -> str:
        """One line: how many queries differed between the runs, naming the first
        `UNSTABLE_SHOWN` of them (measurement pass; other passes counted)."""
        if self.agree:
            return f"{self.runs} runs agree: every query got the same ids in the same order"
        measured = [u for u in self.unstable if u.pass_name == self.unstable[0].pass_name]
        names = ", ".join(u.label for u in measured[:UNSTABLE_SHOWN])
        more = f" and {len(measured) - UNSTABLE_SHOWN} more" if len(measured) > UNSTABLE_SHOWN else ""
        others = len(self.unstable) - len(measured)
        rest = f" (+{others} in other passes)" if others else ""
        verdicts = "" if len(set(self.verdicts)) == 1 else f"; verdicts per run: {', '.join(self.verdicts)}"
        return (
            f"unstable rankings: {len(measured)} quer{'y' if len(measured) == 1 else 'ies'} got other ids "
            f"or another order in {self.runs} runs{rest}: {names}{more}{verdicts}"
        )


def compare_runs(results: Sequence[RunResult]) -> Stability:
    """The stability of `results` — two or more runs of the same suite and configuration, run 1
    first. ValueError for fewer than two runs, or runs whose passes, scenarios or queries differ
    (not repeats of one run)."""
    if len(results) < 2:
        raise ValueError(f"comparing repeated runs needs at least two; got {len(results)}")
    first = results[0]
    unstable: list[UnstableQuery] = []
    for one in first.passes:
        others = [r.pass_named(one.name) for r in results[1:]]
        if any(p is None for p in others):
            raise ValueError(f"pass {one.name!r} is missing from a repeated run")
        for index, scenario in enumerate(one.scenarios):
            repeats = [p.scenarios[index] for p in others if p is not None]
            if any(s.name != scenario.name or len(s.queries) != len(scenario.queries) for s in repeats):
                raise ValueError(f"scenario {scenario.name!r} differs between repeated runs")
            for position, query in enumerate(scenario.queries):
                seen = [tuple(query.retrieved), *(tuple(s.queries[position].retrieved) for s in repeats)]
                if len(set(seen)) > 1:
                    unstable.append(_unstable(one.name, scenario.name, query.index, query.query, seen))
    return Stability(runs=len(results), unstable=unstable, verdicts=[r.outcome.value for r in results])


def _unstable(
    pass_name: str, scenario: str, index: int, text: str, seen: list[tuple[str, ...]]
) -> UnstableQuery:
    rankings: dict[tuple[str, ...], list[int]] = {}
    for run, ranking in enumerate(seen, start=1):
        rankings.setdefault(ranking, []).append(run)
    change: Literal["ids", "order"] = "ids" if len({frozenset(r) for r in rankings}) > 1 else "order"
    return UnstableQuery.model_validate(
        {
            "pass_name": pass_name,
            "scenario": scenario,
            "query": index,
            "text": text,
            "change": change,
            "rankings": [list(r) for r in rankings],
            "runs": list(rankings.values()),
        }
    )
