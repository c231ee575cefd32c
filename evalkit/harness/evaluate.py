"""The one evaluation path: `evaluate(suite, system, config) -> RunResult`.

`evalkit run`, `bench`, `mutants`, the notebooks and the Python API all come here: run the
passes of the plan (`evalkit.harness.runner.pass_plan`), gate on the recorded thresholds, record
provenance. Decisions where the SPEC is silent:
- The thresholds file is read before anything runs, so an invalid file fails fast (exit 2).
- The run's mode is the embedder mode it asked for, unless its system embeds by itself (it
  declares `own_embedder`): then `system` (`run_mode`), which keys its baselines and shows in
  the report; asking such a system for `--embedder real` is a UsageError.
- The baseline check is off when the file is missing or has no entry for the run's (mode, top_k)
  (metrics at another cut-off are not comparable, so another top_k's entry never stands in),
  and when that entry was recorded for another system or on another suite
  (`regressions.baseline_mismatch`: baselines belong to a system and a suite; an entry without
  a system is the reference store's, one without a suite fingerprint predates fingerprints).
  The report then carries a note beginning "baseline check OFF" (`RunResult.baseline_check_off`),
  which the console, the JSON and the report notebook's verdict show instead of "No gating
  regressions.". Assertion regressions always count. `config.thresholds` None turns the
  baseline check off without a note (benchmarks: nothing to compare with, by design).
- A suite restricted to some scenarios (`Suite.subset`) is not checked against baselines either (the same
  kind of note): baselines average whole categories of the whole suite, so a subset's means differ.
  Nor is a perturbed suite (`Suite.perturbation`, `evalkit run --perturb`): its memory is not the
  one any baseline was measured on, so its note names the perturbation.
- A run whose recall is 0 on every query with relevant ids of the scenarios expected to pass
  has a `degenerate` regression (`harness.verdict.degenerate_findings`): it is never PASS,
  whatever baseline it meets. xfail scenarios are expected to miss: they do not count, and a
  run of xfail scenarios only gets a note in its verdict instead.
- Like is compared with like: a baseline records, per scope (overall and each category), the
  scenarios it averaged, and a scope is compared only when the run's applicable scenarios in it
  are the same ones (`regressions.scope_check`; entries recorded before scenario sets are read
  by `regressions.recorded_scenarios`). Scenarios not applicable to the system are listed in a
  note; a system whose baseline was recorded with the same ones not applicable is compared in
  every scope, overall included. A scope whose scenarios changed is not comparable: the run
  gets a note beginning "baseline check OFF" naming each such scope and how its scenarios
  differ, so its verdict is never PASS (NOT COMPARED without regressions, `harness.verdict`); the
  other scopes are compared as usual.
- `config.require_baseline` (None: on in a CI context, `evalkit.ci`): baseline check OFF for
  any of these reasons, no thresholds file at all, or a scope of the baseline not comparable, is
  itself a regression (kind `baseline`, `harness.requirement`), so CI cannot pass without
  comparing every scope of the baseline.
- A system without a relevance gate gets no gated pass, with a note.
- The gated pass is checked against a baseline only when the thresholds file holds a gated
  baseline for this mode, top_k and the gate the pass ran at (`ThresholdsDocument.gated_entry`),
  and the suite is whole:
  its role is then own-baseline; otherwise it stays report-only, and nothing about it is added
  to the notes (a file without gated baselines gives exactly the report of a version without them).
"""

from __future__ import annotations

from datetime import UTC, datetime

from evalkit.embedders.factory import EmbedderInfo
from evalkit.errors import UsageError
from evalkit.harness.baselines import measured_on
from evalkit.harness.config import SYSTEM_MODE, RunConfig
from evalkit.harness.executors import Executor
from evalkit.harness.provenance import ComparedBaseline, ComparedScope, collect
from evalkit.harness.regressions import (
    ScopeCheck,
    assertion_regressions,
    baseline_mismatch,
    gated_regressions,
    metric_regressions,
    no_baseline_reason,
    scope_check,
    scope_name,
)
from evalkit.harness.requirement import missing_baseline
from evalkit.harness.results import (
    BASELINE_CHECK_OFF,
    PassResult,
    Regression,
    RunResult,
    degenerate_regressions,
)
from evalkit.harness.runner import run_suite
from evalkit.harness.thresholds_file import (
    RECORD_COMMAND,
    BaselineSystem,
    GatedEntry,
    ModeEntry,
    SuiteFingerprint,
    ThresholdsDocument,
    find_baseline,
    read_thresholds,
)
from evalkit.metrics import HARNESS_METRICS
from evalkit.scenarios import Suite
from evalkit.systems import MemorySystem
from evalkit.systems.checked import call_system, system_name
from evalkit.systems.declaration import declaration_of
from evalkit.systems.resolve import checked_system
from evalkit.wording import counted


def evaluate(
    suite: Suite,
    system: MemorySystem,
    config: RunConfig,
    *,
    embedder: EmbedderInfo | None = None,
    notes: tuple[str, ...] = (),
    clock: datetime | None = None,
    progress: bool | None = None,
    executor: Executor | None = None,
) -> RunResult:
    """Run `suite` on `system` as `config` says and build the result, regressions included.

    `embedder` describes the embedder evalkit built for `system` (None when the system embeds by
    itself); `notes` open the result's notes (what a benchmark loaded); `clock` is the run's "now"
    (see `run_suite`); `executor` runs the scenarios (default: serially, in this process; the
    result is the same on every executor). Raises ThresholdsError for an invalid thresholds
    file, before running.
    """
    document = read_thresholds(config.thresholds) if config.thresholds is not None else None
    entries = None if document is None else document.modes
    judged = config.model_copy(update={"mode": run_mode(checked_system(system, "the system is"), config)})
    result = run_suite(suite, system, config, clock=clock, progress=progress, executor=executor)
    measurement, gated = result.measurement, result.gated
    provenance = collect(
        config,
        suite.digest,
        call_system(system_name(system), "describe", system.describe, ()),
        embedder,
        suite.file_digests,
        declaration=declaration_of(system),
    )
    metric_notes, metric_found, compared = baseline_check(
        suite, judged, measurement, entries, measured_on(system.name, provenance)
    )
    if compared is not None:
        provenance = provenance.model_copy(update={"baseline": compared})
    run_notes = [*notes, *_applicability_notes(result.not_applicable, result.gate_skipped), *metric_notes]
    gated_entry = _gated_entry(suite, judged, gated, document)
    passes = result.passes
    gated_found: list[Regression] = []
    if gated_entry is not None and gated is not None:
        gated_found = gated_regressions(gated, gated_entry)
        passes = tuple(p.model_copy(update={"role": "own-baseline"}) if p is gated else p for p in passes)
    return RunResult(
        passes=passes,
        mode=judged.mode,
        generated_at=datetime.now(UTC).replace(microsecond=0).isoformat(),
        top_k=config.top_k,
        system=system.name,
        provenance=provenance,
        regressions=assertion_regressions(measurement)
        + metric_found
        + gated_found
        + degenerate_regressions(measurement),
        notes=run_notes,
        gated_baseline=None if gated_entry is None else gated_entry.ref(),
        latency=result.latency,
        not_applicable=result.not_applicable,
    )


def run_mode(system: MemorySystem, config: RunConfig) -> str:
    """The mode a run of `system` is judged in and its baselines are keyed by: `SYSTEM_MODE` for
    a system that embeds by itself (`own_embedder`), else the embedder mode `config` asks for.
    UsageError when `config` asks for the real embedder, which such a system does not use."""
    if system.own_embedder is None:
        return config.mode
    if config.mode == "real":
        raise UsageError(
            f"system {system_name(system)!r} embeds by itself ({system.own_embedder}), so the run's "
            "embedder does not apply to it: drop --embedder real (its run's mode is 'system')"
        )
    return SYSTEM_MODE


def _applicability_notes(not_applicable: dict[str, list[str]], gate_skipped: bool) -> list[str]:
    """Notes naming the scenarios that were not applicable and a skipped gated pass."""
    notes = [
        f"not applicable: {name} (the system lacks {', '.join(missing)}); "
        "excluded from means and the baseline check"
        for name, missing in not_applicable.items()
    ]
    if gate_skipped:
        notes.append("the system declares no relevance_gate capability: the gated pass was skipped")
    return notes


def _gated_entry(
    suite: Suite, config: RunConfig, gated: PassResult | None, document: ThresholdsDocument | None
) -> GatedEntry | None:
    """The gated baseline the gated pass is checked against, or None (report-only)."""
    if gated is None or document is None or suite.subset or suite.perturbation is not None:
        return None
    return document.gated_entry(config.mode, config.top_k, gated.relevance_gate.min_relevance)


def baseline_check(
    suite: Suite,
    config: RunConfig,
    measurement: PassResult,
    entries: dict[str, ModeEntry] | None,
    identity: tuple[BaselineSystem, SuiteFingerprint],
) -> tuple[list[str], list[Regression], ComparedBaseline | None]:
    """(notes, regressions, compared) of `measurement` against the file's `entries` (None: no
    file): why the baseline check is off, wholly or for the scopes that are not comparable (a
    note; under `require_baseline` also a `baseline` regression), the metric regressions of the
    compared scopes, and the baseline it compared the run with (`ComparedBaseline`, None when
    nothing was compared). `identity` is what the run measured (its system and suite
    fingerprint): an entry recorded for another system or suite is not compared
    (`baseline_mismatch`)."""
    thresholds = config.thresholds
    if thresholds is None:  # no baselines by design: no note, but a required baseline is missing
        return [], missing_baseline(config.require_baseline, "the run was configured without baselines"), None
    entry = find_baseline(entries or {}, config.mode, config.top_k)
    mismatch = None if entry is None else baseline_mismatch(entry, config.mode, thresholds, *identity)
    if suite.perturbation is not None:
        reason = (
            f"the suite is perturbed ({suite.perturbation}): a perturbed run is never compared with the "
            "baselines of the unperturbed suite"
        )
    elif suite.subset and entries is not None:
        reason = "scenarios were selected by name: the baseline check is off, baselines cover the whole suite"
    elif entries is None:
        reason = (
            f"no thresholds file at {thresholds}: the baseline check is off until a baseline is recorded "
            f"(`{RECORD_COMMAND}` over this run's report)"
        )
    elif entry is None:
        reason = no_baseline_reason(config.mode, config.top_k, thresholds, entries)
    elif mismatch is not None:
        reason = mismatch
    else:
        check, found = scope_check(measurement, entry), metric_regressions(measurement, entry)
        where = f"the baseline for {config.mode} at top_k {config.top_k} in {thresholds}"
        if not check.compared:
            reason = f"no scope of {where} {_not_comparable(check)}"
            return [_off(reason)], found + missing_baseline(config.require_baseline, reason), None
        compared = _compared(entry, check, thresholds)
        if not check.not_comparable:
            return [], found, compared
        others = len(check.compared)
        reason = (
            f"{counted(len(check.not_comparable), 'scope')} of {where} {_not_comparable(check)}; its other "
            f"{counted(others, 'scope')} {'was' if others == 1 else 'were'} compared"
        )
        return [_off(reason)], found + missing_baseline(config.require_baseline, reason), compared
    return [_off(reason)], missing_baseline(config.require_baseline, reason), None


def _off(reason: str) -> str:
    """The baseline-check-OFF note of `reason` (`RunResult.baseline_check_off` reads it back)."""
    return f"{BASELINE_CHECK_OFF}: {reason} (assertions still count)"


def _not_comparable(check: ScopeCheck) -> str:
    """Why the scopes of `check.not_comparable` were not compared, naming each with how its
    scenarios differ: "... not comparable, ...: overall (baseline 41 scenarios, this run 33; ...)"."""
    scopes = ", ".join(f"{scope_name(s)} ({why})" for s, why in check.not_comparable.items())
    return (
        "is comparable: the scenarios it averages differ from the baseline's"
        if not check.compared
        else "not comparable, the scenarios they average differ from the baseline's"
    ) + f": {scopes}"


def _compared(entry: ModeEntry, check: ScopeCheck, thresholds: object) -> ComparedBaseline:
    """The scopes of `entry` that `metric_regressions` compared (`check.compared`), with baseline
    and threshold values of every harness metric the entry holds."""
    scopes = {category: _scope(entry, category) for category, _ in check.compared}
    return ComparedBaseline(
        file=str(thresholds),
        recorded_at=entry.recorded_at,
        system=entry.system_name,
        overall=scopes.pop(None, None),
        categories={c: s for c, s in scopes.items() if c is not None},
    )


def _scope(entry: ModeEntry, category: str | None) -> ComparedScope:
    baseline = entry.baseline.overall if category is None else entry.baseline.categories.get(category)
    threshold = entry.thresholds.overall if category is None else entry.thresholds.categories[category]
    levels = {m: threshold.value(m) for m in HARNESS_METRICS}
    return ComparedScope(
        baseline={
            m: v for m in HARNESS_METRICS if baseline is not None and (v := baseline.value(m)) is not None
        },
        threshold={m: v for m, v in levels.items() if v is not None},
    )
