"""Lint a valid scenario suite: queries that cannot fail, ids out of reach, copies (`evalkit lint`).

The loader (`evalkit.scenarios.loading`) rejects what cannot run; the lint finds what runs but
cannot tell a good search from a broken one. Each `Finding` names the file, the scenario, the
query (1-based, as every message counts queries) and the fix. The rules, each a `code`:

- `small-corpus`: a query with relevant ids whose reachable corpus (the thoughts its scope
  searches: the scenario's own and, with `distractors: true`, the shared distractors; only its
  `project`, plus global thoughts under `include_global`) holds no more than its top_k: every
  reachable thought is returned, so recall and hit rate are 1 by construction. Not reported when
  the query also has a forbid or a rank_before: those still fail on a broken search.
- `unreachable-id`: a relevant id outside the query's scope (recall can never reach 1); a
  forbidden id outside the scope only when its project looks like a typo of the query's (a close
  match, e.g. `acmee` for `acme`, that no query of the scenario searches): a forbid of another
  project's thought is otherwise the way to test isolation, and can fire when the filter breaks.
- `forbid-out-of-reach`: a forbidden id that is superseded (the target of a `replaces` edge)
  while at least top_k thoughts of better standing are in scope: were suppression broken (the
  row kept, ranked after every current and contradicted row, as flag mode ranks it), it would
  still rank below top_k, so the forbid cannot fire — the 6-thought scenario at top_k 5.
- `no-shared-word`: a query that shares no word with any of its relevant thoughts, neither a
  hashing-embedder token nor a BM25 term: in deterministic mode (the default, CI's and the
  mutation suite's) both legs match words only, so those thoughts are found by chance.
- `duplicate-content`: thoughts seeded together (a scenario's own with its distractors, or the
  distractors file itself) whose content is the same (case and spacing aside; blank contents,
  which an import writes without `--with-content`, are not compared).
- `id-collision`: a thought id that several scenarios use (a system that keeps one memory for
  the whole run, or anything keyed by id across scenarios, mixes them up).

Decisions where the issue is silent: every finding is a warning (a suite may mean it: the
built-in `project-scope` asks inside projects of three notes on purpose) — `evalkit lint` exits
0 with findings and 1 only under `--strict`; the rules follow the reference store's documented
search (SPEC §1.3: the agent's supersession=suppress, standing order current < contradicted <
superseded, words as the deterministic legs see them), whatever system a run evaluates.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalkit.embedders.hashing import hashing_tokens
from evalkit.memory.fts_query import STOPWORDS, fold, fts_terms
from evalkit.scenarios.loading import DISTRACTORS_STEM, Suite, load_suite
from evalkit.scenarios.model import QuerySpec, Scenario, ThoughtSpec
from evalkit.wording import counted

LintCode = Literal[
    "small-corpus", "unreachable-id", "forbid-out-of-reach", "no-shared-word", "duplicate-content",
    "id-collision",
]  # fmt: skip
"""The lint rules (see the module docstring)."""

TYPO_CUTOFF = 0.8
"""How close (difflib ratio) a forbidden thought's project must be to the query's project for
`unreachable-id` to read it as a typo (`acmee` / `acme`: 0.89; `alpha` / `beta`: 0.44)."""

_WORD = re.compile(r"[^\W_]+")
"""A word as FTS5's unicode61 tokenizer cuts it (letters and digits)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One lint finding: its rule (`code`), the `file` and `scenario` it is in (None for the
    distractors file), the `query` it is about (1-based; None for a scenario-wide finding),
    what is wrong (`message`) and how to fix it (`fix`)."""

    code: LintCode
    file: Path
    scenario: str | None
    query: int | None
    message: str
    fix: str

    def __str__(self) -> str:
        where = f"{self.file}: " + (f"scenario {self.scenario!r}" if self.scenario else "distractors")
        where += f" query {self.query}" if self.query is not None else ""
        return f"{where}: [{self.code}] {self.message}; fix: {self.fix}"


def lint_dataset(directory: str | Path, top_k: int) -> list[Finding]:
    """Load the suite in `directory` and lint it at `top_k` (a query's own top_k wins).
    DatasetError (the loader's problems) when the suite is malformed: nothing is linted."""
    return lint_suite(load_suite(directory), top_k)


def lint_suite(suite: Suite, top_k: int) -> list[Finding]:
    """Every finding of `suite` at `top_k` (a query's own top_k wins): per scenario in suite
    order its queries' findings in query order (then the scenario's duplicate contents), then
    the distractors file's duplicates, then the id collisions across scenarios."""
    found: list[Finding] = []
    for scenario in suite.scenarios:
        found += _scenario_findings(scenario, suite, top_k)
    distractors = _distractors_file(suite)
    if distractors is not None:
        found += _duplicates(suite.distractors, distractors, None, frozenset())
    found += _collisions(suite)
    return found


def _scenario_findings(scenario: Scenario, suite: Suite, top_k: int) -> list[Finding]:
    file = suite.sources[scenario.name]
    shared = tuple(suite.distractors) if scenario.distractors else ()
    corpus = (*scenario.thoughts, *shared)
    by_id = {t.id: t for t in corpus}
    superseded = {e.target for e in scenario.edges if e.type == "replaces"}
    searched = {q.project for q in scenario.queries if q.project is not None}
    found: list[Finding] = []
    for number, query in enumerate(scenario.queries, start=1):
        k = query.top_k or top_k
        reachable = [t for t in corpus if _in_scope(t, query)]
        found += [
            Finding(code, file, scenario.name, number, message, fix)
            for code, message, fix in (
                *_small_corpus(query, reachable, k),
                *_unreachable(query, by_id, searched),
                *_out_of_reach(query, reachable, superseded, k),
                *_no_shared_word(query, by_id),
            )
        ]
    own = frozenset(t.id for t in shared)
    found += _duplicates(corpus, file, scenario.name, own)
    return found


def _in_scope(thought: ThoughtSpec, query: QuerySpec) -> bool:
    """Whether the query's project filter lets `thought` through (no project: every thought)."""
    if query.project is None:
        return True
    return thought.project == query.project or (query.include_global and thought.is_global)


def _scope(query: QuerySpec) -> str:
    extra = " and global thoughts" if query.include_global else ""
    return f"project {query.project!r}{extra}"


_Rule = Iterable[tuple[LintCode, str, str]]


def _small_corpus(query: QuerySpec, reachable: Sequence[ThoughtSpec], k: int) -> _Rule:
    if not query.relevant or len(reachable) > k or query.forbid or query.rank_before is not None:
        return
    scope = "" if query.project is None else f" in {_scope(query)}"
    yield (
        "small-corpus",
        f"its reachable corpus{scope} holds {counted(len(reachable), 'thought')}, no more than its top_k "
        f"{k}: every one is returned, so recall and hit rate are 1 by construction and no search bug "
        "can lower them (it has no forbid or rank_before that could fail either)",
        f"let more than {k} thoughts compete in its scope (keep `distractors: true`, add thoughts), "
        "lower the query's top_k, or add a forbid",
    )


def _unreachable(query: QuerySpec, by_id: dict[str, ThoughtSpec], searched: set[str]) -> _Rule:
    if query.project is None:
        return
    for field, ids in (("relevant", query.relevant), ("forbid", query.forbid)):
        for ref in ids:
            thought = by_id.get(ref)
            if thought is None or _in_scope(thought, query):
                continue
            typo = _typo(query.project, thought.project, searched)
            if field == "forbid" and not typo:
                continue  # another project's thought: an isolation check
            hint = f" (is {thought.project!r} a typo of {query.project!r}?)" if typo else ""
            cost = (
                "recall can never reach 1"
                if field == "relevant"
                else "it can only show up when the project filter breaks"
            )
            yield (
                "unreachable-id",
                f"{field} id {ref!r} is in project {thought.project!r}, outside the query's scope "
                f"({_scope(query)}): {cost}{hint}",
                f"put the thought and the query in the same project{hint and ' (fix the typo)'}, or make "
                "the thought global (is_global: true) and set include_global on the query",
            )


def _typo(wanted: str, found: str, searched: set[str]) -> bool:
    """`found` reads as a typo of `wanted`: a close match that no query of the scenario searches."""
    return found not in searched and bool(difflib.get_close_matches(wanted, [found], n=1, cutoff=TYPO_CUTOFF))


def _out_of_reach(query: QuerySpec, reachable: Sequence[ThoughtSpec], superseded: set[str], k: int) -> _Rule:
    in_scope = {t.id for t in reachable}
    ahead = sum(t.id not in superseded for t in reachable)
    for ref in query.forbid:
        if ref not in superseded or ref not in in_scope or ahead < k:
            continue
        scope = "" if query.project is None else f" in {_scope(query)}"
        yield (
            "forbid-out-of-reach",
            f"forbidden id {ref!r} is superseded: were it kept instead of dropped (the "
            f"supersession-not-suppressed bug), it would rank after the {ahead} thoughts of better standing"
            f"{scope}, below top_k {k}, so this forbid cannot fire (only a search that ignores "
            "supersession altogether would show it)",
            f"ask the query in a scope where fewer than {k} thoughts are current (a project of its own "
            "for the superseded note, its replacement and a few others, with `project:` on the query), "
            "as `evalkit init`'s example does",
        )


def _no_shared_word(query: QuerySpec, by_id: dict[str, ThoughtSpec]) -> _Rule:
    relevant = [by_id[r] for r in query.relevant if r in by_id]
    if not relevant:
        return
    hashed = set(hashing_tokens(query.query))
    terms = {w for term in fts_terms(query.query, STOPWORDS) for w in _WORD.findall(fold(term))}
    if any(hashed & set(hashing_tokens(t.content)) or terms & _words(t.content) for t in relevant):
        return
    ids = ", ".join(repr(t.id) for t in relevant)
    yield (
        "no-shared-word",
        f"the query shares no word with its relevant thought(s) {ids}: in deterministic mode (the "
        "hashing embedder and BM25 both match words) they are found only by chance",
        "use a word of the relevant thought in the query (a paraphrase test needs --real, and a "
        "baseline recorded in real mode)",
    )


def _words(text: str) -> set[str]:
    return set(_WORD.findall(fold(text.casefold())))


def _duplicates(
    thoughts: Sequence[ThoughtSpec], file: Path, scenario: str | None, shared: frozenset[str]
) -> list[Finding]:
    """One finding per group of `thoughts` with the same content (case and spacing aside) that
    holds at least one thought not in `shared` (the distractors, whose own copies are reported
    once, for their file). Blank contents are not compared: `evalkit import traces` writes them
    for records whose content it was not asked to keep (`--with-content`)."""
    groups: dict[str, list[str]] = {}
    for t in thoughts:
        if t.content.strip():  # blank: a record whose content was left out (an import's privacy)
            groups.setdefault(" ".join(t.content.casefold().split()), []).append(t.id)
    return [
        Finding(
            "duplicate-content",
            file,
            scenario,
            None,
            f"thoughts {', '.join(map(repr, ids))} have the same content: only one of them can rank "
            "first, and a system that deduplicates keeps one",
            "make their contents differ (or drop the copies)",
        )
        for ids in groups.values()
        if len(ids) > 1 and not set(ids) <= shared
    ]


def _collisions(suite: Suite) -> list[Finding]:
    """One finding per thought id that several scenarios seed, reported on the later ones."""
    first: dict[str, str] = {}
    found = []
    for scenario in suite.scenarios:
        for t in scenario.thoughts:
            owner = first.setdefault(t.id, scenario.name)
            if owner == scenario.name:
                continue
            found.append(
                Finding(
                    "id-collision",
                    suite.sources[scenario.name],
                    scenario.name,
                    None,
                    f"thought id {t.id!r} is also a thought of scenario {owner!r} "
                    f"({suite.sources[owner]}): a system that keeps one memory for the whole run mixes them "
                    "up, and so does anything keyed by id across scenarios",
                    f"rename one of them (e.g. prefix it with its scenario's name: {scenario.name}-{t.id})",
                )
            )
    return found


def _distractors_file(suite: Suite) -> Path | None:
    """The distractors file of `suite` (from the files it read), or None."""
    if not suite.sources or not suite.distractors:
        return None
    root = next(iter(suite.sources.values())).parent.parent
    names = [rel for rel in suite.file_digests if Path(rel).stem == DISTRACTORS_STEM and "/" not in rel]
    return root / names[0] if names else None
