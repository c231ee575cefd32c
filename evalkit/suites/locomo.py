"""Import LoCoMo (`locomo10.json`, Maharana et al., ACL 2024) as one scenario per conversation.

Input: a JSON list of samples `{"sample_id", "conversation", "qa", ...}`. `conversation` holds
`speaker_a`, `speaker_b`, `session_<n>` (a list of turns `{"speaker", "dia_id", "text"}`, some
with `blip_caption`, the BLIP caption of a shared image) and `session_<n>_date_time`. Other
sample keys (`observation`, `session_summary`, `event_summary`) are generated data and ignored.

Mapping onto the scenario model:
- scenario `name` = `sample_id` (e.g. "conv-26"), category "locomo", no distractors;
- one thought per turn, sessions in numeric order: `id` = "<sample_id>/<dia_id>" (turn ids are
  unique only within a conversation), `content` = "<speaker>: <text>", followed by
  " [shares <caption>]" when the turn has a `blip_caption` (captions read "a photo of ...", so
  this is LoCoMo's own rendering "[shares a photo of ...]"), `project` = sample_id,
  `created_at` = the session's date-time (see `parse_session_datetime`);
- one query per question that has at least one resolvable evidence turn: `id` =
  "<sample_id>/q<index in qa>" (0-based), `query` = question, `category` = the LoCoMo category
  number as a string, `relevant` = the resolved evidence turn ids (namespaced, deduplicated,
  in evidence order), `project` = sample_id (so the query stays inside its conversation even
  if several conversations share one store), `top_k` None.

Categories (`LOCOMO_CATEGORIES`): 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial. This is the mapping of the official evaluation code (`task_eval/evaluation.py`
of snap-research/LoCoMo: `CATEGORY_MAPPING`, multi-answer F1 for category 1, the "not
mentioned" check for 5) and of the data's README. The paper's §4.1 *lists* the types in the
order single-hop, multi-hop, temporal, open-domain, adversarial, and some later work numbers
them that way (or as 1 single-hop, 3 multi-hop, 4 open-domain); the data contradicts those:
category 1 questions carry 3.1 evidence turns on average (98% more than one), category 4 1.07,
77% of category 2 questions start with "When", category 3 asks for inference ("Would ...?"),
and category 5 items have `adversarial_answer` instead of `answer`. The standard evaluation
uses categories 1-4 (`STANDARD_CATEGORIES`, see `LocomoSet.with_categories`).

Evidence repair (`resolve_evidence`): evidence strings that are not turn ids of the
conversation are repaired when the repair is unambiguous and yields an existing turn, and each
repair is recorded by kind in `LocomoReport.repairs`. Evidence that cannot be resolved is listed
in `LocomoReport.unresolved`; a question left with no resolved turn is kept out of the queries
and listed in `LocomoReport.without_evidence`. Nothing is dropped silently: questions =
kept + without_evidence. Dates of sessions that have no turn list (conv-26 carries 16) are
unused and listed in `LocomoReport.orphan_session_dates`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from tqdm import tqdm

from evalkit.errors import DatasetError, UsageError
from evalkit.progress import progress_enabled
from evalkit.scenarios.model import QuerySpec, Scenario, ThoughtSpec
from evalkit.suites.readers import read_json_list
from evalkit.wording import counted

LOCOMO_CATEGORIES: Mapping[str, str] = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
}
"""LoCoMo category number (as a query category string) → question type; see the module docstring."""

STANDARD_CATEGORIES: tuple[str, ...] = ("1", "2", "3", "4")
"""Categories of the standard LoCoMo retrieval evaluation (5, adversarial, is usually left out)."""

RepairKind = Literal["split-list", "trimmed", "missing-prefix", "extra-colon", "leading-zero", "duplicate"]
"""How an evidence string was repaired:
- split-list: several ids in one string, separated by ";", "," or whitespace ("D8:6; D9:17");
- trimmed: whitespace or a stray separator around one id removed (" D1:3", "D1 : 3", "D1:3;");
- missing-prefix: the "D" is missing ("1:3");
- extra-colon: a colon after the "D" ("D:11:26");
- leading-zero: zero-padded numbers ("D30:05");
- duplicate: an id the question already lists (the repeat is dropped)."""

_REPAIR_ORDER: tuple[RepairKind, ...] = get_args(RepairKind)

UnresolvedReason = Literal["unparseable", "missing-turn"]
"""Why evidence was not resolved: not of the form D<session>:<turn> even after repair ("D"), or a
well-formed id naming no turn of the conversation."""

_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_KEY = re.compile(r"session_(\d+)_date_time")
_DATE = re.compile(r"(\d{1,2}):(\d{2}) ([ap]m) on (\d{1,2}) ([a-z]+), (\d{4})", re.IGNORECASE)
_MONTHS = {
    name: number
    for number, name in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
}
_SEPARATORS = re.compile(r"[;,\s]+")
_COLON_SPACING = re.compile(r"\s*:\s*")
_EVIDENCE_ID = re.compile(r"(D?)(:?)(\d+):(\d+)")


def parse_session_datetime(text: str) -> datetime:
    """Parse a LoCoMo session date-time such as "1:56 pm on 8 May, 2023" into a UTC datetime.

    Format: `<h>:<mm> <am|pm> on <day> <Month>, <yyyy>` with single spaces: 12-hour clock (12 am
    is 00:mm, 12 pm is 12:mm), the month spelt out in English (any case; locale-independent),
    surrounding whitespace ignored. The data gives no zone; the time is read as UTC. Raises ValueError
    naming what is wrong (unrecognised shape, hour outside 1-12, minute > 59, no such date).
    """
    match = _DATE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not of the form '1:56 pm on 8 May, 2023'")
    hour, minute, meridiem, day, month_name, year = match.groups()
    month = _MONTHS.get(month_name.lower())
    if month is None:
        raise ValueError(f"{month_name!r} is not an English month name")
    if not 1 <= int(hour) <= 12 or int(minute) > 59:
        raise ValueError(f"{hour}:{minute} is not a 12-hour clock time")
    hour24 = int(hour) % 12 + (12 if meridiem.lower() == "pm" else 0)
    return datetime(int(year), month, int(day), hour24, int(minute), tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class EvidenceResolution:
    """The result of resolving one evidence string against a conversation's turn ids.

    `ids`: resolved turn ids (un-namespaced), in string order, possibly repeated when the string
    repeats an id. `kinds`: repairs needed to reach them (empty when the string was a turn id or
    when nothing resolved). `unresolved`: (piece, reason, looked-up id or None) per failed piece.
    """

    ids: tuple[str, ...]
    kinds: tuple[RepairKind, ...]
    unresolved: tuple[tuple[str, UnresolvedReason, str | None], ...]


def resolve_evidence(raw: str, turn_ids: Collection[str]) -> EvidenceResolution:
    """Resolve the evidence string `raw` against `turn_ids` (the conversation's dia_ids).

    A string that is a turn id resolves to itself. Otherwise spaces around colons are removed,
    the string is split on ";", "," and whitespace, and each piece must read
    `[D][:]<session>:<turn>`; its canonical form `D<int(session)>:<int(turn)>` is accepted only
    if it is a turn id (a repair is never a guess). Repair kinds are reported only when at least
    one id resolved. Never raises.
    """
    if raw in turn_ids:
        return EvidenceResolution((raw,), (), ())
    pieces = [p for p in _SEPARATORS.split(_COLON_SPACING.sub(":", raw)) if p]
    if not pieces:
        return EvidenceResolution((), (), ((raw, "unparseable", None),))
    kinds: set[RepairKind] = set()
    if len(pieces) > 1:
        kinds.add("split-list")
    elif pieces[0] != raw:
        kinds.add("trimmed")
    ids: list[str] = []
    unresolved: list[tuple[str, UnresolvedReason, str | None]] = []
    for piece in pieces:
        if piece in turn_ids:
            ids.append(piece)
            continue
        match = _EVIDENCE_ID.fullmatch(piece)
        if match is None:
            unresolved.append((piece, "unparseable", None))
            continue
        prefix, colon, session, turn = match.groups()
        candidate = f"D{int(session)}:{int(turn)}"
        if candidate not in turn_ids:
            unresolved.append((piece, "missing-turn", candidate))
            continue
        ids.append(candidate)
        if not prefix:
            kinds.add("missing-prefix")
        if colon:
            kinds.add("extra-colon")
        if session != str(int(session)) or turn != str(int(turn)):
            kinds.add("leading-zero")
    ordered = tuple(k for k in _REPAIR_ORDER if k in kinds) if ids else ()
    return EvidenceResolution(tuple(ids), ordered, tuple(unresolved))


@dataclass(frozen=True, slots=True)
class EvidenceRepair:
    """One evidence string that needed repair: the raw string, the (namespaced) ids it
    contributed to the question's `relevant`, and the kinds of repair applied."""

    conversation: str
    question_id: str
    raw: str
    ids: tuple[str, ...]
    kinds: tuple[RepairKind, ...]


@dataclass(frozen=True, slots=True)
class UnresolvedEvidence:
    """An evidence piece that resolved to no turn; `looked_up` is the canonical id tried, if any."""

    conversation: str
    question_id: str
    raw: str
    piece: str
    reason: UnresolvedReason
    looked_up: str | None


@dataclass(frozen=True, slots=True)
class SkippedQuestion:
    """A question kept out of the queries: its evidence list is empty ("no-evidence") or none
    of it resolved ("unresolvable-evidence")."""

    conversation: str
    question_id: str
    category: str
    question: str
    reason: Literal["no-evidence", "unresolvable-evidence"]


@dataclass(frozen=True, slots=True)
class LocomoReport:
    """What `load_locomo` read, repaired and left out. Invariant: questions = kept + len(without_evidence).

    Counts by category are keyed by category string ("1".."5"). `conversations_without_queries`
    lists conversations none of whose questions resolved (no scenario is built for them).
    """

    file: str
    conversations: int
    sessions: int
    turns: int
    questions_by_category: Mapping[str, int]
    kept_by_category: Mapping[str, int]
    repairs: tuple[EvidenceRepair, ...]
    unresolved: tuple[UnresolvedEvidence, ...]
    without_evidence: tuple[SkippedQuestion, ...]
    orphan_session_dates: tuple[str, ...]
    conversations_without_queries: tuple[str, ...]

    @property
    def questions(self) -> int:
        """Every question in the file."""
        return sum(self.questions_by_category.values())

    @property
    def kept(self) -> int:
        """Questions that became queries."""
        return sum(self.kept_by_category.values())

    @property
    def repairs_by_kind(self) -> dict[str, int]:
        """Repaired evidence strings per repair kind (a string repaired two ways counts under both)."""
        return dict(Counter(kind for repair in self.repairs for kind in repair.kinds))

    @property
    def questions_repaired(self) -> int:
        """Questions with at least one repaired evidence string."""
        return len({repair.question_id for repair in self.repairs})

    def summary(self) -> str:
        """Human-readable lines: totals, per-category kept counts, repairs and everything left out."""
        lines = [
            f"LoCoMo {self.file}: {self.conversations} conversations, {self.sessions} sessions, "
            f"{self.turns} turns",
            f"  questions: {self.questions}, kept: {self.kept}, "
            f"without evidence: {len(self.without_evidence)}",
            "  kept by category: "
            + ", ".join(
                f"{c} {LOCOMO_CATEGORIES[c]} {self.kept_by_category.get(c, 0)}/{n}"
                for c, n in sorted(self.questions_by_category.items())
            ),
            f"  questions repaired: {self.questions_repaired}; repairs by kind: "
            + (", ".join(f"{k} {n}" for k, n in sorted(self.repairs_by_kind.items())) or "none"),
        ]
        lines += [
            f"    {r.question_id}: {r.raw!r} -> {list(r.ids)} ({', '.join(r.kinds)})" for r in self.repairs
        ]
        lines.append(f"  unresolved evidence: {len(self.unresolved)}")
        lines += [
            f"    {u.question_id}: {u.piece!r} in {u.raw!r}: {u.reason}"
            + (f" ({u.looked_up} is not a turn)" if u.looked_up else "")
            for u in self.unresolved
        ]
        lines.append(f"  questions without evidence (not queries): {len(self.without_evidence)}")
        lines += [f"    {s.question_id} ({s.reason}): {s.question}" for s in self.without_evidence]
        lines.append(f"  unused dates of sessions without turns: {len(self.orphan_session_dates)}")
        if self.conversations_without_queries:
            lines.append(f"  conversations without queries: {', '.join(self.conversations_without_queries)}")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class LocomoSet:
    """Loaded LoCoMo: one scenario per conversation, in file order, and the load report."""

    scenarios: tuple[Scenario, ...]
    report: LocomoReport

    @property
    def query_count(self) -> int:
        """Queries across all scenarios."""
        return sum(len(s.queries) for s in self.scenarios)

    def with_categories(self, categories: Iterable[str]) -> LocomoSet:
        """A copy keeping only queries whose category is in `categories` (e.g.
        `STANDARD_CATEGORIES`); conversations left without queries are dropped. The report is
        unchanged: it describes the file. Raises UsageError for a category not in "1".."5"."""
        wanted = set(categories)
        unknown = sorted(wanted - LOCOMO_CATEGORIES.keys())
        if unknown:
            raise UsageError(
                f"unknown LoCoMo categories {unknown}; use strings among {sorted(LOCOMO_CATEGORIES)}"
            )
        scenarios = []
        for scenario in self.scenarios:
            queries = [q for q in scenario.queries if q.category in wanted]
            if queries:
                scenarios.append(scenario.model_copy(update={"queries": queries}))
        return LocomoSet(scenarios=tuple(scenarios), report=self.report)


def load_locomo(path: str | Path, *, progress: bool | None = None) -> LocomoSet:
    """Load `locomo10.json` (or any file of the same shape) from `path`.

    `progress`: True/False forces a per-conversation progress bar (on stderr) on/off; None decides
    with `evalkit.progress.progress_enabled` (an interactive stderr outside CI and Jupyter).
    Raises `DatasetError` listing every structural problem
    (file, conversation, session or question, and the fix), including unparsable session dates.
    """
    file = Path(path)
    samples = read_json_list(file, "LoCoMo", "pass the path of locomo10.json", "conversations")
    problems: list[str] = []
    builder = _ReportBuilder()
    scenarios: list[Scenario] = []
    seen: set[str] = set()
    show = progress_enabled(progress)
    with tqdm(total=len(samples), desc=file.name, unit="conv", disable=not show) as bar:
        for index, sample in enumerate(samples):
            scenario = _conversation(file, index, sample, seen, builder, problems)
            if scenario is not None:
                scenarios.append(scenario)
            bar.update(1)
    if problems:
        raise DatasetError(f"LoCoMo file {file} is invalid ({counted(len(problems), 'problem')})", problems)
    return LocomoSet(scenarios=tuple(scenarios), report=builder.build(file.name, len(samples)))


class _ReportBuilder:
    """Accumulates report entries while conversations load."""

    def __init__(self) -> None:
        self.sessions = 0
        self.turns = 0
        self.questions: Counter[str] = Counter()
        self.kept: Counter[str] = Counter()
        self.repairs: list[EvidenceRepair] = []
        self.unresolved: list[UnresolvedEvidence] = []
        self.without_evidence: list[SkippedQuestion] = []
        self.orphan_dates: list[str] = []
        self.no_queries: list[str] = []

    def build(self, file: str, conversations: int) -> LocomoReport:
        return LocomoReport(
            file=file,
            conversations=conversations,
            sessions=self.sessions,
            turns=self.turns,
            questions_by_category=dict(sorted(self.questions.items())),
            kept_by_category=dict(sorted(self.kept.items())),
            repairs=tuple(self.repairs),
            unresolved=tuple(self.unresolved),
            without_evidence=tuple(self.without_evidence),
            orphan_session_dates=tuple(self.orphan_dates),
            conversations_without_queries=tuple(self.no_queries),
        )


def _conversation(
    file: Path, index: int, sample: Any, seen: set[str], report: _ReportBuilder, problems: list[str]
) -> Scenario | None:
    """Build one conversation's scenario, or None when it has problems or no resolvable question."""
    where = f"{file}: conversation #{index}"
    if not isinstance(sample, dict) or not isinstance(sample.get("sample_id"), str):
        problems.append(f'{where}: expected an object with a string "sample_id"; add the id')
        return None
    conv_id = sample["sample_id"]
    where = f"{file}: conversation {conv_id}"
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", conv_id):
        problems.append(f"{where}: sample_id must be kebab-case (e.g. conv-26) to name a scenario")
        return None
    if conv_id in seen:
        problems.append(f"{where}: duplicate sample_id; give each conversation its own id")
        return None
    seen.add(conv_id)
    conversation, qa = sample.get("conversation"), sample.get("qa")
    if not isinstance(conversation, dict) or not isinstance(qa, list):
        problems.append(f'{where}: needs a "conversation" object and a "qa" list')
        return None
    count_before = len(problems)
    thoughts = _turns(where, conv_id, conversation, report, problems)
    turn_ids = {t.id.removeprefix(f"{conv_id}/") for t in thoughts}
    queries = [
        q
        for number, item in enumerate(qa)
        if (q := _question(where, conv_id, number, item, turn_ids, report, problems)) is not None
    ]
    if len(problems) > count_before:
        return None
    if not queries:
        report.no_queries.append(conv_id)
        return None
    return Scenario(
        name=conv_id,
        category="locomo",
        description=f"LoCoMo conversation {conv_id}: {len(thoughts)} turns, {len(queries)} questions.",
        distractors=False,
        thoughts=thoughts,
        queries=queries,
    )


def _turns(
    where: str, conv_id: str, conversation: dict[str, Any], report: _ReportBuilder, problems: list[str]
) -> list[ThoughtSpec]:
    """Every turn of every session, sessions in numeric order, each dated by its session."""
    sessions = sorted(
        (int(m.group(1)), key) for key in conversation if (m := _SESSION_KEY.fullmatch(key)) is not None
    )
    numbers = {number for number, _ in sessions}
    report.orphan_dates += [
        f"{conv_id}/{key}"
        for key in conversation
        if (m := _DATE_KEY.fullmatch(key)) is not None and int(m.group(1)) not in numbers
    ]
    thoughts: list[ThoughtSpec] = []
    seen: set[str] = set()
    for _, key in sessions:
        turns = conversation[key]
        date_text = conversation.get(f"{key}_date_time")
        if not isinstance(turns, list):
            problems.append(f"{where} {key}: expected a list of turns")
            continue
        if not isinstance(date_text, str):
            problems.append(f'{where} {key}: "{key}_date_time" is missing; add e.g. "1:56 pm on 8 May, 2023"')
            continue
        try:
            created_at = parse_session_datetime(date_text)
        except ValueError as exc:
            problems.append(f"{where} {key}_date_time: {exc}; write it like '1:56 pm on 8 May, 2023'")
            continue
        report.sessions += 1
        for position, turn in enumerate(turns):
            thought = _turn(f"{where} {key} turn #{position}", conv_id, turn, created_at, seen, problems)
            if thought is not None:
                thoughts.append(thought)
    report.turns += len(thoughts)
    return thoughts


def _turn(
    where: str, conv_id: str, turn: Any, created_at: datetime, seen: set[str], problems: list[str]
) -> ThoughtSpec | None:
    fields = ("speaker", "dia_id", "text")
    if not isinstance(turn, dict) or not all(isinstance(turn.get(f), str) for f in fields):
        problems.append(f"{where}: a turn needs string fields {', '.join(fields)}; add the missing ones")
        return None
    dia_id, caption = turn["dia_id"], turn.get("blip_caption")
    if not dia_id:
        problems.append(f"{where}: empty dia_id; give the turn its D<session>:<turn> id")
        return None
    if dia_id in seen:
        problems.append(f"{where}: duplicate dia_id {dia_id!r}; turn ids must be unique in a conversation")
        return None
    seen.add(dia_id)
    if caption is not None and not isinstance(caption, str):
        problems.append(f"{where}: blip_caption must be a string; fix or remove it")
        return None
    content = f"{turn['speaker']}: {turn['text']}"
    if caption and caption.strip():
        content += f" [shares {caption.strip()}]"
    return ThoughtSpec(id=f"{conv_id}/{dia_id}", content=content, project=conv_id, created_at=created_at)


def _question(
    where: str,
    conv_id: str,
    number: int,
    item: Any,
    turn_ids: set[str],
    report: _ReportBuilder,
    problems: list[str],
) -> QuerySpec | None:
    """The query for qa item `number`, or None (problem recorded, or question without evidence)."""
    question_id = f"{conv_id}/q{number}"
    where = f"{where} qa #{number}"
    if not isinstance(item, dict) or not isinstance(item.get("question"), str):
        problems.append(f'{where}: expected an object with a string "question"; add the question')
        return None
    raw_category, evidence = item.get("category"), item.get("evidence", [])
    category = str(raw_category)
    if type(raw_category) is not int or category not in LOCOMO_CATEGORIES:
        problems.append(f"{where}: category {raw_category!r} is not an integer 1-5; fix the category")
        return None
    if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
        problems.append(f'{where}: "evidence" must be a list of strings such as ["D1:3"]; fix it')
        return None
    report.questions[category] += 1
    relevant: list[str] = []
    for raw in evidence:
        resolution = resolve_evidence(raw, turn_ids)
        added = []
        for turn_id in resolution.ids:
            namespaced = f"{conv_id}/{turn_id}"
            if namespaced not in relevant:
                relevant.append(namespaced)
                added.append(namespaced)
        kinds = resolution.kinds + (("duplicate",) if len(added) < len(resolution.ids) else ())
        if kinds:
            report.repairs.append(EvidenceRepair(conv_id, question_id, raw, tuple(added), kinds))
        report.unresolved += [
            UnresolvedEvidence(conv_id, question_id, raw, piece, reason, looked_up)
            for piece, reason, looked_up in resolution.unresolved
        ]
    if not relevant:
        reason: Literal["no-evidence", "unresolvable-evidence"] = (
            "unresolvable-evidence" if evidence else "no-evidence"
        )
        skipped = SkippedQuestion(conv_id, question_id, category, item["question"], reason)
        report.without_evidence.append(skipped)
        return None
    report.kept[category] += 1
    return QuerySpec(
        query=item["question"], relevant=relevant, id=question_id, category=category, project=conv_id
    )
