"""Regressions (SPEC §3.5): comparing a pass with what its thresholds file recorded.

- `assertion_regressions`: every check error of a failing scenario — always, file or not.
- `metric_regressions`: the ungated pass against a mode entry's recorded thresholds, every
  harness metric, overall and per category (kinds `metric`, `present`).
- `gated_regressions`: the gated pass against a gated entry's live recall floors
  (`GatedEntry.floor`; kinds `gated-metric`, `gated-present`).
- `no_baseline_reason`: why metrics were not compared when the file has no entry for the run.
- `baseline_mismatch`: why an entry for the run's (mode, top_k) is still not comparable: it was
  recorded for another system, or on another suite.
- `assert_no_regressions`: a run's verdict line, or RegressionError listing every regression
  (the report notebook's final cell, through `evalkit.assert_thresholds`).

A metric regresses when actual + `TOLERANCE` < its floor. Building entries is
`harness.baselines`; the file itself is `harness.thresholds_file`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import RegressionError
from evalkit.harness.aggregation import feeds_means_when_applicable, scope_scenarios
from evalkit.harness.results import PassResult, Regression, RunResult
from evalkit.harness.thresholds_file import (
    RECORD_COMMAND,
    BaselineSystem,
    GatedEntry,
    MetricLevels,
    ModeEntry,
    SuiteFingerprint,
    ThresholdLevels,
    recorded,
)
from evalkit.metrics import HARNESS_METRICS
from evalkit.metrics.registry import BEHAVIOUR
from evalkit.wording import counted, few_names

TOLERANCE = 1e-6
"""A metric regresses when actual + TOLERANCE < threshold (absorbs float noise)."""


def no_baseline_reason(mode: str, top_k: int, path: Path, entries: Mapping[str, ModeEntry]) -> str:
    """Why the baseline check is off for a run without an entry, and how to record exactly that
    entry: `RECORD_COMMAND` over this run's report (the same suite, mode, top_k and thresholds
    file; it adds the entry and keeps every other one, so it can replace nothing)."""
    return (
        f"no baseline for {mode} at top_k {top_k} in {path} (it holds {recorded(entries)}); to record one "
        f"from this run's report, `{RECORD_COMMAND}` (it adds this entry and keeps the others)"
    )


def baseline_mismatch(
    entry: ModeEntry, mode: str, path: Path, system: BaselineSystem, suite: SuiteFingerprint
) -> str | None:
    """Why `entry` (the file's baseline for the run's `mode` and top_k) cannot be compared with a
    run of `system` on `suite`, or None when it can.

    - Another system: the entry's system name (`ModeEntry.system_name`: the reference store's
      for an entry that names none) differs from the run's: "the baseline ... was recorded for
      system reference; this run evaluated keywords". Only the name identifies the system: the
      entry's recorded `spec` and `describe()` say how it was reached and configured, but
      describe() often holds what one run was given (a replayed file's path and hash, a server's
      URL and port) and would make every run a stranger to its own baseline.
    - Another suite: the entry recorded a suite fingerprint and the run's digest differs; the
      files that changed, appeared or disappeared are counted and the first few named (when both
      sides have per-file hashes). An entry without a fingerprint (recorded before suites were
      fingerprinted) is compared whatever the suite holds.
    The system is checked first: a foreign system's baseline is named as such even when the
    suite changed too.

    The advice never overwrites another suite's or system's baseline unawares: it is a
    thresholds file of the run's own, or — for a suite edited since, which a digest cannot tell
    from another suite — the entry's place on purpose (`--replace`), the entry's suite named
    (`SuiteFingerprint.label`) so the user can tell.
    """
    where = f"the baseline for {mode} at top_k {entry.top_k} in {path}"
    own_file = (
        f"record this run's baseline into a thresholds file of its own (`{RECORD_COMMAND} --thresholds PATH`)"
    )
    if entry.system_name != system.name:
        return (
            f"{where} was recorded for system {entry.system_name}; this run evaluated {system.name}: "
            + own_file
        )
    if entry.suite is None or entry.suite.digest == suite.digest:
        return None
    return (
        f"{where} was recorded on {entry.suite.label}, and this run's suite differs "
        f"({_changed_files(entry.suite, suite)}): record this run's baseline into a thresholds file of its "
        f"own (`{RECORD_COMMAND} --thresholds PATH`), or, if that entry is this suite's own older baseline, "
        f"in its place (`{RECORD_COMMAND} --replace`)"
    )


def _changed_files(then: SuiteFingerprint, now: SuiteFingerprint) -> str:
    """ "2 files: scenarios/a.yaml changed, scenarios/b.yaml added", or "its digest differs"
    when either side has no per-file hashes."""
    if not then.files or not now.files:
        return "its digest differs"
    changed = [
        f"{name} {'added' if name not in then.files else 'removed' if name not in now.files else 'changed'}"
        for name in sorted({*then.files, *now.files})
        if then.files.get(name) != now.files.get(name)
    ]
    return f"{counted(len(changed), 'file')}: {few_names(changed)}" if changed else "its digest differs"


def assertion_regressions(result: PassResult) -> list[Regression]:
    """Every check error of every failing scenario (measure-only included), floors included: its
    scenario floor errors first, then its queries' errors in query order; xfail never gates."""
    found = []
    for s in result.scenarios:
        if s.status != "fail":
            continue
        found += [
            Regression(kind="assertion", scenario=s.name, category=s.category, message=f"{s.name}: {error}")
            for error in s.floor_errors
        ]
        found += [
            Regression(
                kind="assertion",
                scenario=s.name,
                category=s.category,
                message=f"{s.name} query {q.index + 1} ({q.query!r}): {error}",
            )
            for q in s.queries
            for error in q.check_errors
        ]
    return found


def metric_regressions(result: PassResult, entry: ModeEntry) -> list[Regression]:
    """Metrics below their thresholds in the scopes `scope_check` compares (overall and per
    category, over the same scenarios as the baseline), and categories of the entry that the run
    lacks altogether (`present`). A harness metric the entry does not hold (the entry was
    recorded before the metric was registered) is not compared: no regression for it until a
    baseline records it. The scopes that are not comparable are `ScopeCheck.not_comparable`:
    no regression, but the caller must say so (`harness.evaluate`)."""
    check = scope_check(result, entry)
    found: list[Regression] = [
        Regression(
            kind="present",
            category=category,
            message=f"category {category!r} has a baseline but no counted scenario ran in it",
        )
        for category in check.vanished
    ]
    for category, floor in check.compared:
        actual = result.overall if category is None else result.categories[category]
        found.extend(_below(category, floor, actual.metrics))
        found.extend(_behaviour_beyond(category, floor, actual.behaviour))
    return found


def _behaviour_beyond(
    category: str | None, levels: MetricLevels, actual: Mapping[str, float]
) -> list[Regression]:
    """The behaviour metrics the entry records (`ThresholdLevels.behaviour`) past their thresholds in
    `actual`: above the ceiling of a lower-is-better one, below the floor of the others. A metric
    the run did not measure is not compared."""
    found = []
    recorded: Mapping[str, float] = levels.behaviour if isinstance(levels, ThresholdLevels) else {}
    for m, threshold in recorded.items():
        if m not in actual:
            continue
        lower = BEHAVIOUR[m].lower_is_better
        if (actual[m] > threshold + TOLERANCE) if lower else (actual[m] + TOLERANCE < threshold):
            found.append(_crossed(category, m, actual[m], threshold, "above" if lower else "below"))
    return found


@dataclass(frozen=True)
class ScopeCheck:
    """How each scope of a baseline entry (None = overall) stands against a run:
    - `compared`: the scopes whose scenarios are the baseline's, with their thresholds;
    - `vanished`: categories of the entry none of whose scenarios is in the run any more
      (no scenario of that category expected to pass and not measure-only, applicable or not):
      `present` regressions;
    - `not_comparable`: scope → why its averaged scenarios differ from the baseline's (a
      scenario became not applicable, or applicable, to the system): never compared, and never
      passed silently (the run's verdict names them)."""

    compared: list[tuple[str | None, MetricLevels]]
    vanished: list[str]
    not_comparable: dict[str | None, str]


def recorded_scenarios(entry: ModeEntry, scope: str | None, result: PassResult) -> list[str]:
    """The scenarios the entry's `scope` (None = overall) averaged: the recorded set, or — the one
    rule for entries recorded before scenario sets (the built-in files' older entries) — every
    scenario of `result` in that scope that feeds the means when applicable, as if the baseline
    had been recorded with all of them applicable (as the reference store's were). Such an entry
    is thus compared where every scenario of the scope ran, and not comparable where one was not
    applicable; recording it again gives it its sets."""
    levels = entry.baseline.overall if scope is None else entry.baseline.categories.get(scope)
    if levels is not None and levels.scenarios is not None:
        return levels.scenarios
    return scope_scenarios(result.scenarios, feeds_means_when_applicable).get(scope, [])


def scope_check(result: PassResult, entry: ModeEntry) -> ScopeCheck:
    """Which scopes of `entry` (the overall and each category of its thresholds) `result` is
    compared in: those whose applicable scenarios (`scope_scenarios`) are the ones the baseline
    averaged (`recorded_scenarios`), as sets, and that average something (a query, or behaviour
    metrics: a scope over 0 queries compares nothing and is not comparable); see `ScopeCheck`."""
    now = scope_scenarios(result.scenarios)
    present = scope_scenarios(result.scenarios, feeds_means_when_applicable)
    check = ScopeCheck(compared=[], vanished=[], not_comparable={})
    scopes: list[tuple[str | None, MetricLevels]] = [
        (None, entry.thresholds.overall),
        *entry.thresholds.categories.items(),
    ]
    for scope, levels in scopes:
        then, ran = recorded_scenarios(entry, scope, result), now.get(scope, [])
        if scope is not None and scope not in present:
            check.vanished.append(scope)
        elif set(then) != set(ran):
            check.not_comparable[scope] = _difference(then, ran)
        elif ran or (isinstance(levels, ThresholdLevels) and levels.behaviour):
            check.compared.append((scope, levels))
        else:  # recorded over 0 queries before such baselines were refused (`baselines.check_counted`)
            check.not_comparable[scope] = "it averages no query: record the baseline again"
    return check


def _difference(then: list[str], now: list[str]) -> str:
    """ "baseline 41 scenarios, this run 33; missing now: a, b, c and 5 more" (`few_names`)."""
    gone = [name for name in then if name not in now]
    new = [name for name in now if name not in then]
    parts = [f"missing now: {few_names(gone)}" if gone else "", f"new: {few_names(new)}" if new else ""]
    return "; ".join([f"baseline {len(then)} scenarios, this run {len(now)}", *(p for p in parts if p)])


def scope_name(scope: str | None) -> str:
    """ "overall" or "category 'explicit-fact'": a scope as messages name it."""
    return "overall" if scope is None else f"category {scope!r}"


def _below(category: str | None, floor: MetricLevels, actual: Mapping[str, float]) -> list[Regression]:
    """The harness metrics of `actual` below their thresholds in `floor`; a metric the entry does
    not hold (recorded before the metric was registered) is not compared."""
    found = []
    for m in HARNESS_METRICS:
        threshold = floor.value(m)
        if threshold is not None and actual[m] + TOLERANCE < threshold:
            found.append(_crossed(category, m, actual[m], threshold, "below"))
    return found


def _crossed(category: str | None, metric: str, actual: float, threshold: float, side: str) -> Regression:
    """The metric regression of `metric` in `category` (None = overall), `actual` being `side`
    ("below" or "above") its `threshold`."""
    where = "overall" if category is None else f"category {category!r}"
    return Regression(
        kind="metric",
        category=category,
        metric=metric,
        actual=actual,
        threshold=threshold,
        message=f"{where}: {metric} {actual:.4f} is {side} its threshold {threshold:.4f}",
    )


def gated_regressions(gated: PassResult, entry: GatedEntry) -> list[Regression]:
    """The gated pass's recall below its gated floors (`GatedEntry.floor`), overall and per
    category (kind `gated-metric`), and categories of the entry that the pass lacks
    (`gated-present`). Each message starts with "gated pass (min_relevance X)"."""
    label = f"gated pass (min_relevance {entry.min_relevance:g})"
    found: list[Regression] = []
    for category in (None, *entry.baseline.categories):
        actual = gated.overall if category is None else gated.categories.get(category)
        where = "overall" if category is None else f"category {category!r}"
        if actual is None:
            found.append(
                Regression(
                    kind="gated-present",
                    category=category,
                    message=f"{label}: {where} has a gated baseline but no counted scenario ran in it",
                )
            )
            continue
        floor, recall = entry.floor(category), actual.metrics["recall"]
        if recall + TOLERANCE < floor:
            levels = entry.baseline.overall if category is None else entry.baseline.categories[category]
            found.append(
                Regression(
                    kind="gated-metric",
                    category=category,
                    metric="recall",
                    actual=recall,
                    threshold=floor,
                    message=f"{label}: {where}: recall {recall:.4f} is below its gated floor {floor:.4f} "
                    f"(gated baseline {levels.recall:.4f} − tolerance {entry.tolerances.of(category):g})",
                )
            )
    return found


def assert_no_regressions(result: RunResult, fail: bool = True, hint: str | None = None) -> str:
    """Raise RegressionError listing every regression when `fail` and the run has any.

    Returns the verdict line otherwise (`RunResult.verdict`: "No gating regressions." only when
    the metrics were compared with a baseline, else the "baseline check OFF: ..." note) or, with
    `fail` False, how many regressions were found but not raised. A baseline-check-OFF note
    follows the regressions in either case, then `hint` (a fix in the caller's spelling), if any.
    """
    regressions = result.regressions
    if not regressions:
        return result.verdict_line()
    off = result.baseline_check_off
    lines = [f"  - [{r.kind}] {r.message}" for r in regressions] + [n for n in (off, hint) if n is not None]
    message = f"{counted(len(regressions), 'regression')} against the thresholds:\n" + "\n".join(lines)
    if fail:
        raise RegressionError(message)
    return message + "\n(not raised: fail_on_regression is False)"
