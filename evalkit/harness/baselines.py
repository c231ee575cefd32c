"""Recording baselines: what a run writes into its thresholds file, and where it may write it.

A mode baseline (`baseline_entry`, recorded by `record_baseline`) is the ungated pass's metrics,
overall and per category, rounded to `PLACES` decimals half away from zero (SPEC §5), with the
recorded thresholds `floor_below(baseline, MARGIN)` of every harness metric. A gated baseline
(`gated_baseline_entry`, recorded by `record_gated_baseline`) is the gated pass's metrics at the
gate it ran at, with recall tolerances instead of stored floors (its floors are computed when
compared: `GatedEntry.floor`). The file format and its locked writes are
`harness.thresholds_file`; comparing a pass with an entry is `harness.regressions`.

Policy decided here (`evalkit baseline record [--gated]` and the Python API both call it):
- A gated baseline's tolerances are the ones given, else those of the entry it replaces (for
  categories the pass still has), else `DEFAULT_GATED_TOLERANCE` (`gated_tolerances`).
- A category tolerance must name a category of the gated pass (UsageError otherwise).
- A baseline is never written inside the installed evalkit package (`check_recordable`): an
  upgrade would silently replace it.
- Only a whole-suite, unperturbed run is recorded (`check_recording`): a baseline averages whole
  categories, so a run over some scenarios (`--scenario`) would record other means than a full
  run compares, and a perturbed suite's memory is not the one later runs measure.
- A baseline over 0 queries is refused (`check_counted`): it would compare nothing.
- Each scope records the scenarios it averaged (`scope_scenarios`), so a later run is compared
  over the same ones (`harness.regressions.scope_check`).
- A mode baseline records what it was measured on (`measured_on`): the system (its name, the
  spec it was selected by, its `describe()`) and the suite's fingerprint (digest and per-file
  hashes), so that a run of another system or on a changed suite is not compared with it.
- A baseline from repeated runs (`--repeat N`) is recorded only when the runs agree, or, when
  the caller accepts it, with a note naming the queries that differed (`record_baseline`).
- An entry recorded for another system or on another suite is never replaced unless asked
  (`check_replaceable`, `replace=True`); the refusal names the entry's system and suite.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from evalkit.errors import UsageError
from evalkit.files import check_writable
from evalkit.harness.aggregation import feeds_means_when_applicable, scope_scenarios
from evalkit.harness.provenance import Provenance
from evalkit.harness.results import Aggregate, PassResult, RunResult
from evalkit.harness.thresholds_file import (
    DEFAULT_GATED_TOLERANCE,
    Baseline,
    BaselineLevels,
    BaselineSystem,
    GatedEntry,
    GatedTolerances,
    ModeEntry,
    SuiteFingerprint,
    ThresholdLevels,
    Thresholds,
    entry_key,
    floor_below,
    read_thresholds,
    round_half_away,
    update_gated_baseline,
    update_thresholds,
)
from evalkit.metrics import HARNESS_METRICS
from evalkit.metrics.registry import BEHAVIOUR
from evalkit.packaged import inside_installed_package
from evalkit.wording import counted, few_names

MARGIN = 0.02
"""How far below the baseline a metric may fall before it regresses (the recorded thresholds)."""


def _levels(aggregate: Aggregate, scenarios: list[str] | None = None) -> BaselineLevels:
    """One scope's recorded levels: `aggregate`'s metrics rounded, its query count and the
    `scenarios` it averaged (None: not recorded, as in a gated baseline)."""
    return BaselineLevels(
        **{m: round_half_away(aggregate.metrics[m]) for m in HARNESS_METRICS},
        queries=aggregate.queries,
        behaviour={m: round_half_away(v) for m, v in aggregate.behaviour.items()},
        scenarios=scenarios,
    )


def _thresholds(levels: BaselineLevels) -> ThresholdLevels:
    """The thresholds `MARGIN` from `levels`: floors of the harness metrics and of the behaviour
    metrics where higher is better, ceilings (capped at 1) where lower is better."""
    behaviour = {
        m: round_half_away(min(1.0, v + MARGIN)) if BEHAVIOUR[m].lower_is_better else floor_below(v, MARGIN)
        for m, v in levels.behaviour.items()
    }
    return ThresholdLevels(
        **{m: floor_below(getattr(levels, m), MARGIN) for m in HARNESS_METRICS}, behaviour=behaviour
    )


def _recorded_at(when: datetime | None) -> str:
    return (when or datetime.now(UTC)).replace(microsecond=0).isoformat()


def measured_on(system: str, provenance: Provenance) -> tuple[BaselineSystem, SuiteFingerprint]:
    """What a run of the system named `system` with `provenance` was measured on, as a baseline
    records it and a run is compared with it: the system (name, the spec of
    `provenance.config.system`, its `describe()` as JSON values) and the suite's fingerprint."""
    identity = BaselineSystem(name=system, spec=provenance.config.system, describe=provenance.system)
    return (
        BaselineSystem.model_validate(identity.model_dump(mode="json")),
        SuiteFingerprint(
            digest=provenance.dataset_digest, files=provenance.dataset_files, source=provenance.datasets
        ),
    )


def baseline_entry(
    result: PassResult,
    top_k: int,
    recorded_at: datetime | None = None,
    system: BaselineSystem | None = None,
    suite: SuiteFingerprint | None = None,
) -> ModeEntry:
    """A new entry from an ungated pass: baseline rounded to 4 places, each scope with the
    scenarios it averaged (`scope_scenarios`), thresholds baseline − MARGIN, recorded for
    `system` on `suite` (None: not recorded, read as the reference store's and any suite)."""
    fed = scope_scenarios(result.scenarios)
    overall = _levels(result.overall, fed[None])
    categories = {name: _levels(agg, fed.get(name, [])) for name, agg in result.categories.items()}
    return ModeEntry(
        recorded_at=_recorded_at(recorded_at),
        top_k=top_k,
        system=system,
        suite=suite,
        baseline=Baseline(overall=overall, categories=categories),
        thresholds=Thresholds(
            overall=_thresholds(overall), categories={c: _thresholds(v) for c, v in categories.items()}
        ),
    )


def gated_baseline_entry(
    gated: PassResult,
    mode: str,
    top_k: int,
    tolerances: GatedTolerances | None = None,
    recorded_at: datetime | None = None,
) -> GatedEntry:
    """A gated baseline from a gated pass, keyed by (mode, top_k, the gate the pass ran at),
    metrics rounded to 4 places. UsageError when the pass ran without a gate (min_relevance 0)."""
    gate = gated.relevance_gate.min_relevance
    if gate <= 0.0:
        raise UsageError(
            "the gated pass ran without a gate (min_relevance 0), so there is nothing to record as a gated "
            "baseline; drop --gated-pass 0 (the service default is 0.4) or pick a gate above 0"
        )
    return GatedEntry(
        mode=mode,
        top_k=top_k,
        min_relevance=gate,
        recorded_at=_recorded_at(recorded_at),
        tolerances=tolerances or GatedTolerances(),
        baseline=Baseline(
            overall=_levels(gated.overall),
            categories={name: _levels(agg) for name, agg in gated.categories.items()},
        ),
    )


def gated_tolerances(
    gated: PassResult,
    old: GatedEntry | None,
    tolerance: float | None = None,
    category_tolerances: Mapping[str, float] | None = None,
) -> GatedTolerances:
    """The tolerances of a gated baseline recorded from `gated`, replacing `old` (None: a new
    entry): `tolerance` else old's default else `DEFAULT_GATED_TOLERANCE`; per category, old's
    tolerances of categories the pass still has, overridden by `category_tolerances`.
    UsageError naming any category of `category_tolerances` that the pass does not have."""
    categories = list(gated.categories)
    chosen = dict(category_tolerances or {})
    unknown = [name for name in chosen if name not in categories]
    if unknown:
        raise UsageError(
            f"--category-tolerance names {', '.join(map(repr, unknown))}, not a category of this run's gated "
            f"pass; its categories: {', '.join(categories)}"
        )
    kept = {} if old is None else {c: t for c, t in old.tolerances.categories.items() if c in categories}
    default = tolerance if tolerance is not None else (old.tolerances.default if old else None)
    return GatedTolerances(
        default=DEFAULT_GATED_TOLERANCE if default is None else default, categories={**kept, **chosen}
    )


def check_recordable(thresholds: Path) -> None:
    """Refuse, before anything runs, a thresholds file a baseline cannot be recorded in: one that
    ships inside the installed evalkit package (UsageError: a pip upgrade would silently replace
    it) or cannot be written (OutputError, see `check_writable`)."""
    if inside_installed_package(thresholds):
        raise UsageError(
            f"recording a baseline would write {thresholds}, the built-in suite's baselines inside the "
            "installed evalkit package (an upgrade replaces them); record your own instead: "
            "`evalkit init DIR` creates a project with its own thresholds.json (or pass --thresholds PATH)"
        )
    check_writable(thresholds)


def record_baseline(
    thresholds: str | Path, result: RunResult, *, accept_unstable: bool = False, replace: bool = False
) -> Path:
    """Record `result`'s measurement (ungated) pass as the baseline of its mode and top_k in `thresholds`
    (created if missing; every other entry kept), for the system and suite it was measured on
    (`measured_on`), and return the file's path. Errors as `check_recordable`, `check_counted`,
    `check_recording` and `update_thresholds`. See `replaced_system` to say whose entry a
    recording replaces.

    The run must be of the whole, unperturbed suite (`check_recording`). An entry of another
    system or suite is replaced only with `replace` (`check_replaceable`). A repeated run
    (`result.stability`, `--repeat N`) is recorded only when its runs agreed: otherwise
    UsageError naming the unstable queries, and nothing is written — unless `accept_unstable`,
    when the first run's metrics are recorded with a `note` naming them."""
    check_recordable(Path(thresholds))
    check_recording(result)
    check_counted(result)
    note = unstable_note(result, accept_unstable)
    system, suite = measured_on(result.system, result.provenance)
    check_replaceable(thresholds, result.mode, result.top_k, (system, suite), replace)
    entry = baseline_entry(result.measurement, result.top_k, system=system, suite=suite)
    if note is not None:
        entry = entry.model_copy(update={"note": note})
    return update_thresholds(thresholds, result.mode, entry)


def check_recording(result: RunResult) -> None:
    """Refuse (UsageError) a run that cannot be a baseline: one over some scenarios
    (`--scenario`: a baseline averages whole categories of the whole suite) or of a perturbed
    suite (`--perturb`: its memory is not the one later runs measure), as its provenance says."""
    provenance = result.provenance
    if provenance.scenarios:
        raise UsageError(
            f"no baseline recorded: the run selected scenarios ({few_names(list(provenance.scenarios))}), "
            "and a baseline averages the whole suite; run it without --scenario, then record"
        )
    if provenance.perturbation:
        raise UsageError(
            "no baseline recorded: the run's suite was perturbed (--perturb), and a perturbed run is never "
            "a baseline; run it without --perturb, then record"
        )


def check_replaceable(
    thresholds: str | Path,
    mode: str,
    top_k: int,
    identity: tuple[BaselineSystem, SuiteFingerprint],
    replace: bool,
) -> None:
    """Refuse (UsageError), unless `replace`, to record the (mode, top_k) baseline of a run
    measured on `identity` (its system and suite) over an entry of `thresholds` that belongs to
    another system or was recorded on another suite (a different digest): the message names the
    entry's system and suite. An entry of the same system and suite (or one recorded before
    suites were fingerprinted, of the same system) is replaced without asking: that is what
    recording again means."""
    document = read_thresholds(thresholds)
    old = None if document is None else document.modes.get(entry_key(mode, top_k))
    system, suite = identity
    if old is None or replace:
        return
    other_system = old.system_name != system.name
    other_suite = old.suite is not None and old.suite.digest != suite.digest
    if not (other_system or other_suite):
        return
    theirs = f"system {old.system_name}" + (f" on {old.suite.label}" if old.suite is not None else "")
    raise UsageError(
        f"no baseline recorded: {thresholds} already holds the baseline for {mode} at top_k {top_k} of "
        f"{theirs}, and this run is system {system.name} on {suite.label}; record it into a thresholds "
        "file of its own (--thresholds PATH), or replace that entry on purpose with --replace"
    )


def averages_nothing(result: RunResult) -> bool:
    """True when the measurement pass counted 0 queries and measured no behaviour metric: a
    baseline of it would compare nothing (`check_counted`)."""
    overall = result.measurement.overall
    return overall.queries == 0 and not overall.behaviour


def check_counted(result: RunResult) -> None:
    """Refuse (UsageError) a baseline over 0 queries: the measurement pass counted none (no
    scenario expected to pass and not measure-only ran: every one was not applicable to the
    system, or the suite has none) and measured no behaviour metric either, so every mean is 0
    and a later run could only be compared with nothing. (A suite of measure-only scenarios that
    asks for behaviour metrics, such as the nonsense-control pack's abstention, has a baseline:
    its behaviour means.)"""
    if not averages_nothing(result):
        return
    feeding = [s.name for s in result.scenarios if feeds_means_when_applicable(s)]
    why = (
        f"the scenarios expected to pass ({counted(len(feeding), 'scenario')}) were all not applicable "
        f"to system {result.system} (see the run's notes)"
        if feeding
        else "the suite has no scenario expected to pass that is not measure-only"
    )
    raise UsageError(
        f"no baseline recorded: the run counted 0 queries, because {why}; a baseline over 0 queries "
        "compares nothing. Give the suite scenarios this system can run, or evaluate a system "
        "that has the capabilities they need"
    )


def unstable_note(result: RunResult, accept_unstable: bool) -> str | None:
    """None when `result` was not repeated or its runs agreed; when they disagreed, UsageError
    (nothing may be recorded) unless `accept_unstable`, then the note the entry records."""
    stability = result.stability
    if stability is None or stability.agree:
        return None
    if not accept_unstable:
        raise UsageError(
            f"no baseline recorded: the {stability.runs} runs disagree ({stability.summary()}); "
            "make the system's ranking deterministic (break ties by id), or record the first run's "
            "metrics anyway with --accept-unstable (the entry then notes the unstable queries)"
        )
    return f"recorded from the first of {stability.runs} runs, which disagree: {stability.summary()}"


def replaced_system(thresholds: str | Path, result: RunResult) -> str | None:
    """The name of the system whose baseline `record_baseline(thresholds, result)` would replace
    when that is another system than `result`'s (None: no entry for its mode and top_k yet, or
    the entry is this system's own). Read before recording, so the CLI can say it out loud."""
    document = read_thresholds(thresholds)
    old = None if document is None else document.modes.get(entry_key(result.mode, result.top_k))
    return None if old is None or old.system_name == result.system else old.system_name


def record_gated_baseline(
    thresholds: str | Path,
    result: RunResult,
    tolerance: float | None = None,
    category_tolerances: Mapping[str, float] | None = None,
    *,
    accept_unstable: bool = False,
) -> tuple[Path, GatedEntry]:
    """Upsert the gated baseline of `result`'s mode, top_k and gate in `thresholds` (created if
    missing; the mode entries and other gated entries kept), tolerances as `gated_tolerances`
    says, and return (the file's path, the entry written). UsageError when the run has no gated
    pass or it ran without a gate, or (as `record_baseline`) repeated runs that disagree without
    `accept_unstable`; other errors as `check_recordable` and `update_gated_baseline`."""
    check_recordable(Path(thresholds))
    check_recording(result)
    if result.gated is None:
        raise UsageError("the run has no gated pass to record")
    unstable_note(result, accept_unstable)  # a gated entry keeps no note: the CLI prints it
    document = read_thresholds(thresholds)
    gate = result.gated.relevance_gate.min_relevance
    old = None if document is None else document.gated_entry(result.mode, result.top_k, gate)
    tolerances = gated_tolerances(result.gated, old, tolerance, category_tolerances)
    entry = gated_baseline_entry(result.gated, result.mode, result.top_k, tolerances)
    return update_gated_baseline(thresholds, entry), entry
