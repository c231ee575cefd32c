"""Deterministic perturbations of a loaded suite (`evalkit run --perturb`, `run_eval(perturb=...)`).

A perturbation grows every scenario's memory in a way that must not help retrieval, so an analyst
sees how fast a system degrades as memory grows (`CurveSpec`: one run per value, measured by
`evalkit.perturbation_curve` and `evalkit run --perturb KIND=N,N,…`):

- `distractors=N`: N extra distractor thoughts per scenario, drawn from the shipped pool of
  generic, off-topic notes (`DISTRACTOR_POOL`, datasets/perturb/distractor_pool.yaml). The draw
  is a shuffle of the pool seeded by (seed, scenario name), of which the first N are taken, so
  the same seed always gives the same thoughts and a larger N keeps every thought of a smaller
  one (a curve over N grows one memory instead of drawing unrelated ones). They are seeded as
  the scenario's own `distractor: true` thoughts (ids `perturb-<pool id>`), in the project of the
  scenario's first thought, so a project-scoped query sees them too. N larger than the pool is
  a UsageError naming the pool's size.
- `stale-repeats=K`: every superseded thought (the target of a `replaces` edge) is repeated K
  times with the same content and status, each copy dated one more day before the original
  (ids `<id>~stale<k>`), and superseded by the same newer thought (a `replaces` edge from it).
  A query that forbids the original forbids its copies too: a stale fact is as wrong in any of
  its copies.
- Steps (`steps:` of a scenario). Distractors are seeded up front only, with the scenario's
  initial thoughts: they stand for the memory that had grown before the scenario began, so an
  `add` step gets none (the draw, and so the curve, does not depend on the steps). Stale repeats
  follow the fact wherever it arrives: a copy is seeded where its original is (initially, or by
  the `add` step that brings the original), and each copy's `replaces` edge arrives where the
  original's edge does (initially, or with the `add` step that supersedes it), so before that
  step the copies are as current as their original and after it as stale. A `delete` or `update`
  step touches only the ids it names: deleting the original leaves its copies superseded, and
  deleting the newer thought leaves them current, as it leaves the original.
- A paraphrase perturbation is not offered: there is no deterministic paraphrase source
  (rewording would need a model, whose output is neither shipped nor reproducible).

A perturbed suite's digest is the original digest hashed with the perturbation, and
`Suite.perturbation` names it, so it is never compared with a baseline recorded on the
unperturbed suite: the run's baseline check is off with a note saying why (its verdict is NOT
GATED unless an assertion fails), and `evalkit baseline record` refuses its report.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import InitVar, dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

from evalkit.errors import UsageError
from evalkit.packaged import BUILTIN_DATASETS
from evalkit.scenarios.dates import resolve_created_at
from evalkit.scenarios.loading import Suite
from evalkit.scenarios.model import EdgeSpec, QuerySpec, Scenario, StepSpec, ThoughtSpec
from evalkit.scenarios.parsing import parse_text

DISTRACTOR_POOL: Path = BUILTIN_DATASETS / "perturb" / "distractor_pool.yaml"
"""The shipped pool of generic, off-topic thoughts `distractors=N` draws from."""

KINDS: tuple[str, ...] = ("distractors", "stale-repeats")
"""The perturbations `--perturb` offers (`KIND=N`)."""

MAX_STALE_REPEATS = 100
"""The most copies `stale-repeats=K` makes of each superseded thought (a billion grew a run to
gigabytes of memory): a hundred stale copies already bury the current fact in any top-k."""

PERTURB_HELP = (
    f"use --perturb distractors=N or --perturb stale-repeats=K (N, K whole numbers, 0 or more; "
    f"K at most {MAX_STALE_REPEATS}, N at most the distractor pool's size)"
)


@dataclass(frozen=True)
class Perturbation:
    """What to add to every scenario: `distractors` pool thoughts and `stale_repeats` copies of
    each superseded thought, drawn with `seed`. The zero perturbation changes nothing."""

    distractors: int = 0
    stale_repeats: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("distractors", "stale_repeats", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise UsageError(f"perturbation {name} must be a whole number, 0 or more; got {value!r}")
        if self.stale_repeats > MAX_STALE_REPEATS:
            raise UsageError(
                f"stale-repeats={self.stale_repeats}: at most {MAX_STALE_REPEATS} stale copies of each "
                f"superseded thought; ask for {MAX_STALE_REPEATS} or fewer"
            )

    @property
    def label(self) -> str:
        """ "distractors=10, stale-repeats=2, seed 0"; "none" for the zero perturbation."""
        parts = [f"distractors={self.distractors}"] if self.distractors else []
        parts += [f"stale-repeats={self.stale_repeats}"] if self.stale_repeats else []
        return ", ".join([*parts, f"seed {self.seed}"]) if parts else "none"

    @property
    def fields(self) -> dict[str, int]:
        """{"distractors": N, "stale_repeats": K, "seed": S}: what a report's provenance records."""
        return {"distractors": self.distractors, "stale_repeats": self.stale_repeats, "seed": self.seed}

    @property
    def empty(self) -> bool:
        """True when nothing is added."""
        return not self.distractors and not self.stale_repeats


_SPEC = re.compile(r"^\s*([a-z-]+)\s*=\s*(.*?)\s*$")


def parse_perturb(texts: list[str] | str, seed: int = 0) -> Perturbation:
    """The perturbation that `--perturb` values (each `KIND=N`, repeatable, one value per kind)
    name. UsageError naming the flag and the fix for an unknown kind, a value that is not a whole
    number 0 or more, a list of values (a curve: `perturbation_curve`), or a kind given twice."""
    given: dict[str, int] = {}
    for text in [texts] if isinstance(texts, str) else texts:
        match = _SPEC.match(text)
        kind = match[1] if match else text.strip()
        if match is None or kind not in KINDS:
            hint = (
                " (paraphrase is not offered: no deterministic paraphrase source exists)"
                if kind.startswith("paraphrase")
                else ""
            )
            raise UsageError(f"--perturb {text!r}: unknown perturbation{hint}; {PERTURB_HELP}")
        value = match[2]
        if "," in value:
            raise UsageError(
                f"--perturb {text!r}: one value per run; for a curve over several values use "
                f"perturb_curve={kind}={value} (or evalkit.perturbation_curve)"
            )
        if not value.isdigit():
            raise UsageError(f"--perturb {text!r}: {value!r} is not a whole number 0 or more; {PERTURB_HELP}")
        if kind in given:
            raise UsageError(f"--perturb {kind} is given twice; give each perturbation once")
        given[kind] = int(value)
    return Perturbation(given.get("distractors", 0), given.get("stale-repeats", 0), seed)


CURVE_HELP = (
    "use --perturb distractors=N,N,... or --perturb stale-repeats=K,K,... "
    "(whole numbers 0 or more, each once, e.g. distractors=0,10,25,50)"
)


@dataclass(frozen=True)
class CurveSpec:
    """A perturbation curve to measure (`evalkit run --perturb KIND=N,N,…`, `evalkit.perturbation_curve`):
    one run per value of `kind` ("distractors" or "stale-repeats"), in the order given, each drawn
    with `seed`. UsageError for an unknown kind, no values, a value given twice, one that is not a
    whole number 0 or more, or a distractor count above the shipped pool's size.

    `given_as` (not a field: it is not kept, compared or shown) is how the curve was asked for,
    e.g. "--perturb 'distractors=5,5'" (`parse_curve`): a value given twice or a distractor
    count above the pool is then refused in those words, so the message names the flag (or the
    notebook parameters) the user typed. Without it (a curve built from Python: `CurveSpec(...)`
    itself, `evalkit.perturbation_curve`, `run_eval(perturb_curve=...)`) the messages name the
    parameters as passed, `kind` and `values` (e.g. "values=[0, 100]: the shipped pool holds 64
    thoughts ..."), never a flag the caller did not use."""

    kind: str
    values: tuple[int, ...]
    seed: int = 0
    given_as: InitVar[str | None] = None

    def __post_init__(self, given_as: str | None) -> None:
        if self.kind not in KINDS:
            raise UsageError(f"unknown perturbation kind {self.kind!r}; use one of {', '.join(KINDS)}")
        if not self.values:
            raise UsageError(
                "a perturbation curve needs at least one value; give values as whole numbers 0 or "
                "more, each once (e.g. values=[0, 10, 25, 50])"
            )
        if len(set(self.values)) != len(self.values):
            raise UsageError(
                f"{given_as}: a value is given twice; give each value once"
                if given_as
                else f"a perturbation curve measures each value once; got {list(self.values)}"
            )
        for value in self.values:
            Perturbation(**{_FIELD[self.kind]: value}, seed=self.seed)
        pool = len(distractor_pool())
        if self.kind == "distractors" and max(self.values) > pool:
            where = given_as or f"values={list(self.values)}"
            raise UsageError(
                f"{where}: the shipped pool holds {pool} thoughts ({DISTRACTOR_POOL.name}); "
                f"ask for {pool} or fewer distractors"
            )

    @property
    def perturbations(self) -> list[Perturbation]:
        """One perturbation per value, in order (value 0: the zero perturbation)."""
        return [Perturbation(**{_FIELD[self.kind]: n}, seed=self.seed) for n in self.values]

    @property
    def flag(self) -> str:
        """ "distractors=0,10,25": the `--perturb` value that asks for this curve."""
        return f"{self.kind}={','.join(str(n) for n in self.values)}"


_FIELD = {"distractors": "distractors", "stale-repeats": "stale_repeats"}
"""A kind → the `Perturbation` field it sets."""


def parse_curve(text: str, seed: int = 0, flag: str = "--perturb", fix: str = CURVE_HELP) -> CurveSpec:
    """The curve a `--perturb KIND=N,N,...` value names (`flag` and `fix`: how messages
    name where it came from and what to give instead, for the report notebook's parameters).
    UsageError naming the flag and the fix for an unknown kind, an empty or non-numeric value, a
    value given twice, or a distractor count above the pool's size."""
    match = _SPEC.match(text)
    kind = match[1] if match else text.strip()
    if match is None or kind not in KINDS:
        hint = " (paraphrase is not offered: no deterministic paraphrase source exists)"
        hint = hint if "paraphrase" in kind else ""
        raise UsageError(f"{flag} {text!r}: unknown perturbation{hint}; {fix}")
    parts = [part.strip() for part in match[2].split(",")]
    bad = [part for part in parts if not part.isdigit()]
    if bad:
        raise UsageError(f"{flag} {text!r}: {bad[0]!r} is not a whole number 0 or more; {fix}")
    values = tuple(int(part) for part in parts)
    return CurveSpec(kind, values, seed, given_as=f"{flag} {text!r}")


@cache
def distractor_pool() -> tuple[ThoughtSpec, ...]:
    """The shipped pool's thoughts, in file order."""
    data = parse_text(DISTRACTOR_POOL.read_text(encoding="utf-8"), DISTRACTOR_POOL.suffix)
    return tuple(ThoughtSpec.model_validate(t) for t in data["thoughts"])


def perturb_scenario(scenario: Scenario, perturbation: Perturbation) -> Scenario:
    """`scenario` with the perturbation's thoughts, edges and forbids added (module docstring:
    distractors in the initial seeding only, stale copies beside their original and their edges
    beside the original's, initially or in the `add` step that brings them)."""
    thoughts = list(scenario.thoughts)
    edges = list(scenario.edges)
    queries = list(scenario.queries)
    steps = list(scenario.steps)
    if perturbation.stale_repeats:
        copies, home = _stale_copies(scenario, perturbation.stale_repeats)
        thoughts += [copy for old, group in copies.items() if home[old] is None for copy in group]
        edges += _copy_edges(edges, copies)
        steps = [_step_with_copies(step, i, copies, home) for i, step in enumerate(steps)]
        queries = [_forbid_copies(q, copies) for q in queries]
    if perturbation.distractors:
        thoughts += _drawn(scenario, perturbation)
    return scenario.model_copy(
        update={"thoughts": thoughts, "edges": edges, "queries": queries, "steps": steps}
    )


def _drawn(scenario: Scenario, perturbation: Perturbation) -> list[ThoughtSpec]:
    pool = list(distractor_pool())
    if perturbation.distractors > len(pool):
        raise UsageError(
            f"--perturb distractors={perturbation.distractors}: the shipped pool holds {len(pool)} "
            f"thoughts ({DISTRACTOR_POOL.name}); ask for {len(pool)} or fewer"
        )
    random.Random(f"{perturbation.seed}:{scenario.name}").shuffle(pool)
    project = scenario.thoughts[0].project if scenario.thoughts else "default"
    return [
        t.model_copy(update={"id": f"perturb-{t.id}", "project": project, "distractor": True})
        for t in pool[: perturbation.distractors]
    ]


def _stale_copies(
    scenario: Scenario, repeats: int
) -> tuple[dict[str, list[ThoughtSpec]], dict[str, int | None]]:
    """For each superseded thought id (the target of a `replaces` edge, initially or in an `add`
    step; in edge order): its `repeats` copies, made from the thought as first seeded; and where
    that is, the copies' home: None for the initial seeding, else the index of the first `add`
    step that brings it (an id deleted and re-added later keeps the copies of its first seeding)."""
    by_id: dict[str, ThoughtSpec] = {}
    home: dict[str, int | None] = {}
    edges = list(scenario.edges)
    for thought in scenario.thoughts:
        by_id.setdefault(thought.id, thought)
        home.setdefault(thought.id, None)
    for i, step in enumerate(scenario.steps):
        if step.add is not None:
            for thought in step.add.thoughts:
                by_id.setdefault(thought.id, thought)
                home.setdefault(thought.id, i)
            edges += step.add.edges
    superseded = dict.fromkeys(e.target for e in edges if e.type == "replaces" and e.target in by_id)
    copies = {
        old: [
            by_id[old].model_copy(
                update={"id": f"{old}~stale{k}", "created_at": _older(by_id[old].created_at, k)}
            )
            for k in range(1, repeats + 1)
        ]
        for old in superseded
    }
    return copies, {old: home[old] for old in copies}


def _copy_edges(edges: list[EdgeSpec], copies: dict[str, list[ThoughtSpec]]) -> list[EdgeSpec]:
    """One `replaces` edge from the same source to each copy of the target of every `replaces`
    edge in `edges`: the copies are superseded where (and when) their original is."""
    return [
        EdgeSpec(source=e.source, target=copy.id, type="replaces")
        for e in edges
        if e.type == "replaces" and e.target in copies
        for copy in copies[e.target]
    ]


def _step_with_copies(
    step: StepSpec, index: int, copies: dict[str, list[ThoughtSpec]], home: dict[str, int | None]
) -> StepSpec:
    """An `add` step with the copies whose home it is (`_stale_copies`) after its thoughts and
    the copies' edges of the `replaces` edges it brings after its edges; any other step as it is."""
    if step.add is None:
        return step
    thoughts = [copy for old, group in copies.items() if home[old] == index for copy in group]
    edges = _copy_edges(list(step.add.edges), copies)
    if not thoughts and not edges:
        return step
    add = step.add.model_copy(
        update={"thoughts": [*step.add.thoughts, *thoughts], "edges": [*step.add.edges, *edges]}
    )
    return step.model_copy(update={"add": add})


def _forbid_copies(query: QuerySpec, copies: dict[str, list[ThoughtSpec]]) -> QuerySpec:
    extra = [copy.id for old in query.forbid if old in copies for copy in copies[old]]
    return query.model_copy(update={"forbid": [*query.forbid, *extra]}) if extra else query


_A = datetime(2000, 1, 1, tzinfo=UTC)
_B = datetime(2001, 1, 1, tzinfo=UTC)


def _older(created_at: str | datetime | None, days: int) -> str | datetime:
    """`created_at` moved `days` days earlier, in the same form: an absolute date stays absolute,
    a date relative to the run's clock (an offset, or None = the clock) stays relative."""
    at_a, at_b = resolve_created_at(created_at, _A), resolve_created_at(created_at, _B)
    if at_a == at_b:
        return at_a - timedelta(days=days)
    offset_days = (at_a - _A).total_seconds() / 86400 - days
    sign = "-" if offset_days < 0 else "+"
    return f"{sign}{abs(offset_days):.6f}d"


def perturb_suite(suite: Suite, perturbation: Perturbation) -> Suite:
    """`suite` with every scenario perturbed, a digest of
    its own and `perturbation` recorded (module docstring); the suite itself for the zero
    perturbation. UsageError when `distractors` exceeds the pool."""
    if perturbation.empty:
        return suite
    digest = hashlib.sha256(f"{suite.digest}\0perturb\0{perturbation.label}".encode()).hexdigest()
    return replace(
        suite,
        scenarios=tuple(perturb_scenario(s, perturbation) for s in suite.scenarios),
        digest=digest,
        perturbation=perturbation.label,
    )
