"""Cross-reference checks of one shape-valid scenario (SPEC §2): dangling ids in edges, relevant,
grades and the assertions' fields (forbid, rank_before, …); duplicate ids and edges; bad
categories and dates; queries whose project holds none of the scenario's thoughts. Each problem is
`<field>: <message with the fix>`.

What an assertion references and its own consistency rules come from the assertion registry
(`evalkit.scenarios.assertions`, read at each call): a new assertion is checked here without an
edit to this module."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from evalkit.errors import DatasetError
from evalkit.scenarios import assertions
from evalkit.scenarios.assertions import Located
from evalkit.scenarios.dates import resolve_created_at
from evalkit.scenarios.model import BUILTIN_CATEGORIES, QuerySpec, Scenario, ThoughtSpec
from evalkit.validation import did_you_mean, shown_value

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
    problems = category_problems(scenario.category, categories)
    distractor_ids = None if distractors is None else frozenset(t.id for t in distractors)
    problems.extend(thought_problems(scenario.thoughts, distractor_ids if scenario.distractors else None))
    problems.extend(_distractors_created_at_problems(scenario))
    resolver = _Resolver(scenario, distractor_ids)
    problems.extend(_edge_problems(scenario, resolver))
    projects = {t.project for t in scenario.thoughts}
    projects |= {t.project for step in scenario.steps if step.add for t in step.add.thoughts}
    if scenario.distractors:
        projects |= {t.project for t in distractors or ()}
    for qi, query in enumerate(scenario.queries):
        problems.extend(_query_problems(f"query {qi + 1}", query, resolver, projects, scenario))
    if scenario.steps:
        problems.extend(_step_problems(scenario, distractor_ids))
    return problems


def category_problems(category: str, categories: Sequence[str] | None) -> list[str]:
    """The problem of a scenario's `category` that is not one of the suite's `categories` (with
    the closest as "did you mean"); none when it is, or when `categories` is None (unknown)."""
    if categories is None or category in categories:
        return []
    return [
        f"category: unknown category {shown_value(category)}{did_you_mean(category, categories)}; "
        f"use one of: {', '.join(categories)} "
        "(the suite's categories; a suite declares its own under `categories:` in its suite.yaml)"
    ]


def _step_problems(scenario: Scenario, distractor_ids: frozenset[str] | None) -> list[str]:
    """Problems of the scenario's operation steps, replayed in order over the ids in memory:
    steps out of order or after the last query; a delete or update of an id not in memory at that
    point (never seeded, or deleted by an earlier step: named); an add of an id still in memory;
    an added edge whose ends are not in memory; and a query's `relevant` id that is not in memory
    when the query is asked (deleted before it, or added only later). With the distractors unknown
    (`distractor_ids` None while the scenario wants them) ids are not judged."""
    if distractor_ids is None and scenario.distractors:
        return []
    shared = distractor_ids if scenario.distractors and distractor_ids is not None else frozenset()
    alive = {t.id for t in scenario.thoughts} | set(shared)
    gone: dict[str, str] = {}  # id -> the step that deleted it
    coming = {t.id: f"steps[{i}]" for i, s in enumerate(scenario.steps) if s.add for t in s.add.thoughts}
    problems: list[str] = []
    count = len(scenario.queries)
    asked = 0  # queries asked so far

    def absent(field: str, ref: str, verb: str) -> str:
        if ref in gone:
            return (
                f"{field}: {shown_value(ref)} was deleted by {gone[ref]}, so it cannot be {verb}; "
                "re-add it with an add step first or drop this"
            )
        if ref in coming:
            return f"{field}: {shown_value(ref)} is added only by {coming[ref]}; move this step after it"
        hint = did_you_mean(ref, sorted(alive))
        return f"{field}: unknown thought id {shown_value(ref)}{hint} (not in the memory at this step)"

    def check_queries_until(stop: int) -> None:
        nonlocal asked
        for qi in range(asked, stop):
            for ri, ref in enumerate(scenario.queries[qi].relevant):
                if ref not in alive and (ref in gone or ref in coming):
                    problems.append(absent(f"query {qi + 1}.relevant[{ri}]", ref, "relevant to this query"))
        asked = max(asked, stop)

    previous = 0
    for i, step in enumerate(scenario.steps):
        where = f"steps[{i}]"
        if step.after_query < previous:
            problems.append(
                f"{where}.after_query: {step.after_query} comes after a step at after_query {previous}; "
                "list the steps in the order they run"
            )
        previous = max(previous, step.after_query)
        if step.after_query >= count:
            problems.append(
                f"{where}.after_query: {step.after_query} is not before any query (the scenario has "
                f"{count}), so no query would see this step; ask a query after it or drop the step"
            )
        check_queries_until(min(step.after_query, count))
        if step.delete is not None:
            seen: set[str] = set()
            for j, ref in enumerate(step.delete):
                field = f"{where}.delete[{j}]"
                if ref in seen:
                    problems.append(f"{field}: {shown_value(ref)} is listed twice; list each id once")
                elif ref not in alive:
                    problems.append(absent(field, ref, "deleted again"))
                seen.add(ref)
            for ref in seen & alive:
                alive.discard(ref)
                gone[ref] = where
        elif step.update is not None:
            if step.update.id not in alive:
                problems.append(absent(f"{where}.update.id", step.update.id, "updated"))
        elif step.add is not None:
            for j, thought in enumerate(step.add.thoughts):
                field = f"{where}.add.thoughts[{j}].id"
                if thought.id in alive:
                    problems.append(
                        f"{field}: {shown_value(thought.id)} is already in the memory; use an update step "
                        "to change it, or delete it first"
                    )
                try:
                    resolve_created_at(thought.created_at, _PROBE_CLOCK)
                except DatasetError as exc:
                    problems.append(f"{where}.add.thoughts[{j}].created_at: {exc}")
                alive.add(thought.id)
                gone.pop(thought.id, None)
                coming.pop(thought.id, None)
            for j, edge in enumerate(step.add.edges):
                for end in ("source", "target"):
                    ref = getattr(edge, end)
                    if ref not in alive:
                        problems.append(absent(f"{where}.add.edges[{j}].{end}", ref, "linked"))
                if edge.source == edge.target:  # the store refused it mid-run, naming nothing
                    problems.append(
                        f"{where}.add.edges[{j}]: {edge.type} edge from {shown_value(edge.source)} to "
                        "itself; an edge links two thoughts"
                    )
    check_queries_until(count)
    return problems


def _query_problems(
    where: str, query: QuerySpec, resolver: _Resolver, projects: set[str], scenario: Scenario
) -> list[str]:
    """Problems of one query of `scenario` located at `where`; `projects` are the projects seeded
    for it.

    Order: `relevant`, then each assertion of the registry in its order (its references, each
    followed by the assertion's own problems at that path, then its remaining problems), then
    grades, include_global and project."""
    problems = _located_problems(
        where,
        [(f"relevant[{i}]", ref) for i, ref in enumerate(query.relevant)],
        assertions.listed_twice("relevant", query.relevant),
        resolver,
    )
    for assertion in assertions.ASSERTIONS:
        problems.extend(
            _located_problems(
                where, assertion.references(query), assertion.problems(query, scenario), resolver
            )
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
        added = (t.id for step in scenario.steps if step.add for t in step.add.thoughts)
        self.scenario_ids = frozenset(t.id for t in scenario.thoughts).union(added)
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
        known = sorted(
            self.scenario_ids | (self.distractor_ids or frozenset() if self.uses_distractors else set())
        )
        return f"{field}: unknown thought id {shown_value(ref)}{did_you_mean(ref, known)} (not in {where})"


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


def _located_problems(
    where: str, references: Sequence[Located], own: Sequence[Located], resolver: _Resolver
) -> list[str]:
    """Each reference's dangling-id problem followed by the `own` problems at its path, then the
    `own` problems at other paths; every path is prefixed with `where`."""
    by_path: dict[str, list[str]] = {}
    for path, message in own:
        by_path.setdefault(path, []).append(message)
    problems = []
    for path, ref in references:
        problems.extend(resolver.check(f"{where}.{path}", ref))
        problems.extend(f"{where}.{path}: {message}" for message in by_path.pop(path, ()))
    problems.extend(
        f"{where}.{path}: {message}" for path, messages in by_path.items() for message in messages
    )
    return problems
