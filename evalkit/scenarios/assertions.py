"""The assertion registry: the hard per-query assertions of SPEC §3.4, each one small unit.

An `Assertion` declares everything the rest of evalkit needs to know about it:
- `field`: the `QuerySpec` field it reads (also the first word of each of its messages);
- `needs`: the capability a system must declare for the assertion to mean anything (None: any
  system), which `evalkit.scenarios.requirements` adds to a scenario using the assertion;
- `references`: the thought ids it names, each with its field path, which
  `evalkit.scenarios.references` checks for dangling ids;
- `problems`: its own consistency rules on the query, given its scenario (an id listed twice,
  `before` == `after`, a query labelled neither by `relevant` nor by `no_relevant`), also
  reported by `evalkit.scenarios.references`;
- `check`: the error messages of the assertion against a query's hits.

`ASSERTIONS` lists them in the order SPEC §3.4 checks them: forbid, no_relevant,
expect_no_strong_match, rank_before. `evalkit.harness.checks.check_query`, the requirements and the
reference checks read this module's `ASSERTIONS` when they run, never a copy taken at import, so a
test can register an assertion by replacing it. A new assertion is one `Assertion` here (its
functions beside it), its place in `ASSERTIONS`, and its field on `QuerySpec` in
`evalkit.scenarios.model`.

Checks never pass vacuously: a hit that carries no confidence signal fails
`expect_no_strong_match`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from evalkit.records import Hit
from evalkit.scenarios.model import QuerySpec, Scenario
from evalkit.systems.capabilities import Capability
from evalkit.validation import shown_value

Located = tuple[str, str]
"""(field path inside the query, value): `("forbid[1]", "old")`, or for a problem
`("rank_before", "before and after are both 'a'; name two thoughts")`."""

Check = Callable[[QuerySpec, Sequence[Hit], Collection[str]], list[str]]
"""An assertion's check: (query, hits in rank order, the scenario's own thought ids) → one message
per violation, without the `<field>: ` prefix that `Assertion.errors` adds."""


Problems = Callable[[QuerySpec, Scenario], list[Located]]
"""An assertion's consistency rules: (query, the scenario holding it) → (field path, message) per
problem, the path without the query's own `queries[i].` prefix."""


def _no_references(query: QuerySpec) -> list[Located]:
    return []


def _no_problems(query: QuerySpec, scenario: Scenario) -> list[Located]:
    return []


@dataclass(frozen=True, slots=True)
class Assertion:
    """One hard per-query assertion (see the module docstring for what each part is used by).

    The assertion applies to a query whose `field` is set (truthy: a non-empty list, true, an
    object); only then is `check` run and `needs` required. `references` and `problems` are asked
    of every query (a problem may be about the field being unset, as `no_relevant`'s is).
    """

    field: str
    needs: Capability | None
    check: Check
    references: Callable[[QuerySpec], list[Located]] = _no_references
    problems: Problems = _no_problems

    def applies(self, query: QuerySpec) -> bool:
        """Whether `query` uses this assertion: its field holds a truthy value."""
        return bool(getattr(query, self.field))

    def errors(self, query: QuerySpec, hits: Sequence[Hit], own_ids: Collection[str]) -> list[str]:
        """Every violation of this assertion, each `<field>: <message>`; [] when it holds or does
        not apply to `query`."""
        if not self.applies(query):
            return []
        return [f"{self.field}: {message}" for message in self.check(query, hits, own_ids)]


def _first_ranks(hits: Sequence[Hit]) -> dict[str, int]:
    """Each retrieved id's rank at its first occurrence."""
    rank: dict[str, int] = {}
    for hit in hits:
        rank.setdefault(hit.id, hit.rank)
    return rank


def listed_twice(name: str, ids: Sequence[str]) -> list[Located]:
    """`<name>[i]: <id> is listed twice` for every repeat of an id in `ids` (the first stays)."""
    seen: set[str] = set()
    problems = []
    for i, ref in enumerate(ids):
        if ref in seen:
            problems.append((f"{name}[{i}]", f"{shown_value(ref)} is listed twice"))
        seen.add(ref)
    return problems


# ------------------------------------------------------------------------------------ forbid


def _forbid_check(query: QuerySpec, hits: Sequence[Hit], own_ids: Collection[str]) -> list[str]:
    rank = _first_ranks(hits)
    return [f"{ref!r} was retrieved at rank {rank[ref]}" for ref in query.forbid if ref in rank]


def _forbid_references(query: QuerySpec) -> list[Located]:
    return [(f"forbid[{i}]", ref) for i, ref in enumerate(query.forbid)]


def _forbid_problems(query: QuerySpec, scenario: Scenario) -> list[Located]:
    problems = listed_twice("forbid", query.forbid)
    problems.extend(
        (
            f"forbid[{i}]",
            f"{shown_value(ref)} is also in relevant; an id cannot be both relevant and forbidden",
        )
        for i, ref in enumerate(query.forbid)
        if ref in query.relevant
    )
    return problems


FORBID = Assertion("forbid", None, _forbid_check, references=_forbid_references, problems=_forbid_problems)
"""`forbid`: each forbidden id retrieved is an error."""


# ------------------------------------------------------------------------------------ no_relevant


def _no_relevant_check(query: QuerySpec, hits: Sequence[Hit], own_ids: Collection[str]) -> list[str]:
    return [
        f"the scenario's own thought {hit.id!r} was retrieved at rank {hit.rank}"
        for hit in hits
        if hit.id in own_ids
    ]


def _no_relevant_problems(query: QuerySpec, scenario: Scenario) -> list[Located]:
    if query.relevant and query.no_relevant:
        return [("no_relevant", "no_relevant is true but relevant lists ids; keep one of the two")]
    if not query.relevant and not query.no_relevant and not scenario.measure_only:
        return [
            (
                "relevant",
                "no relevant ids; list the thought ids this query should retrieve, "
                "or set no_relevant: true if nothing should match",
            )
        ]
    return []


NO_RELEVANT = Assertion("no_relevant", None, _no_relevant_check, problems=_no_relevant_problems)
"""`no_relevant`: each of the scenario's own (non-distractor) thoughts retrieved is an error. A
query is labelled by at most one of `relevant` and `no_relevant`, and by one of them unless its
scenario is `measure_only` (an unjudged query: measured and asserted on, in no mean)."""


# ------------------------------------------------------------------------ expect_no_strong_match


def _no_strong_match_check(query: QuerySpec, hits: Sequence[Hit], own_ids: Collection[str]) -> list[str]:
    errors = []
    for hit in hits:
        if hit.low_confidence is None:
            errors.append(f"{hit.id!r} at rank {hit.rank} has no confidence signal")
        elif not hit.low_confidence:
            errors.append(
                f"{hit.id!r} at rank {hit.rank} is a strong match "
                f"(matched by {'+'.join(hit.match_source) or 'nothing'}, similarity {hit.similarity})"
            )
    return errors


EXPECT_NO_STRONG_MATCH = Assertion("expect_no_strong_match", "confidence", _no_strong_match_check)
"""`expect_no_strong_match`: each retrieved hit that is strong (`low_confidence` false) is an
error, and so is a hit without confidence information (never pass vacuously)."""


# ------------------------------------------------------------------------------------ rank_before


def _rank_before_check(query: QuerySpec, hits: Sequence[Hit], own_ids: Collection[str]) -> list[str]:
    if query.rank_before is None:
        return []
    before, after = query.rank_before.before, query.rank_before.after
    rank = _first_ranks(hits)
    if before not in rank:
        return [f"{before!r} was not retrieved (expected above {after!r})"]
    if after in rank and rank[after] < rank[before]:
        return [f"{before!r} (rank {rank[before]}) ranks below {after!r} (rank {rank[after]})"]
    return []


def _rank_before_references(query: QuerySpec) -> list[Located]:
    rb = query.rank_before
    return [] if rb is None else [("rank_before.before", rb.before), ("rank_before.after", rb.after)]


def _rank_before_problems(query: QuerySpec, scenario: Scenario) -> list[Located]:
    rb = query.rank_before
    if rb is None or rb.before != rb.after:
        return []
    return [("rank_before", f"before and after are both {shown_value(rb.before)}; name two thoughts")]


RANK_BEFORE = Assertion(
    "rank_before",
    None,
    _rank_before_check,
    references=_rank_before_references,
    problems=_rank_before_problems,
)
"""`rank_before`: an error if `before` is not retrieved or ranks below `after`; a missing `after`
is fine."""


ASSERTIONS: tuple[Assertion, ...] = (FORBID, NO_RELEVANT, EXPECT_NO_STRONG_MATCH, RANK_BEFORE)
"""Every assertion, in the order SPEC §3.4 checks them (and the reference checks report them)."""
