"""The thresholds file: its format, the older form it still reads, and its locked atomic writes.

A thresholds file (the built-in suite's is `datasets/thresholds.json`) maps a
(mode, top_k) key such as `deterministic@5` to a `ModeEntry`: the baseline recorded in that mode
at that top_k and its thresholds, overall and per category, all at `PLACES` decimals
(`round_half_away`). Each (mode, top_k) has its own entry and writing one never touches another.
Files written before baselines were per top_k are keyed by the bare mode (`deterministic`); they
are read as `mode@<the entry's top_k>` and written back in the keyed form by the next
`update_thresholds` (the migration is `_keyed`).

Under the reserved key `"gated"` the same file may hold a list of `GatedEntry`s, each the gated
pass's metrics recorded at one (mode, top_k, min_relevance) with a recall tolerance per category.
Writing a gated entry leaves the mode entries byte for byte as they were, and writing a mode
entry leaves the gated entries; a file without gated entries has no `"gated"` key at all.

The metric levels' schema (`MetricLevels`) is derived from the metric registry: one field per
harness metric. The metrics `HarnessMetric.required` marks (SPEC §3.5's four) must be in every
entry; a harness metric registered after an entry was recorded may be absent from it
(`MetricLevels.value` gives None): the entry loads, is written back without it, and that metric
is not compared for it (`harness.regressions`) until a baseline records it.

A missing file reads as None (the caller decides what that means); a file that exists but cannot
be read or validated is a ThresholdsError — never silently nothing.

This module only reads and writes the file. What goes into an entry is `harness.baselines`;
comparing a pass with an entry is `harness.regressions`. Floors: every floor in the file's world
is `floor_below(baseline, allowance)` (baseline − allowance, floored at 0, `PLACES` decimals).
A mode entry's `thresholds` are that floor with the fixed `baselines.MARGIN`, computed when the
baseline is recorded and stored in the file ("recorded thresholds"); a gated entry stores no
floor, only its tolerances, and `GatedEntry.floor` computes its recall floor when it is compared
("live floors": a tolerance edited in the file takes effect at once).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from filelock import FileLock, Timeout
from pydantic import (
    Field,
    RootModel,
    SerializerFunctionWrapHandler,
    ValidationError,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)

from evalkit.errors import OutputError, ThresholdsError, UsageError
from evalkit.files import check_writable, os_reason, read_regular, write_atomic
from evalkit.harness.config import BASELINE_MODES
from evalkit.harness.results import GatedBaselineRef
from evalkit.metrics import HARNESS, HARNESS_METRICS
from evalkit.metrics.registry import BEHAVIOUR_METRICS
from evalkit.systems.resolve import REFERENCE_SPEC
from evalkit.validation import FrozenModel as _Model
from evalkit.validation import did_you_mean, field_problems, shown_value
from evalkit.wording import counted, few_names

LOCK_TIMEOUT = 120.0
"""Seconds `update_thresholds` waits for another process's update of the same file."""

PLACES = 4
"""Decimal places of recorded baselines and thresholds."""


def round_half_away(value: float, places: int = PLACES) -> float:
    """`value` rounded to `places` decimals, ties away from zero (SPEC §5): 0.03125 → 0.0313
    (Python's `round`, ties to even, gives 0.0312), 0.00005 → 0.0001.

    The tie is judged on the decimal the float prints as (its shortest `repr`), which is what a
    reader of thresholds.json sees: 0.00145 → 0.0015. The original service computes
    Math.round(x·10⁴)/10⁴ on the binary value instead, and 0.00145·10⁴ is 14.499999999999998
    there, giving 0.0014; the two agree on every k/n with n < 200, the shape of the harness's
    metrics, and differ only on such binary near-ties.
    """
    quantum = Decimal(1).scaleb(-places)
    return float(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))


def floor_below(baseline: float, allowance: float) -> float:
    """The floor `allowance` below `baseline`: baseline − allowance, floored at 0, rounded to
    `PLACES` decimals (`round_half_away`). The one floor rule of the file: a mode entry's recorded
    thresholds (allowance `baselines.MARGIN`, every harness metric) and a gated entry's live recall
    floors (allowance: its tolerance, `GatedEntry.floor`)."""
    return round_half_away(max(0.0, baseline - allowance))


class _Levels(_Model):
    """The base of `MetricLevels`: a harness metric the entry does not hold (None: recorded
    before the metric was registered) is left out of the JSON, so such an entry is written back
    exactly as it was read."""

    @model_serializer(mode="wrap")
    def _without_unrecorded(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not getattr(self, "behaviour", None):
            data.pop("behaviour", None)
        return {k: v for k, v in data.items() if v is not None or (k not in HARNESS and k != "scenarios")}

    def value(self, metric: str) -> float | None:
        """The level of harness metric `metric`, or None when the entry does not hold it (only a
        metric that is not `HarnessMetric.required` can be missing)."""
        level: float | None = getattr(self, metric)
        return level


def _metric_field(metric: str) -> Any:
    """The schema of one harness metric's level: a float in [0, 1], required when the registry
    says every entry holds it, else optional (None = not recorded, not compared)."""
    if HARNESS[metric].required:
        return (float, Field(ge=0.0, le=1.0))
    return (float | None, Field(default=None, ge=0.0, le=1.0))


if TYPE_CHECKING:

    class MetricLevels(_Levels):
        """(What the type checker sees: the fields come from the registry.)"""

        def __getattr__(self, name: str) -> float: ...

else:
    MetricLevels = create_model(
        "MetricLevels",
        __base__=_Levels,
        __doc__="""One level per harness metric (`HARNESS_METRICS`, in that order), each in [0, 1]:
        the file's schema, derived from the metric registry (a test pins it to the registry).""",
        __module__=__name__,
        **{metric: _metric_field(metric) for metric in HARNESS_METRICS},
    )


class ThresholdLevels(MetricLevels):
    """The harness metrics' levels plus `behaviour`: the behaviour metrics
    (`evalkit.metrics.BEHAVIOUR`) the entry records — only a run of a suite that asks for them
    records any, and only those are compared (a baseline's level, or a threshold: a ceiling for
    the lower-is-better ones, a floor for the others); left out of the JSON when empty, so
    existing files keep their shape. `MetricLevels` itself stays the harness metrics only."""

    behaviour: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]] = Field(default_factory=dict)

    @field_validator("behaviour")
    @classmethod
    def _known_behaviour(cls, levels: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(levels) - set(BEHAVIOUR_METRICS))
        if unknown:
            raise ValueError(
                f"unknown behaviour metric(s) {', '.join(unknown)}; known: {', '.join(BEHAVIOUR_METRICS)}"
            )
        return levels


class BaselineLevels(ThresholdLevels):
    """Recorded metrics plus how many queries they were averaged over and `scenarios`: the names
    of the scenarios whose queries those were (`evalkit.harness.aggregation.scope_scenarios`:
    applicable to the system, expected to pass, not measure-only; in suite order), so that a
    later run is compared over the same ones. None — left out of the JSON — in entries recorded
    before scenario sets, and in gated baselines (`harness.regressions.recorded_scenarios` says
    how such an entry is read)."""

    queries: int = Field(ge=0)
    scenarios: list[str] | None = None


class Baseline(_Model):
    overall: BaselineLevels
    categories: dict[str, BaselineLevels]


class Thresholds(_Model):
    overall: ThresholdLevels
    categories: dict[str, ThresholdLevels]


REFERENCE_SYSTEM = REFERENCE_SPEC
"""The system an entry without `system` was recorded for: entries written before baselines
named their system are the reference store's (named as its spec, `evalkit.systems.resolve`)."""


class BaselineSystem(_Model):
    """The system a baseline was measured on: its `name` (what the console and the verdict call
    it), the `spec` it was selected by (`--system`; None when a Python object was passed) and its
    own `describe()` (None: not recorded, as for the reference store's entries of older files).
    A run is compared with the entry only when its system has the same name
    (`harness.regressions.baseline_mismatch` says why the spec and description are not compared)."""

    name: str = Field(min_length=1)
    spec: str | None = None
    describe: dict[str, Any] | None = None


class SuiteFingerprint(_Model):
    """The suite a baseline was measured on: `digest` (`Suite.digest`, a sha256 over every file
    read) and `files` (relative path → sha256 of that file's bytes, so a changed suite can name
    the files that differ; empty for suites built from other inputs)."""

    digest: str = Field(min_length=1)
    files: dict[str, str] = Field(default_factory=dict)
    source: str | None = None
    """Where the suite was read from, as the run recorded it (`Provenance.datasets`: the folder as
    given, or "built-in"); None — left out of the JSON — when not recorded (older entries,
    benchmark imports). Names the suite in messages and tells an edited suite (same source) from
    another one."""

    @model_serializer(mode="wrap")
    def _without_source(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("source") is None:
            data.pop("source", None)
        return data

    @property
    def label(self) -> str:
        """The suite as messages name it: "suite datasets/packs/cjk" or, without a source,
        "a suite of 16 files (distractors.yaml, scenarios/a.yaml, scenarios/b.yaml and 13 more)"."""
        if self.source is not None:
            return f"suite {self.source}"
        names = list(self.files)
        if not names:
            return f"a suite with digest {self.digest[:12]}"
        return f"a suite of {counted(len(names), 'file')} ({few_names(names)})"


class ModeEntry(_Model):
    """What one mode recorded: when, at which top_k, the baseline and the derived thresholds,
    and (since baselines belong to a system and a suite) the `system` and `suite` it was measured
    on. An entry without `system` is the reference store's (`REFERENCE_SYSTEM`, see
    `system_name`); one without `suite` was recorded before suites were fingerprinted and is
    compared whatever the suite holds. Both are left out of the JSON when absent, so an older
    entry is written back exactly as it was read."""

    recorded_at: str
    top_k: int = Field(ge=1)
    system: BaselineSystem | None = None
    suite: SuiteFingerprint | None = None
    baseline: Baseline
    thresholds: Thresholds
    note: str | None = None
    """Why this baseline may not hold on a rerun (recorded from repeated runs that disagreed,
    naming the unstable queries); None — left out of the JSON — for an ordinary recording."""

    @model_serializer(mode="wrap")
    def _without_unrecorded(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None or k not in ("system", "suite", "note")}

    @property
    def system_name(self) -> str:
        """The name of the system the entry was recorded for (`REFERENCE_SYSTEM` when unnamed)."""
        return REFERENCE_SYSTEM if self.system is None else self.system.name


class ThresholdsFile(RootModel[dict[str, ModeEntry]]):
    """The baselines of the file: `mode@top_k` key (or, in the older form, a bare mode) → entry
    (every key but `GATED_KEY`)."""


GATED_KEY = "gated"
"""The thresholds file's key that holds the gated baselines (a list); every other key is a mode."""

DEFAULT_GATED_TOLERANCE = 0.05
"""Recall a scope of the gated pass may lose against its gated baseline before it regresses.
Wider than the ungated MARGIN (0.02) because the gate is a cliff: a similarity moving across the
floor removes a whole row from the top-k, and the built-in categories hold 1–8 queries, so one
row moves a category's recall by 0.03–0.5. Override it when recording (`evalkit baseline record
--gated --tolerance`) or per category (`--category-tolerance`, or `tolerances.categories` in
the file)."""

Tolerance = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class GatedTolerances(_Model):
    """Recall tolerances of a gated baseline: `default` for the overall recall and for every
    category not listed in `categories` (category → tolerance)."""

    default: Tolerance = DEFAULT_GATED_TOLERANCE
    categories: dict[str, Tolerance] = Field(default_factory=dict)

    def of(self, category: str | None) -> float:
        """The tolerance of `category` (None = overall)."""
        return self.default if category is None else self.categories.get(category, self.default)


class GatedEntry(_Model):
    """The gated pass recorded at one (mode, top_k, min_relevance): when, its metrics overall and
    per category (4 places), and the recall tolerances its floors are computed with."""

    mode: str
    top_k: int = Field(ge=1)
    min_relevance: float = Field(gt=0.0, le=1.0, allow_inf_nan=False)
    recorded_at: str
    tolerances: GatedTolerances = Field(default_factory=GatedTolerances)
    baseline: Baseline

    @model_validator(mode="after")
    def _tolerances_name_recorded_categories(self) -> GatedEntry:
        unknown = sorted(set(self.tolerances.categories) - set(self.baseline.categories))
        if unknown:
            raise ValueError(
                f"tolerances.categories names {', '.join(map(repr, unknown))}, which the gated baseline "
                f"does not hold (its categories: {', '.join(self.baseline.categories) or 'none'}); "
                "fix the name or remove it"
            )
        return self

    @property
    def key(self) -> tuple[str, int, float]:
        """(mode, top_k, min_relevance rounded to 4 places): what identifies the entry."""
        return (self.mode, self.top_k, round_half_away(self.min_relevance))

    def floor(self, category: str | None) -> float:
        """The live recall floor of `category` (None = overall): `floor_below` its baseline recall
        by its tolerance, computed now from what the file holds. KeyError for a category without a
        baseline."""
        levels = self.baseline.overall if category is None else self.baseline.categories[category]
        return floor_below(levels.recall, self.tolerances.of(category))

    def ref(self) -> GatedBaselineRef:
        """What a run checked against this entry records about it."""
        return GatedBaselineRef(
            mode=self.mode, top_k=self.top_k, min_relevance=self.min_relevance, recorded_at=self.recorded_at
        )


class GatedEntries(RootModel[list[GatedEntry]]):
    """The file's `"gated"` list."""


@dataclass(frozen=True)
class ThresholdsDocument:
    """A whole thresholds file: the mode entries and the gated baselines."""

    modes: dict[str, ModeEntry]
    """The baselines under their `mode@top_k` keys (`entry_key`)."""
    gated: tuple[GatedEntry, ...] = ()

    def gated_entry(self, mode: str, top_k: int, min_relevance: float) -> GatedEntry | None:
        """The gated baseline recorded at (mode, top_k, min_relevance), or None."""
        key = (mode, top_k, round_half_away(min_relevance))
        return next((e for e in self.gated if e.key == key), None)

    def payload(self) -> dict[str, Any]:
        """The JSON object to write: the baselines ordered by mode then top_k, then `"gated"`
        (sorted by key) when there are gated entries."""
        order = sorted(self.modes, key=lambda key: (key.partition("@")[0], self.modes[key].top_k))
        data: dict[str, Any] = {key: self.modes[key].model_dump(mode="json") for key in order}
        if self.gated:
            data[GATED_KEY] = [e.model_dump(mode="json") for e in sorted(self.gated, key=lambda e: e.key)]
        return data


RECORD_COMMAND = "evalkit baseline record"
"""The command that records a baseline from a saved report: every message advising to record
one names it from here."""

_FIX = (
    "fix it, or delete it and record each baseline again: `evalkit run [--embedder real] [--top-k N]`, "
    f"then `{RECORD_COMMAND}`"
)


def entry_key(mode: str, top_k: int) -> str:
    """The file's key of the baseline recorded in `mode` at `top_k`: `deterministic@5`."""
    return f"{mode}@{top_k}"


def find_baseline(entries: Mapping[str, ModeEntry], mode: str, top_k: int) -> ModeEntry | None:
    """The entry recorded in `mode` at `top_k`, or None (another top_k never stands in)."""
    return entries.get(entry_key(mode, top_k))


def recorded(entries: Mapping[str, ModeEntry]) -> str:
    """What a file holds, for messages: "deterministic at top_k 5, real at top_k 5" or "nothing"."""
    return ", ".join(key.replace("@", " at top_k ") for key in entries) or "nothing"


def load_thresholds(path: str | Path) -> dict[str, ModeEntry] | None:
    """The baselines of `path` under their `mode@top_k` keys, or None when the file does not
    exist (see `read_thresholds`)."""
    document = read_thresholds(path)
    return None if document is None else document.modes


def read_thresholds(path: str | Path) -> ThresholdsDocument | None:
    """The baselines (under their `mode@top_k` keys) and gated baselines of `path`, or None when
    the file does not exist.

    Raises ThresholdsError (naming the file and the fix) for unreadable JSON; else one
    ThresholdsError listing every problem at once (`problems`, each naming its field or key): a
    schema mismatch, a key whose mode is unknown or whose top_k differs from its entry's, two
    entries for the same (mode, top_k), two gated entries with the same (mode, top_k,
    min_relevance).
    """
    source = Path(path)
    try:
        text = read_regular(source).decode("utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ThresholdsError(
            f"cannot read thresholds file {source}: {exc.strerror or exc}; point --thresholds at the "
            f"JSON file (or delete it and record each baseline again: {_FIX.removeprefix('fix it, or ')})"
        ) from None
    except UnicodeDecodeError as exc:
        raise ThresholdsError(
            f"thresholds file {source} is not UTF-8 ({exc.reason} at byte {exc.start}); " + _FIX
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ThresholdsError(
            f"thresholds file {source} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            + _FIX
        ) from exc
    gated_data = data.pop(GATED_KEY, []) if isinstance(data, dict) else []
    problems: list[str] = []
    modes: dict[str, ModeEntry] = {}
    gated: list[GatedEntry] = []
    try:
        modes = ThresholdsFile.model_validate(data).root
    except ValidationError as exc:
        problems += field_problems(exc, ThresholdsFile)
    try:
        gated = GatedEntries.model_validate(gated_data).root
    except ValidationError as exc:
        problems += [_under_gated_key(p) for p in field_problems(exc, GatedEntries)]
    keyed, key_problems = _keyed(modes)
    problems += key_problems
    first: dict[tuple[str, int, float], int] = {}
    for index, entry in enumerate(gated):
        if entry.key in first:
            mode, top_k, gate = entry.key
            problems.append(
                f"{GATED_KEY}[{index}] and {GATED_KEY}[{first[entry.key]}] are both the gated baseline of "
                f"mode {mode!r}, top_k {top_k}, min_relevance {gate:g}; keep one (or record it again with "
                f"`{RECORD_COMMAND} --gated`)"
            )
        first.setdefault(entry.key, index)
    if problems:
        raise ThresholdsError(
            f"thresholds file {source} does not match the schema ({counted(len(problems), 'problem')}); "
            + _FIX,
            problems,
        )
    return ThresholdsDocument(keyed, tuple(gated))


def _under_gated_key(problem: str) -> str:
    """A problem of the `"gated"` list, its path rooted at the key: `gated[0].top_k: ...`."""
    if problem.startswith("<top level>"):
        return GATED_KEY + problem.removeprefix("<top level>")
    return GATED_KEY + problem if problem.startswith("[") else f"{GATED_KEY}.{problem}"


def _keyed(raw: Mapping[str, ModeEntry]) -> tuple[dict[str, ModeEntry], list[str]]:
    """`raw` under `mode@top_k` keys (a bare-mode key of the older form takes its entry's top_k),
    and the problem of each key that cannot be (`key '<key>': <problem>`)."""
    keyed: dict[str, ModeEntry] = {}
    problems: list[str] = []
    for key, entry in raw.items():
        mode, at, top_k = key.partition("@")
        new = entry_key(mode, entry.top_k)
        if mode not in BASELINE_MODES:
            problem = (
                f"unknown mode {shown_value(mode)}{did_you_mean(mode, BASELINE_MODES)} "
                f"(modes: {', '.join(BASELINE_MODES)})"
            )
        elif at and top_k != str(entry.top_k):
            said = top_k if len(top_k) <= 12 else top_k[:9] + "..."  # cut like shown_value
            problem = f"the key says top_k {said} but its entry was recorded at top_k {entry.top_k}"
        elif new in keyed:
            problem = f"a second baseline for {mode} at top_k {entry.top_k}"
        else:
            keyed[new] = entry
            continue
        problems.append(f"key {shown_value(key)}: {problem}")
    return keyed, problems


def update_thresholds(path: str | Path, mode: str, entry: ModeEntry) -> Path:
    """Write `entry` as the baseline of `mode` at `entry.top_k` in `path` (created if missing),
    replacing only that (mode, top_k) entry and keeping every other one and the gated baselines;
    written in the keyed form, ordered by mode then top_k (see `_update_file` for locking,
    atomicity and errors). UsageError for the mode name `GATED_KEY`, which the file reserves."""
    if mode == GATED_KEY:
        raise UsageError(
            f"{GATED_KEY!r} cannot be a mode name: the thresholds file keeps gated baselines under it"
        )
    key = entry_key(mode, entry.top_k)
    return _update_file(path, lambda doc: replace(doc, modes={**doc.modes, key: entry}))


def update_gated_baseline(path: str | Path, entry: GatedEntry) -> Path:
    """Upsert the gated baseline `entry` in `path` (created if missing): it replaces the entry of
    the same (mode, top_k, min_relevance) and leaves the mode entries and other gated entries
    untouched (see `_update_file` for locking, atomicity and errors)."""

    def upsert(document: ThresholdsDocument) -> ThresholdsDocument:
        others = tuple(e for e in document.gated if e.key != entry.key)
        return replace(document, gated=(*others, entry))

    return _update_file(path, upsert)


def _update_file(path: str | Path, change: Callable[[ThresholdsDocument], ThresholdsDocument]) -> Path:
    """Apply `change` to the file's document and write it back.

    Updates are serialised across processes by the lock file `.<name>.lock` beside `path`
    (filelock; removed while still held, so nothing is left behind, and git-ignored for a run
    killed while holding it): the file is re-read under the lock, so two runs recording
    different (mode, top_k) entries at once both keep theirs. Written atomically; the file keeps
    its permissions, and temp files left by a killed earlier write are removed. An existing
    invalid file raises ThresholdsError rather than being replaced; a path that cannot be written
    (read-only file, unwritable folder, full disk) raises OutputError, leaving the file as it was.
    """
    target = Path(path)
    check_writable(target)
    lock_path = target.with_name(f".{target.name}.lock")
    try:
        with FileLock(lock_path, timeout=LOCK_TIMEOUT):
            try:
                document = change(read_thresholds(target) or ThresholdsDocument({}))
                return write_atomic(
                    target, json.dumps(document.payload(), indent=2) + "\n", remove_stale=True
                )
            finally:
                lock_path.unlink(missing_ok=True)  # while held: a waiter on this inode retries
    except Timeout:
        raise OutputError(
            f"cannot update {target}: another process held its lock {lock_path} for {LOCK_TIMEOUT:.0f} s; "
            "wait for that run to finish (or delete the lock file if no evalkit run is active)"
        ) from None
    except OSError as exc:
        raise OutputError(f"cannot lock {target} with {lock_path}: {os_reason(exc)}") from None
