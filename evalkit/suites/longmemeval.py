"""Import LongMemEval (Wu et al., ICLR 2025) as one scenario per question.

Input: one of the published JSON files (`longmemeval_oracle.json`, `longmemeval_s[_cleaned].json`,
`longmemeval_m[_cleaned].json`): a list of questions, each with `question_id`, `question_type`,
`question`, `answer`, `question_date`, `haystack_session_ids`, `haystack_dates` and
`haystack_sessions` (parallel lists: a session is a list of turns `{"role": "user"|"assistant",
"content", "has_answer"?}`) and `answer_session_ids`. A question whose id ends in `_abs` is an
abstention question (its answer is not in the history). Other keys are ignored.

Mapping onto the scenario model (`granularity` chooses what one memory row is):
- one scenario per question, named after its id (`slug`: "gpt4_2655b836" → "gpt4-2655b836"),
  no distractors: the question's haystack is its whole memory (a fresh store per question);
- **session** granularity: one thought per session that has a user turn, `id` =
  "<question_id>/<session_id>", `content` = its user turns joined by newlines; relevant = the
  `answer_session_ids` that were seeded;
- **turn** granularity: one thought per user turn, `id` = "<question_id>/<session_id>/<n>" with
  `n` the turn's 1-based position in its session (assistant turns count, as in LongMemEval's
  `sess_id_<n>` corpus ids); relevant = the user turns marked `has_answer: true`;
- `created_at` = the session's `haystack_dates` entry ("2023/05/20 (Sat) 02:21", read as UTC;
  see `parse_haystack_date`); `project` = question_id;
- the query: `id` = question_id, `category` = question_type (the per-type table groups by it),
  `project` = question_id.

Decisions (the official retrieval code, `src/retrieval/run_retrieval.py`, is the reference):
- Only user turns are seeded, at both granularities, as LongMemEval's retrieval evaluation
  indexes them; a question whose evidence is only in assistant turns has no evidence at turn
  level.
- **Abstention questions** are scenarios of category "longmemeval-abstention" marked
  `measure_only`: they run and are reported (frames: `measure_only` true, `counted` false), but
  are left out of every aggregate, as the official evaluation skips them; they are never scored as
  zero recall. The other scenarios have category "longmemeval".
- A non-abstention question left without evidence at the chosen granularity is not a query: it
  is listed in `LongMemEvalReport.without_evidence` (the official code skips such questions
  too). Answer session ids missing from the haystack are listed in `missing_answer_sessions`;
  a session listed twice in one haystack with the same id and turns is seeded once and listed in
  `repeated_sessions` (the same id with other turns is an error).
- The official code also relabels an answer session without a user turn marked `has_answer` as
  not relevant; evalkit keeps every answer session (the file's own label) and counts those
  sessions in `answer_sessions_without_marked_turn`, so the difference is visible.
- `question_date` must parse but is not used: searches run without recency.

Invalid input (not a list, missing or mistyped fields, lists of different lengths, duplicate
question or session ids, unparsable dates, unknown roles) raises one `DatasetError` listing every
problem with file, question and field. The whole file is held in memory (LongMemEval_M, about
500 sessions per question, needs several GB).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from tqdm import tqdm

from evalkit.errors import DatasetError, UsageError
from evalkit.progress import progress_enabled
from evalkit.scenarios.model import QuerySpec, Scenario, ThoughtSpec
from evalkit.suites.readers import read_json_list, slug
from evalkit.wording import counted

Granularity = Literal["session", "turn"]
GRANULARITIES: tuple[str, ...] = get_args(Granularity)
"""What one memory row is: a whole session (its user turns) or one user turn."""

ABSTENTION_SUFFIX = "_abs"
"""A question id ending in this marks an abstention question."""

SCENARIO_CATEGORY = "longmemeval"
ABSTENTION_CATEGORY = "longmemeval-abstention"
"""Scenario categories of scored and of abstention (measure-only) questions."""

_DATE = re.compile(r"(\d{4})/(\d{2})/(\d{2}) \([A-Za-z]{3}\) (\d{2}):(\d{2})")
_FIELDS: Mapping[str, type] = {
    "question_id": str,
    "question_type": str,
    "question": str,
    "question_date": str,
    "haystack_session_ids": list,
    "haystack_dates": list,
    "haystack_sessions": list,
    "answer_session_ids": list,
}


def parse_haystack_date(text: str) -> datetime:
    """Parse a LongMemEval date such as "2023/05/20 (Sat) 02:21" into a UTC datetime.

    Format `YYYY/MM/DD (Ddd) HH:MM`, 24-hour clock; the weekday's three letters are required but
    not checked against the date; the data gives no zone, so the time is read as UTC. Raises
    ValueError naming what is wrong (shape, or no such date or time).
    """
    match = _DATE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not of the form '2023/05/20 (Sat) 02:21'")
    year, month, day, hour, minute = map(int, match.groups())
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def is_abstention(question_id: str) -> bool:
    """True for an abstention question (id ending in `_abs`)."""
    return question_id.endswith(ABSTENTION_SUFFIX)


@dataclass(frozen=True, slots=True)
class LongMemEvalReport:
    """What `load_longmemeval` read and left out, at one granularity.

    Invariant: questions = scored + abstention + len(without_evidence), where `scored` counts
    non-abstention questions that became queries. Counts by type are keyed by question_type.
    """

    file: str
    granularity: str
    sessions: int
    documents: int
    questions_by_type: Mapping[str, int]
    scored_by_type: Mapping[str, int]
    abstention: tuple[str, ...]
    without_evidence: tuple[str, ...]
    missing_answer_sessions: tuple[str, ...]
    repeated_sessions: tuple[str, ...]
    answer_sessions_without_marked_turn: int

    @property
    def questions(self) -> int:
        """Every question in the file."""
        return sum(self.questions_by_type.values())

    @property
    def scored(self) -> int:
        """Non-abstention questions that became queries (the aggregates' queries)."""
        return sum(self.scored_by_type.values())

    def summary(self) -> str:
        """One line: what was loaded, what runs measure-only and what was left out."""
        return (
            f"LongMemEval {self.file} ({self.granularity} level): {self.questions} questions, "
            f"{self.sessions} sessions, {self.documents} memory rows; {self.scored} scored, "
            f"{len(self.abstention)} abstention (_abs; measure-only, not in the aggregates), "
            f"{len(self.without_evidence)} without evidence at this level (not queries); "
            f"{len(self.missing_answer_sessions)} answer session ids not in the haystack, "
            f"{len(self.repeated_sessions)} repeated sessions seeded once, "
            f"{self.answer_sessions_without_marked_turn} answer sessions without a user turn "
            "marked has_answer"
        )


@dataclass(frozen=True, slots=True)
class LongMemEvalSet:
    """Loaded LongMemEval: one scenario per question, in file order, and the load report."""

    scenarios: tuple[Scenario, ...]
    report: LongMemEvalReport


def load_longmemeval(
    path: str | Path, granularity: str = "session", *, progress: bool | None = None
) -> LongMemEvalSet:
    """Load a LongMemEval JSON file at `granularity` ("session" or "turn").

    `progress`: True/False forces a per-question progress bar (stderr) on/off; None decides with
    `evalkit.progress.progress_enabled`. Raises UsageError for an unknown granularity (before
    reading) and DatasetError listing every problem of the file.
    """
    if granularity not in GRANULARITIES:
        raise UsageError(f"unknown granularity {granularity!r}; use one of {', '.join(GRANULARITIES)}")
    file = Path(path)
    items = read_json_list(file, "LongMemEval", "pass e.g. longmemeval_s_cleaned.json", "questions")
    builder = _Builder(granularity)
    problems: list[str] = []
    scenarios: list[Scenario] = []
    names: dict[str, str] = {}
    with tqdm(total=len(items), desc=file.name, unit="q", disable=not progress_enabled(progress)) as bar:
        for index, item in enumerate(items):
            scenario = _question(file, index, item, names, builder, problems)
            if scenario is not None:
                scenarios.append(scenario)
            bar.update(1)
    if problems:
        raise DatasetError(
            f"LongMemEval file {file} is invalid ({counted(len(problems), 'problem')})", problems
        )
    return LongMemEvalSet(scenarios=tuple(scenarios), report=builder.build(file.name))


class _Builder:
    """Accumulates the report while questions load, and builds each question's rows."""

    def __init__(self, granularity: str) -> None:
        self.granularity = granularity
        self.sessions = 0
        self.documents = 0
        self.questions: Counter[str] = Counter()
        self.scored: Counter[str] = Counter()
        self.abstention: list[str] = []
        self.without_evidence: list[str] = []
        self.missing: list[str] = []
        self.repeated: list[str] = []
        self.unmarked = 0

    def build(self, file: str) -> LongMemEvalReport:
        return LongMemEvalReport(
            file=file,
            granularity=self.granularity,
            sessions=self.sessions,
            documents=self.documents,
            questions_by_type=dict(sorted(self.questions.items())),
            scored_by_type=dict(sorted(self.scored.items())),
            abstention=tuple(self.abstention),
            without_evidence=tuple(self.without_evidence),
            missing_answer_sessions=tuple(self.missing),
            repeated_sessions=tuple(self.repeated),
            answer_sessions_without_marked_turn=self.unmarked,
        )

    def rows(
        self, qid: str, sessions: list[tuple[str, datetime, list[dict[str, Any]]]], answers: list[str]
    ) -> tuple[list[ThoughtSpec], list[str]]:
        """The question's thoughts and relevant ids at this granularity (user turns only)."""
        known = {sid for sid, _, _ in sessions}
        self.missing += [f"{qid}/{sid}" for sid in answers if sid not in known]
        self.unmarked += sum(
            1
            for sid, _, turns in sessions
            if sid in answers and not any(t["role"] == "user" and t.get("has_answer") for t in turns)
        )
        thoughts: list[ThoughtSpec] = []
        relevant: list[str] = []
        for sid, created_at, turns in sessions:
            user = [(n, t) for n, t in enumerate(turns, start=1) if t["role"] == "user"]
            if self.granularity == "session" and user:
                thought_id = f"{qid}/{sid}"
                content = "\n".join(t["content"] for _, t in user)
                thoughts.append(
                    ThoughtSpec(id=thought_id, content=content, project=qid, created_at=created_at)
                )
                if sid in answers:
                    relevant.append(thought_id)
            elif self.granularity == "turn":
                for n, turn in user:
                    thought_id = f"{qid}/{sid}/{n}"
                    thoughts.append(
                        ThoughtSpec(
                            id=thought_id, content=turn["content"], project=qid, created_at=created_at
                        )
                    )
                    if turn.get("has_answer"):
                        relevant.append(thought_id)
        self.sessions += len(sessions)
        self.documents += len(thoughts)
        return thoughts, relevant


def _question(
    file: Path, index: int, item: Any, names: dict[str, str], builder: _Builder, problems: list[str]
) -> Scenario | None:
    """One question's scenario, or None (problems recorded, or no evidence at this level)."""
    where = f"{file}: question #{index}"
    if not isinstance(item, dict):
        problems.append(f"{where}: expected a JSON object (a question); fix the item")
        return None
    wrong = [
        f'"{key}" ({"missing" if key not in item else "not a " + kind.__name__})'
        for key, kind in _FIELDS.items()
        if not isinstance(item.get(key), kind)
    ]
    wrong += [] if "answer" in item else ['"answer" (missing)']
    if wrong:
        problems.append(f"{where}: bad or missing fields {', '.join(wrong)}; use the published format")
        return None
    qid = item["question_id"]
    where = f"{file}: question {qid}"
    name = slug(qid)
    if not name:
        problems.append(f"{where}: question_id has no letter or digit to name a scenario; fix the id")
        return None
    if name in names:
        problems.append(
            f"{where}: question_id gives scenario name {name!r} already used (as {names[name]!r}); "
            "ids must differ"
        )
        return None
    names[name] = qid
    sessions = _sessions(where, item, problems, builder.repeated)
    answers = item["answer_session_ids"]
    if not all(isinstance(a, str) for a in answers):
        problems.append(f'{where}: "answer_session_ids" must list strings; fix it')
        return None
    try:
        parse_haystack_date(item["question_date"])
    except ValueError as exc:
        problems.append(f"{where} question_date: {exc}; write it like '2023/05/20 (Sat) 02:21'")
        return None
    if sessions is None:
        return None
    thoughts, relevant = builder.rows(qid, sessions, answers)
    question_type, abstention = item["question_type"], is_abstention(qid)
    builder.questions[question_type] += 1
    if abstention:
        builder.abstention.append(qid)
    elif not relevant:
        builder.without_evidence.append(qid)
        return None
    else:
        builder.scored[question_type] += 1
    query = QuerySpec(query=item["question"], relevant=relevant, id=qid, category=question_type, project=qid)
    return Scenario(
        name=name,
        category=ABSTENTION_CATEGORY if abstention else SCENARIO_CATEGORY,
        description=f"LongMemEval {question_type} question {qid}: {len(thoughts)} rows.",
        measure_only=abstention,
        distractors=False,
        thoughts=thoughts,
        queries=[query],
    )


def _sessions(
    where: str, item: dict[str, Any], problems: list[str], repeated: list[str]
) -> list[tuple[str, datetime, list[dict[str, Any]]]] | None:
    """(session id, date, turns) per haystack session, or None when any of it is invalid. A
    session repeated with the same id and turns is seeded once (listed in `repeated`)."""
    ids, dates, sessions = item["haystack_session_ids"], item["haystack_dates"], item["haystack_sessions"]
    if not len(ids) == len(dates) == len(sessions):
        problems.append(
            f"{where}: haystack_session_ids, haystack_dates and haystack_sessions have lengths "
            f"{len(ids)}, {len(dates)}, {len(sessions)}; they must be parallel lists"
        )
        return None
    count_before = len(problems)
    out: list[tuple[str, datetime, list[dict[str, Any]]]] = []
    seen: dict[str, Any] = {}
    for position, (sid, date, turns) in enumerate(zip(ids, dates, sessions, strict=True)):
        at = f"{where} session #{position}"
        if isinstance(sid, str) and seen.get(sid) == turns:
            repeated.append(f"{item['question_id']}/{sid}")
            continue
        if not isinstance(sid, str) or not sid or sid in seen:
            problems.append(
                f"{at}: session id {sid!r} is empty, not a string, or names an earlier session with "
                "other turns; give each session its own id"
            )
            continue
        seen[sid] = turns
        try:
            created_at = parse_haystack_date(date) if isinstance(date, str) else None
        except ValueError as exc:
            problems.append(f"{at} ({sid}) date: {exc}; write it like '2023/05/20 (Sat) 02:21'")
            continue
        if created_at is None:
            problems.append(f"{at} ({sid}): the date must be a string like '2023/05/20 (Sat) 02:21'")
            continue
        if not isinstance(turns, list) or not all(_valid_turn(t) for t in turns):
            problems.append(
                f'{at} ({sid}): turns must be objects with "role" user|assistant, string "content" '
                'and optional boolean "has_answer"; fix the turns'
            )
            continue
        out.append((sid, created_at, turns))
    return None if len(problems) > count_before else out


def _valid_turn(turn: Any) -> bool:
    return (
        isinstance(turn, dict)
        and turn.get("role") in ("user", "assistant")
        and isinstance(turn.get("content"), str)
        and isinstance(turn.get("has_answer", False), bool)
    )
