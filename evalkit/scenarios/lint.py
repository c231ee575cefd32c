"""Lint a valid scenario suite: queries that cannot fail, ids out of reach, copies (`evalkit lint`).

The loader (`evalkit.scenarios.loading`) rejects what cannot run; the lint finds what runs but
cannot tell a good search from a broken one. Each `Finding` names the file, the scenario, the
query (1-based, as every message counts queries) and the fix.

Every rule reads the memory a query is asked of (`memory_states`): the scenario's thoughts and,
with `distractors: true`, the shared distractors, as the operation steps before the query left
them (a deleted thought and its edges gone, an updated one with its new content, added thoughts
and edges in), so a `replaces` edge whose source was deleted no longer supersedes its target.
The rules, each a `code`:

- `small-corpus`: a query with relevant ids whose reachable corpus (the thoughts its scope
  searches: only its `project`, plus global thoughts under `include_global`) holds no more than
  its top_k: every reachable thought is returned, so recall and hit rate are 1 by construction.
  Not reported when the query also has a forbid or a rank_before (those still fail on a broken
  search), nor when it has a project and at least top_k thoughts outside its scope share as many
  of its words as its relevant thought (`_rivals`): were the project filter dropped, or applied
  after each leg's cut, they could fill its top_k, so recall depends on the filter (the
  filter-selectivity pack's point). Whether they do depends on the ranking, which the lint does
  not run: a query so exempted may still pass a broken filter (`evalkit mutants` tells).
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
  mutation suite's) both legs match words only, so those thoughts are found by chance. Words are
  read script by script (`words`): letters and digits of any script, and a run of CJK characters
  (written without spaces) as its character bigrams, so a Chinese question sharing 备份 with its
  note shares a word — whether a store's tokenizer sees it is what the scenario tests.
- `duplicate-content`: thoughts in memory together (a scenario's own with its distractors at
  any query, or the distractors file itself) whose content is the same (case and spacing aside;
  blank contents, which an import writes without `--with-content`, are not compared).
- `id-collision`: a thought id that several scenarios use, seeded or added by a step (a system
  that keeps one memory for the whole run, or anything keyed by id across scenarios, mixes
  them up).

A scenario that means what a rule flags (the near-duplicates pack seeds copies on purpose)
acknowledges it: `lint: {allow: [duplicate-content], reason: ...}` (`LintAllowance`, checked
when the suite loads: known codes, each once, a reason). Its findings of those rules are then
`acknowledged` in the `LintReport`, listed with the reason, and are not findings: `--strict`
passes and `evalkit run` does not warn about them.

Decisions where the issue is silent: every finding is a warning (a suite may mean it: the
built-in `project-scope` asks inside projects of three notes on purpose) — `evalkit lint` exits
0 with findings and 1 only under `--strict`; the rules follow the reference store's documented
search (SPEC §1.3: the agent's supersession=suppress, standing order current < contradicted <
superseded, words as the deterministic legs see them), whatever system a run evaluates — except
that CJK runs are read as bigrams: a scenario's words are judged, not one tokenizer's blind spot.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalkit.embedders.tokens import hashing_tokens
from evalkit.memory.fts_query import STOPWORDS, fold, fts_terms
from evalkit.scenarios.loading import DISTRACTORS_STEM, Suite, load_suite
from evalkit.scenarios.model import EdgeSpec, LintRule, QuerySpec, Scenario, ThoughtSpec
from evalkit.wording import counted

LintCode = LintRule
"""The lint rules (see the module docstring)."""

TYPO_CUTOFF = 0.8
"""How close (difflib ratio) a forbidden thought's project must be to the query's project for
`unreachable-id` to read it as a typo (`acmee` / `acme`: 0.89; `alpha` / `beta`: 0.44)."""

_WORD = re.compile(r"[^\W_]+")
"""A word as FTS5's unicode61 tokenizer cuts it (letters and digits)."""

_CJK = re.compile(
    "([\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]+)"
)
"""A run of CJK characters: hiragana, katakana, CJK ideographs (with extensions and
compatibility ideographs) and hangul syllables — scripts written without spaces between words."""


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


@dataclass(frozen=True, slots=True)
class Acknowledged:
    """A finding of a rule its scenario allows (`lint: {allow, reason}`), with that `reason`."""

    finding: Finding
    reason: str

    def __str__(self) -> str:
        f = self.finding
        where = f"{f.file}: scenario {f.scenario!r}" + (f" query {f.query}" if f.query is not None else "")
        return f"{where}: [{f.code}] acknowledged: {self.reason}"


@dataclass(frozen=True, slots=True)
class LintReport:
    """What the lint found in a suite: the `findings` to act on, and the `acknowledged` ones
    (findings of rules their scenario allows), both in `lint_suite`'s order; and the `unused`
    acknowledgements — (scenario, rule) pairs, in suite order, of an allowed rule with no finding
    in that scenario at this top_k: stale, or meant for another top_k (a note, never a finding)."""

    findings: list[Finding]
    acknowledged: list[Acknowledged]
    unused: list[tuple[str, LintCode]]


def lint_dataset(directory: str | Path, top_k: int) -> list[Finding]:
    """Load the suite in `directory` and lint it at `top_k` (a query's own top_k wins).
    DatasetError (the loader's problems) when the suite is malformed: nothing is linted."""
    return lint_suite(load_suite(directory), top_k)


def lint_suite(suite: Suite, top_k: int) -> list[Finding]:
    """The findings of `suite` at `top_k` to act on (`lint_report(...).findings`: acknowledged
    ones left out)."""
    return lint_report(suite, top_k).findings


def lint_report(suite: Suite, top_k: int) -> LintReport:
    """Every finding of `suite` at `top_k` (a query's own top_k wins): per scenario in suite
    order its queries' findings in query order (then the scenario's duplicate contents), then
    the distractors file's duplicates, then the id collisions across scenarios — split into the
    findings and those a scenario acknowledges (its `lint.allow` names the rule)."""
    found: list[Finding] = []
    for scenario in suite.scenarios:
        found += _scenario_findings(scenario, suite, top_k)
    distractors = _distractors_file(suite)
    if distractors is not None:
        found += _duplicates(suite.distractors, distractors, None, frozenset())
    found += _collisions(suite)
    allowances = {s.name: s.lint for s in suite.scenarios if s.lint is not None}
    report = LintReport([], [], [])
    for finding in found:
        allowance = allowances.get(finding.scenario or "")
        if allowance is not None and finding.code in allowance.allow:
            report.acknowledged.append(Acknowledged(finding, allowance.reason))
        else:
            report.findings.append(finding)
    used = {(a.finding.scenario, a.finding.code) for a in report.acknowledged}
    report.unused.extend(
        (name, code)
        for name, allowance in allowances.items()
        for code in allowance.allow
        if (name, code) not in used
    )
    return report


@dataclass(frozen=True, slots=True)
class MemoryState:
    """The memory a query is asked of: the `thoughts` in it, in seeding order (updated ones with
    their new content and status), and the ids `superseded` there (targets of a `replaces` edge
    whose two ends are both in memory)."""

    thoughts: tuple[ThoughtSpec, ...]
    superseded: frozenset[str]


def memory_states(scenario: Scenario, shared: Sequence[ThoughtSpec]) -> list[MemoryState]:
    """The memory at each of the scenario's queries, in query order: its thoughts then `shared`
    (the distractors it appends) and its edges, changed by the steps before each query as the
    reference store applies them (a delete removes the thought and every edge touching it, an
    update replaces the content and/or status, an add appends thoughts and edges). A step on an
    id not in memory (which the loader rejects) changes nothing."""
    alive: dict[str, ThoughtSpec] = {t.id: t for t in (*scenario.thoughts, *shared)}
    edges: list[EdgeSpec] = list(scenario.edges)
    states: list[MemoryState] = []
    for index in range(len(scenario.queries)):
        for step in scenario.steps_before(index):
            if step.delete is not None:
                for ref in step.delete:
                    alive.pop(ref, None)
                edges = [e for e in edges if e.source in alive and e.target in alive]
            elif step.update is not None and step.update.id in alive:
                changes = {"content": step.update.content, "status": step.update.status}
                alive[step.update.id] = alive[step.update.id].model_copy(
                    update={field: value for field, value in changes.items() if value is not None}
                )
            elif step.add is not None:
                alive.update((t.id, t) for t in step.add.thoughts)
                edges += step.add.edges
        superseded = frozenset(
            e.target for e in edges if e.type == "replaces" and e.source in alive and e.target in alive
        )
        states.append(MemoryState(tuple(alive.values()), superseded))
    return states


def _scenario_findings(scenario: Scenario, suite: Suite, top_k: int) -> list[Finding]:
    file = suite.sources[scenario.name]
    shared = tuple(suite.distractors) if scenario.distractors else ()
    searched = {q.project for q in scenario.queries if q.project is not None}
    states = memory_states(scenario, shared)
    found: list[Finding] = []
    for number, (query, state) in enumerate(zip(scenario.queries, states, strict=True), start=1):
        k = query.top_k or top_k
        by_id = {t.id: t for t in state.thoughts}
        reachable = [t for t in state.thoughts if _in_scope(t, query)]
        outside = [t for t in state.thoughts if not _in_scope(t, query)]
        found += [
            Finding(code, file, scenario.name, number, message, fix)
            for code, message, fix in (
                *_small_corpus(query, reachable, outside, k),
                *_unreachable(query, by_id, searched),
                *_out_of_reach(query, reachable, state.superseded, k),
                *_no_shared_word(query, by_id),
            )
        ]
    own = frozenset(t.id for t in shared)
    groups: dict[tuple[str, ...], Finding] = {}
    for state in states:  # copies in memory together at any query, each group once
        for finding, ids in _duplicate_groups(state.thoughts, file, scenario.name, own):
            groups.setdefault(ids, finding)
    return found + list(groups.values())


def _in_scope(thought: ThoughtSpec, query: QuerySpec) -> bool:
    """Whether the query's project filter lets `thought` through (no project: every thought)."""
    if query.project is None:
        return True
    return thought.project == query.project or (query.include_global and thought.is_global)


def _scope(query: QuerySpec) -> str:
    extra = " and global thoughts" if query.include_global else ""
    return f"project {query.project!r}{extra}"


_Rule = Iterable[tuple[LintCode, str, str]]


def _small_corpus(
    query: QuerySpec, reachable: Sequence[ThoughtSpec], outside: Sequence[ThoughtSpec], k: int
) -> _Rule:
    if not query.relevant or len(reachable) > k or query.forbid or query.rank_before is not None:
        return
    if query.project is not None and _rivals(query, reachable, outside) >= k:
        return  # enough of the query's matches outside its scope: a broken filter can cost recall
    scope = "" if query.project is None else f" in {_scope(query)}"
    yield (
        "small-corpus",
        f"its reachable corpus{scope} holds {counted(len(reachable), 'thought')}, no more than its top_k "
        f"{k}: every one is returned, so recall and hit rate are 1 by construction and no search bug "
        "can lower them (it has no forbid or rank_before that could fail either)",
        f"let more than {k} thoughts compete in its scope (keep `distractors: true`, add thoughts), "
        "lower the query's top_k, or add a forbid",
    )


def _rivals(query: QuerySpec, reachable: Sequence[ThoughtSpec], outside: Sequence[ThoughtSpec]) -> int:
    """How many thoughts `outside` the query's scope share at least as many of its words as the
    relevant thought in scope that shares the fewest (and at least one): rivals that a search
    ignoring the project filter, or filtering after its cut, would rank level with the answer."""
    terms = _query_words(query.query)
    relevant = set(query.relevant)
    shared = [len(terms & words(t.content)) for t in reachable if t.id in relevant]
    need = max(1, min(shared, default=1))
    return sum(len(terms & words(t.content)) >= need for t in outside)


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


def _out_of_reach(
    query: QuerySpec, reachable: Sequence[ThoughtSpec], superseded: frozenset[str], k: int
) -> _Rule:
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
    terms = _query_words(query.query)
    if any(hashed & set(hashing_tokens(t.content)) or terms & words(t.content) for t in relevant):
        return
    ids = ", ".join(repr(t.id) for t in relevant)
    yield (
        "no-shared-word",
        f"the query shares no word with its relevant thought(s) {ids}: in deterministic mode (the "
        "hashing embedder and BM25 both match words) they are found only by chance",
        "use a word of the relevant thought in the query (a paraphrase test needs --embedder real, and a "
        "baseline recorded in real mode)",
    )


def words(text: str) -> set[str]:
    """The words of `text` as the lint compares them: its letter-and-digit runs (any script,
    lower-cased and folded like the stopword lists), each run of CJK characters inside one
    replaced by its character bigrams (a single character by itself), since those scripts put
    no spaces between words: "Redis缓存的过期" gives redis, 缓存, 存的, 的过, 过期."""
    found: set[str] = set()
    for run in _WORD.findall(fold(text.casefold())):
        for i, piece in enumerate(_CJK.split(run)):
            if not piece:
                continue
            if i % 2 == 0:  # the text between CJK runs
                found.add(piece)
            else:
                found.update(piece[j : j + 2] for j in range(max(1, len(piece) - 1)))
    return found


def _query_words(query: str) -> set[str]:
    """The words of the query's BM25 terms (stopwords dropped), as `words` reads them."""
    return {w for term in fts_terms(query, STOPWORDS) for w in words(term)}


def _duplicates(
    thoughts: Sequence[ThoughtSpec], file: Path, scenario: str | None, shared: frozenset[str]
) -> list[Finding]:
    """One finding per group of `thoughts` with the same content (see `_duplicate_groups`)."""
    return [finding for finding, _ in _duplicate_groups(thoughts, file, scenario, shared)]


def _duplicate_groups(
    thoughts: Sequence[ThoughtSpec], file: Path, scenario: str | None, shared: frozenset[str]
) -> list[tuple[Finding, tuple[str, ...]]]:
    """One finding (with its ids) per group of `thoughts` with the same content (case and
    spacing aside) that holds at least one thought not in `shared` (the distractors, whose own
    copies are reported once, for their file). Blank contents are not compared: `evalkit import
    traces` writes them for records whose content it was not asked to keep (`--with-content`)."""
    groups: dict[str, list[str]] = {}
    for t in thoughts:
        if t.content.strip():  # blank: a record whose content was left out (an import's privacy)
            groups.setdefault(" ".join(t.content.casefold().split()), []).append(t.id)
    return [
        (
            Finding(
                "duplicate-content",
                file,
                scenario,
                None,
                f"thoughts {', '.join(map(repr, ids))} have the same content: only one of them can rank "
                "first, and a system that deduplicates keeps one",
                "make their contents differ (or drop the copies), or, when the copies are the point, "
                "acknowledge the rule: lint: {allow: [duplicate-content], reason: ...}",
            ),
            tuple(ids),
        )
        for ids in groups.values()
        if len(ids) > 1 and not set(ids) <= shared
    ]


def _collisions(suite: Suite) -> list[Finding]:
    """One finding per thought id that several scenarios seed (or add by a step), reported on
    the later ones (a scenario that deletes and re-adds an id is not a collision)."""
    first: dict[str, str] = {}
    found = []
    for scenario in suite.scenarios:
        added = [t for step in scenario.steps if step.add is not None for t in step.add.thoughts]
        for t in {t.id: t for t in (*scenario.thoughts, *added)}.values():
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
