"""The verdict of a run: PASS, FAIL or NOT COMPARED — never PASS without evidence.

- **FAIL**: the run has a regression (an assertion or floor that failed, a metric below this
  system's baseline, a category missing, a required baseline missing, degenerate retrieval:
  what makes `evalkit run` exit 1).
- **NOT COMPARED** (`NOT_COMPARED`): no regression, but the metrics were not compared with a baseline
  of this system on this suite (no thresholds file, no entry for the mode and top_k, an entry of
  another system or suite, `--scenario`, `--thresholds none`), or some scope of the baseline
  (the overall or a category) was not comparable because the scenarios it averages changed (a
  scenario became not applicable, or applicable, to the system): the reasons name each such
  scope. The assertions held and the compared scopes did not regress; nothing is known of the
  others.
- **PASS**: no regression, and every scope of this system's baseline was compared.

A repeated run (`--repeat N`) adds a reason naming the queries whose ids or order differed
between the runs (`evalkit.harness.repeats`); the value stays that of the reported run.

`degenerate` names retrieval that averages would hide (`degenerate_findings`), whatever the
value: a query with relevant ids that retrieved none of them, a scenario whose queries all got
the same ranking, a run whose recall is 0 everywhere. Only the last one fails a run, and it
counts only the queries of scenarios expected to pass (outcome `pass`, measure-only ones
included): an xfail scenario is expected to miss. A run whose every query with relevant ids is
in an xfail scenario, none of them retrieving any, gets the `recall-zero-xfail` finding instead:
a note (also among the verdict's reasons) that fails nothing, since nothing expected to pass
was asked — a suite of known failures needs a control scenario expected to pass to tell a
system that finds nothing from one that fails only those.

`strength` is the suite strength when the mutation suite ran with the run (`evalkit run
--mutants`): "suite strength: caught N of M injected bugs", and for each escaped mutation what
the suite needs to catch it. It is stated among the reasons whatever the value; escaped mutations
fail a run only when it was asked to (`--mutants fail`: they are then regressions of kind
`mutation`).

The verdict is computed from what a report holds (its regressions, notes, configuration and
measurement pass), so a report saved without a verdict gets the same verdict when it is read
(`RunResult.verdict`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import SerializerFunctionWrapHandler, model_serializer

from evalkit.validation import FrozenModel
from evalkit.wording import counted

if TYPE_CHECKING:
    from evalkit.harness.repeats import Stability
    from evalkit.harness.results import DetectionPower, PassResult, Regression

VerdictValue = Literal["PASS", "FAIL", "NOT COMPARED"]
"""The three verdicts (the labels users see, in the console, the JSON and the HTML)."""

NOT_COMPARED: VerdictValue = "NOT COMPARED"

DegenerateKind = Literal["no-relevant-hit", "same-ranking", "recall-zero", "recall-zero-xfail"]
"""The degenerate findings (see the module docstring); only `recall-zero` fails a run."""


class DegenerateFinding(FrozenModel):
    """One piece of degenerate retrieval: `kind`, a readable `message`, and where (`scenario`,
    `query_number` = the query's number from 1, as everywhere else; None for a finding about the
    whole run or scenario)."""

    kind: DegenerateKind
    message: str
    scenario: str | None = None
    query_number: int | None = None


class EscapedMutation(FrozenModel):
    """A mutation the suite did not catch (or the control, when it raised a false alarm): its
    name and what the suite needs to catch it (`hint`, empty when the report saved none)."""

    mutation: str
    hint: str
    control: bool = False


class SuiteStrength(FrozenModel):
    """How many of the `injected` search bugs (the mutation catalogue, the control left out) the
    suite `caught`, and the `escaped` ones (then any false alarm of the control) with hints."""

    caught: int
    injected: int
    escaped: list[EscapedMutation]

    @property
    def line(self) -> str:
        """ "suite strength: caught N of M injected bugs", plus the control's false alarm."""
        alarm = [e.mutation for e in self.escaped if e.control]
        tail = f"; the no-op control {', '.join(alarm)} raised a false alarm" if alarm else ""
        return f"suite strength: caught {self.caught} of {self.injected} injected bugs{tail}"

    def hints(self) -> list[str]:
        """One line per escaped mutation (then per false alarm): "<mutation> escaped: <hint>"."""
        return [
            f"{e.mutation} {'raised a false alarm' if e.control else 'escaped'}"
            + (f": {e.hint}" if e.hint else "")
            for e in self.escaped
        ]


def suite_strength(detection: DetectionPower) -> SuiteStrength:
    """The suite strength of a mutation suite's outcomes (`DetectionPower`)."""
    return SuiteStrength(
        caught=detection.caught,
        injected=len(detection.injected),
        escaped=[
            EscapedMutation(mutation=o.mutation, hint=o.hint, control=o.control)
            for o in (*detection.escaped, *detection.false_alarms)
        ],
    )


class RunVerdict(FrozenModel):
    """The verdict (`value`), why (`reasons`, one line each), the degenerate retrieval found and,
    when the mutation suite ran with the run, the suite `strength` (left out of the JSON when
    None, so a report without mutation testing keeps its shape)."""

    value: VerdictValue
    reasons: list[str]
    degenerate: list[DegenerateFinding]
    strength: SuiteStrength | None = None

    @model_serializer(mode="wrap")
    def _omit_absent_strength(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("strength") is None:
            data.pop("strength", None)
        return data


def degenerate_findings(measurement: PassResult) -> list[DegenerateFinding]:
    """Degenerate retrieval in the measurement pass, over the scenarios that ran (not
    applicable ones asked nothing): first the whole run's finding — `recall-zero` when at least
    one query of a scenario expected to pass has relevant ids and none of those queries
    retrieved any (xfail scenarios' queries left out, whatever they got; the message says so
    when there were some), else `recall-zero-xfail` when no such query exists but xfail
    scenarios have some and none of those retrieved any — then per scenario in suite order its
    same-ranking finding (two queries or more, every one given the same ids in the same order)
    and the no-relevant-hit finding of each query with relevant ids that retrieved none (xfail
    scenarios included: it names where retrieval found nothing, it fails nothing)."""
    ran = [s for s in measurement.scenarios if s.status != "not_applicable"]
    labelled = [q for s in ran if s.outcome == "pass" for q in s.queries if q.relevant]
    expected_misses = [q for s in ran if s.outcome == "xfail" for q in s.queries if q.relevant]
    found: list[DegenerateFinding] = []
    if labelled and not any(set(q.retrieved) & set(q.relevant) for q in labelled):
        among = " in scenarios expected to pass" if expected_misses else ""
        found.append(
            DegenerateFinding(
                kind="recall-zero",
                message=f"recall is 0 everywhere: none of the {len(labelled)} queries with relevant ids"
                f"{among} retrieved any of them",
            )
        )
    elif (
        not labelled
        and expected_misses
        and not any(set(q.retrieved) & set(q.relevant) for q in expected_misses)
    ):
        found.append(
            DegenerateFinding(
                kind="recall-zero-xfail",
                message="recall is 0 on every query with relevant ids "
                f"({counted(len(expected_misses), 'query', 'queries')}), all in xfail scenarios: expected, "
                "so not a failure; a scenario expected to pass would tell a system that finds nothing "
                "from one that fails only these",
            )
        )
    for scenario in ran:
        rankings = {tuple(q.retrieved) for q in scenario.queries}
        if len(scenario.queries) > 1 and len(rankings) == 1:
            (ranking,) = rankings
            got = f"[{', '.join(ranking)}]" if ranking else "nothing"
            found.append(
                DegenerateFinding(
                    kind="same-ranking",
                    scenario=scenario.name,
                    message=f"{scenario.name}: all {len(scenario.queries)} queries got the same "
                    f"ranking: {got}",
                )
            )
        for q in scenario.queries:
            if q.relevant and not set(q.retrieved) & set(q.relevant):
                got = f"{counted(len(q.retrieved), 'other row')}" if q.retrieved else "nothing"
                found.append(
                    DegenerateFinding(
                        kind="no-relevant-hit",
                        scenario=scenario.name,
                        query_number=q.index + 1,
                        message=f"{scenario.name} query {q.index + 1} ({q.query!r}): none of its "
                        f"{counted(len(q.relevant), 'relevant id')} retrieved (got {got})",
                    )
                )
    return found


def judge(
    regressions: list[Regression],
    not_compared: str | None,
    degenerate: list[DegenerateFinding],
    strength: SuiteStrength | None = None,
    *,
    stability: Stability | None = None,
) -> RunVerdict:
    """The verdict of a run with `regressions`, whose metrics were not compared with a baseline
    for the reason `not_compared` (None: they were), its `degenerate` findings and the suite
    `strength` (None: the mutation suite did not run with it), which closes the reasons. A
    `recall-zero-xfail` finding's message follows the value's own reasons. For a
    repeated run (`stability`, `evalkit.harness.repeats`), the reason before the strength says
    whether the runs agreed and names the unstable queries; it does not change the value."""
    verdict = _judge(regressions, not_compared, degenerate)
    expected = [d.message for d in degenerate if d.kind == "recall-zero-xfail"]
    if expected:  # the note of an all-xfail run with recall 0: a reason, not a failure
        verdict = verdict.model_copy(update={"reasons": [*verdict.reasons, *expected]})
    if stability is not None:
        verdict = verdict.model_copy(update={"reasons": [*verdict.reasons, stability.summary()]})
    if strength is None:
        return verdict
    return verdict.model_copy(update={"strength": strength, "reasons": [*verdict.reasons, strength.line]})


def _judge(
    regressions: list[Regression],
    not_compared: str | None,
    degenerate: list[DegenerateFinding],
) -> RunVerdict:
    if regressions:
        kinds: dict[str, int] = {}
        for r in regressions:
            kinds[r.kind] = kinds.get(r.kind, 0) + 1
        reasons = [
            f"{counted(len(regressions), 'regression')}: "
            + ", ".join(f"{n} {kind}" for kind, n in kinds.items())
        ]
        if not_compared is not None:
            reasons.append(f"metrics were not compared with a baseline: {not_compared}")
        return RunVerdict(value="FAIL", reasons=reasons, degenerate=degenerate)
    if not_compared is not None:
        return RunVerdict(
            value=NOT_COMPARED,
            reasons=[f"metrics were not compared with a baseline: {not_compared}", "assertions held"],
            degenerate=degenerate,
        )
    return RunVerdict(
        value="PASS",
        reasons=[
            "metrics compared with this system's baseline on this suite: no regression",
            "assertions held",
        ],
        degenerate=degenerate,
    )
