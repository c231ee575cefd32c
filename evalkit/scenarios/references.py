"""Cross-reference checks of one shape-valid scenario (SPEC §2): dangling ids in edges, relevant,
forbid, rank_before and grades; duplicate ids and edges; bad categories and dates; queries whose
project holds none of the scenario's thoughts. Each problem is `<field>: <message with the fix>`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from evalkit.errors import DatasetError
from evalkit.scenarios.dates import resolve_created_at
from evalkit.scenarios.model import BUILTIN_CATEGORIES, QuerySpec, Scenario, ThoughtSpec
from evalkit.validation import shown_value

_PROBE_CLOCK = datetime(2000, 1, 1, tzinfo=UTC)
"""The clock dates are resolved against when validating: any clock shows whether a date reads."""


def scenario_problems(
    scenario: Scenario,
    distractors: Sequence[ThoughtSpec] | None,
    categories: Sequence[str] | None = BUILTIN_CATEGORIES,
) -> list[str]:
    """Cross-reference problems of one shape-valid scenario, each as `<field>: <message>`.

    `distractors` are the shared distractors, or None when they are unknown (the distractors file
    is missing or invalid): references that might point at a distractor are then not judged.
    `categories` are the suite's declared categories, or None when unknown (an invalid suite
    file): the category is then not judged.
    Checks: category, thought ids (duplicates, clashes with distractors), created_at,
    distractors_created_at, edges, and every query's relevant / forbid / rank_before / grades /
    project / no_relevant.
    """
    problems: list[str] = []
    if categories is not None and scenario.category not in categories:
        problems.append(
            f"category: unknown category {shown_value(scenario.category)}; "
            f"use one of: {', '.join(categories)} "
            "(the suite's categories; a suite declares its own under `categories:` in its suite.yaml)"
        )
    distractor_ids = None if distractors is None else frozenset(t.id for t in distractors)
    problems.extend(thought_problems(scenario.thoughts, distractor_ids if scenario.distractors else None))
    problems.extend(_distractors_created_at_problems(scenario))
    resolver = _Resolver(scenario, distractor_ids)
    problems.extend(_edge_problems(scenario, resolver))
    projects = {t.project for t in scenario.thoughts}
    if scenario.distractors:
        projects |= {t.project for t in distractors or ()}
    for qi, query in enumerate(scenario.queries):
        problems.extend(_query_problems(f"queries[{qi}]", query, resolver, projects, scenario.measure_only))
    return problems


def _query_problems(
    where: str, query: QuerySpec, resolver: _Resolver, projects: set[str], measure_only: bool = False
) -> list[str]:
    """Problems of one query located at `where`; `projects` are the projects seeded for it. In a
    `measure_only` scenario a query may leave `relevant` empty: it is unjudged (an imported
    production search nobody labelled), measured and asserted on but in no mean."""
    problems = _relevance_problems(
        where, query.relevant, query.forbid, query.no_relevant or measure_only, resolver, query.no_relevant
    )
    if query.rank_before is not None:
        rb = query.rank_before
        problems.extend(resolver.check(f"{where}.rank_before.before", rb.before))
        problems.extend(resolver.check(f"{where}.rank_before.after", rb.after))
        if rb.before == rb.after:
            problems.append(
                f"{where}.rank_before: before and after are both {shown_value(rb.before)}; name two thoughts"
            )
    for ref, grade in query.grades.items():
        field = f"{where}.grades[{shown_value(ref)}]"
        unresolved = resolver.check(field, ref)
        problems.extend(unresolved)
        if grade < 1:
            problems.append(f"{field}: grade {grade} must be >= 1; leave non-relevant ids out of grades")
        if not unresolved and ref not in query.relevant:
            problems.append(
                f"{field}: {shown_value(ref)} has a grade but is not in relevant; "
                "add it there or drop the grade"
            )
    if query.include_global and query.project is None:
        problems.append(
            f"{where}.include_global: only means something with a project filter (no project already "
            "searches every project); set project or drop include_global"
        )
    if query.project is not None and query.project not in projects and resolver.judged:
        problems.append(
            f"{where}.project: no thought of this scenario is in project {shown_value(query.project)}, "
            "so the query "
            f"would search an empty corpus; use one of: {', '.join(sorted(projects))}"
        )
    return problems


class _Resolver:
    """Judges references to thought ids from inside one scenario. With `distractor_ids` None (the
    distractors file is missing or invalid) a reference that may name a distractor is not judged;
    `judged` says whether every reference can be judged."""

    def __init__(self, scenario: Scenario, distractor_ids: frozenset[str] | None) -> None:
        self.scenario_ids = frozenset(t.id for t in scenario.thoughts)
        self.distractor_ids = distractor_ids
        self.uses_distractors = scenario.distractors
        self.judged = distractor_ids is not None or not scenario.distractors

    def check(self, field: str, ref: str) -> list[str]:
        if ref in self.scenario_ids:
            return []
        if self.distractor_ids is None:
            return [] if self.uses_distractors else [self._unknown(field, ref)]
        if ref in self.distractor_ids:
            if self.uses_distractors:
                return []
            return [
                f"{field}: {shown_value(ref)} is a shared distractor, "
                "but this scenario sets distractors: false; "
                "set distractors: true or reference one of its own thoughts"
            ]
        return [self._unknown(field, ref)]

    def _unknown(self, field: str, ref: str) -> str:
        where = (
            "the scenario's thoughts or the distractors"
            if self.uses_distractors
            else "the scenario's thoughts"
        )
        return f"{field}: unknown thought id {shown_value(ref)} (not in {where})"


def thought_problems(thoughts: Sequence[ThoughtSpec], distractor_ids: frozenset[str] | None) -> list[str]:
    """Duplicate ids, ids clashing with the distractors (when given) and unreadable created_at."""
    problems = []
    first: dict[str, int] = {}
    for i, t in enumerate(thoughts):
        if t.id in first:
            problems.append(
                f"thoughts[{i}].id: duplicate thought id {shown_value(t.id)} "
                f"(also thoughts[{first[t.id]}].id)"
            )
        first.setdefault(t.id, i)
        if distractor_ids is not None and t.id in distractor_ids:
            problems.append(
                f"thoughts[{i}].id: {shown_value(t.id)} is also a shared distractor id; "
                "rename it or set distractors: false"
            )
        try:
            resolve_created_at(t.created_at, _PROBE_CLOCK)
        except DatasetError as exc:
            problems.append(f"thoughts[{i}].created_at: {exc}")
    return problems


def _distractors_created_at_problems(scenario: Scenario) -> list[str]:
    """An unreadable `distractors_created_at`, or one set where no shared distractor is seeded."""
    if scenario.distractors_created_at is None:
        return []
    if not scenario.distractors:
        return [
            "distractors_created_at: this scenario sets distractors: false, so there are no shared "
            "distractors to re-date; drop distractors_created_at or set distractors: true"
        ]
    try:
        resolve_created_at(scenario.distractors_created_at, _PROBE_CLOCK)
    except DatasetError as exc:
        return [f"distractors_created_at: {exc}"]
    return []


def _edge_problems(scenario: Scenario, resolver: _Resolver) -> list[str]:
    problems = []
    first: dict[tuple[str, str, str], int] = {}
    for i, e in enumerate(scenario.edges):
        problems.extend(resolver.check(f"edges[{i}].source", e.source))
        problems.extend(resolver.check(f"edges[{i}].target", e.target))
        if e.source == e.target:
            problems.append(
                f"edges[{i}]: {e.type} edge from {shown_value(e.source)} to itself; "
                "an edge links two thoughts"
            )
        key = (e.source, e.target, e.type)
        if key in first:
            problems.append(f"edges[{i}]: duplicate of edges[{first[key]}] (same source, target and type)")
        first.setdefault(key, i)
    return problems


def _relevance_problems(
    where: str,
    relevant: Sequence[str],
    forbid: Sequence[str],
    may_be_empty: bool,
    resolver: _Resolver,
    no_relevant: bool,
) -> list[str]:
    problems = []
    for name, ids in (("relevant", relevant), ("forbid", forbid)):
        seen: set[str] = set()
        for i, ref in enumerate(ids):
            field = f"{where}.{name}[{i}]"
            problems.extend(resolver.check(field, ref))
            if ref in seen:
                problems.append(f"{field}: {shown_value(ref)} is listed twice")
            seen.add(ref)
            if name == "forbid" and ref in relevant:
                problems.append(
                    f"{field}: {shown_value(ref)} is also in relevant; "
                    "an id cannot be both relevant and forbidden"
                )
    if relevant and no_relevant:
        problems.append(
            f"{where}.no_relevant: no_relevant is true but relevant lists ids; keep one of the two"
        )
    if not relevant and not may_be_empty:
        problems.append(
            f"{where}.relevant: no relevant ids; list the thought ids this query should retrieve, "
            "or set no_relevant: true if nothing should match"
        )
    return problems
