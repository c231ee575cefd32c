"""Baselines, thresholds and regressions (SPEC §3.5).

A thresholds file (the built-in suite's is `evalkit/data/datasets/thresholds.json`) maps a
(mode, top_k) key such as `deterministic@5` to the baseline recorded in that mode at that top_k
and its thresholds (baseline − 0.02, floored at 0), overall and per category, all rounded to 4
places half away from zero (`round_half_away`).
Metrics at different cut-offs are not comparable, so each (mode, top_k) has its own entry and
recording one never touches another. Files written before baselines were per top_k are keyed by
the bare mode (`deterministic`); they are read as `mode@<the entry's top_k>` and written back in
the keyed form by the next `update_thresholds`.

A missing file means "no metric gating" (the caller notes it); a file that exists but cannot be
read or validated is a ThresholdsError — never silently un-gated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import Field, RootModel, ValidationError

from evalkit.errors import OutputError, ThresholdsError
from evalkit.files import check_writable, os_reason, read_regular, write_atomic
from evalkit.harness.config import MODES
from evalkit.harness.results import Aggregate, PassResult, Regression
from evalkit.metrics import HARNESS_METRICS
from evalkit.validation import FrozenModel as _Model
from evalkit.validation import field_problems, shown_value

MARGIN = 0.02
"""How far below the baseline a metric may fall before it regresses."""

TOLERANCE = 1e-6
"""A metric regresses when actual + TOLERANCE < threshold (absorbs float noise)."""

LOCK_TIMEOUT = 120.0
"""Seconds `update_thresholds` waits for another process's update of the same file."""


class MetricLevels(_Model):
    """One value per harness metric, each in [0, 1]. The fields spell out HARNESS_METRICS because
    they are the file's schema; a test pins them to it."""

    recall: float = Field(ge=0.0, le=1.0)
    precision: float = Field(ge=0.0, le=1.0)
    mrr: float = Field(ge=0.0, le=1.0)
    hit_rate: float = Field(ge=0.0, le=1.0)


class BaselineLevels(MetricLevels):
    """Recorded metrics plus how many queries they were averaged over."""

    queries: int = Field(ge=0)


class Baseline(_Model):
    overall: BaselineLevels
    categories: dict[str, BaselineLevels]


class Thresholds(_Model):
    overall: MetricLevels
    categories: dict[str, MetricLevels]


class ModeEntry(_Model):
    """What one mode recorded: when, at which top_k, the baseline and the derived thresholds."""

    recorded_at: str
    top_k: int = Field(ge=1)
    baseline: Baseline
    thresholds: Thresholds


class ThresholdsFile(RootModel[dict[str, ModeEntry]]):
    """The whole file: `mode@top_k` key (or, in the older form, a bare mode) → entry."""


_FIX = (
    "fix it, or delete it and record each baseline again with "
    "`evalkit run [--real] [--top-k N] --update-baseline`"
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


def no_baseline_reason(mode: str, top_k: int, path: Path, entries: Mapping[str, ModeEntry]) -> str:
    """Why metric gating is off for a run without an entry, and how to record exactly that entry:
    the same command plus --update-baseline (the same suite, mode, top_k and thresholds file; it
    adds the entry and keeps every other one). Spelling out a command instead could name another
    suite or file than the run used, and so replace a baseline the user did not mean."""
    return (
        f"no baseline for {mode} at top_k {top_k} in {path} (it holds {recorded(entries)}); to record "
        "one, re-run the same command with --update-baseline (it adds this entry and keeps the others)"
    )


def load_thresholds(path: str | Path) -> dict[str, ModeEntry] | None:
    """The entries of `path` under their `mode@top_k` keys, or None when the file does not exist.

    Raises ThresholdsError (naming the file, the failing field or key and the fix) for unreadable
    JSON, a schema mismatch, a key whose mode is unknown or whose top_k differs from its entry's,
    or two entries for the same (mode, top_k).
    """
    source = Path(path)
    try:
        text = read_regular(source).decode("utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ThresholdsError(
            f"cannot read thresholds file {source}: {exc.strerror or exc}; point --thresholds at the "
            "JSON file (or delete it and record each baseline again with "
            "`evalkit run [--real] [--top-k N] --update-baseline`)"
        ) from None
    except UnicodeDecodeError as exc:
        raise ThresholdsError(
            f"thresholds file {source} is not UTF-8 ({exc.reason} at byte {exc.start}); " + _FIX
        ) from None
    try:
        raw = ThresholdsFile.model_validate(json.loads(text)).root
    except json.JSONDecodeError as exc:
        raise ThresholdsError(
            f"thresholds file {source} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            + _FIX
        ) from exc
    except ValidationError as exc:
        problems = "; ".join(field_problems(exc, ThresholdsFile))
        raise ThresholdsError(
            f"thresholds file {source} does not match the schema ({problems}); " + _FIX
        ) from exc
    return _keyed(source, raw)


def _keyed(source: Path, raw: Mapping[str, ModeEntry]) -> dict[str, ModeEntry]:
    """`raw` under `mode@top_k` keys (a bare-mode key of the older form takes its entry's top_k)."""
    keyed: dict[str, ModeEntry] = {}
    for key, entry in raw.items():
        mode, at, top_k = key.partition("@")
        new = entry_key(mode, entry.top_k)
        if mode not in MODES:
            problem = f"unknown mode {shown_value(mode)} (modes: {', '.join(MODES)})"
        elif at and top_k != str(entry.top_k):
            said = top_k if len(top_k) <= 12 else top_k[:9] + "..."  # cut like shown_value
            problem = f"the key says top_k {said} but its entry was recorded at top_k {entry.top_k}"
        elif new in keyed:
            problem = f"a second baseline for {mode} at top_k {entry.top_k}"
        else:
            keyed[new] = entry
            continue
        raise ThresholdsError(f"thresholds file {source}: key {shown_value(key)}: {problem}; " + _FIX)
    return keyed


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


def _levels(aggregate: Aggregate) -> BaselineLevels:
    return BaselineLevels(
        **{m: round_half_away(aggregate.metrics[m]) for m in HARNESS_METRICS}, queries=aggregate.queries
    )


def _floor(levels: MetricLevels) -> MetricLevels:
    return MetricLevels(
        **{m: round_half_away(max(0.0, getattr(levels, m) - MARGIN)) for m in HARNESS_METRICS}
    )


def baseline_entry(result: PassResult, top_k: int, recorded_at: datetime | None = None) -> ModeEntry:
    """A new entry from an ungated pass: baseline rounded to 4 places, thresholds baseline − MARGIN."""
    overall = _levels(result.overall)
    categories = {name: _levels(agg) for name, agg in result.categories.items()}
    return ModeEntry(
        recorded_at=(recorded_at or datetime.now(UTC)).replace(microsecond=0).isoformat(),
        top_k=top_k,
        baseline=Baseline(overall=overall, categories=categories),
        thresholds=Thresholds(
            overall=_floor(overall), categories={c: _floor(v) for c, v in categories.items()}
        ),
    )


def update_thresholds(path: str | Path, mode: str, entry: ModeEntry) -> Path:
    """Write `entry` as the baseline of `mode` at `entry.top_k` in `path` (created if missing),
    replacing only that (mode, top_k) entry and keeping every other one; written in the keyed
    form, ordered by mode then top_k.

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
                entries = dict(load_thresholds(target) or {})
                entries[entry_key(mode, entry.top_k)] = entry
                order = sorted(entries, key=lambda key: (key.partition("@")[0], entries[key].top_k))
                payload = {key: entries[key].model_dump(mode="json") for key in order}
                return write_atomic(target, json.dumps(payload, indent=2) + "\n", remove_stale=True)
            finally:
                lock_path.unlink(missing_ok=True)  # while held: a waiter on this inode retries
    except Timeout:
        raise OutputError(
            f"cannot update {target}: another process held its lock {lock_path} for {LOCK_TIMEOUT:.0f} s; "
            "wait for that run to finish (or delete the lock file if no evalkit run is active)"
        ) from None
    except OSError as exc:
        raise OutputError(f"cannot lock {target} with {lock_path}: {os_reason(exc)}") from None


def assertion_regressions(result: PassResult) -> list[Regression]:
    """Every check error of every failing scenario (measure-only included); xfail never gates."""
    return [
        Regression(
            kind="assertion",
            scenario=s.name,
            category=s.category,
            message=f"{s.name} query {q.index + 1} ({q.query!r}): {error}",
        )
        for s in result.scenarios
        if s.status == "fail"
        for q in s.queries
        for error in q.check_errors
    ]


def metric_regressions(result: PassResult, entry: ModeEntry) -> list[Regression]:
    """Metrics below their thresholds, overall and per category, and categories of the entry that
    the run lacks (`present`). When scenarios were not applicable to the system, the overall
    means and those scenarios' categories are not compared (they average other queries than the
    baseline did), so a category missing only because of not-applicable scenarios is no
    `present` regression."""
    found: list[Regression] = []
    skipped = {s.category for s in result.scenarios if s.status == "not_applicable"}
    levels: list[tuple[str | None, MetricLevels]] = [
        *([(None, entry.thresholds.overall)] if not skipped else []),
        *((c, floor) for c, floor in entry.thresholds.categories.items() if c not in skipped),
    ]
    for category, floor in levels:
        actual = result.overall if category is None else result.categories.get(category)
        if actual is None:
            found.append(
                Regression(
                    kind="present",
                    category=category,
                    message=f"category {category!r} has a baseline but no gating scenario ran in it",
                )
            )
        else:
            found.extend(_below(category, floor, actual.metrics))
    return found


def _below(category: str | None, floor: MetricLevels, actual: Mapping[str, float]) -> list[Regression]:
    where = "overall" if category is None else f"category {category!r}"
    return [
        Regression(
            kind="metric",
            category=category,
            metric=m,
            actual=actual[m],
            threshold=getattr(floor, m),
            message=f"{where}: {m} {actual[m]:.4f} is below its threshold {getattr(floor, m):.4f}",
        )
        for m in HARNESS_METRICS
        if actual[m] + TOLERANCE < getattr(floor, m)
    ]
