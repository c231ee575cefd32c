"""Baselines, thresholds and regressions (SPEC §3.5).

A thresholds file (the built-in suite's is `evalkit/data/datasets/thresholds.json`) maps a
(mode, top_k) key such as `deterministic@5` to the baseline recorded in that mode at that top_k
and its thresholds (baseline − 0.02, floored at 0, rounded to 4 places), overall and per category.
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
from pathlib import Path

from pydantic import Field, RootModel, ValidationError

from evalkit.errors import ThresholdsError
from evalkit.files import write_atomic
from evalkit.harness.config import MODES
from evalkit.harness.results import Aggregate, PassResult, Regression
from evalkit.metrics import HARNESS_METRICS
from evalkit.validation import FrozenModel as _Model
from evalkit.validation import field_problems

MARGIN = 0.02
"""How far below the baseline a metric may fall before it regresses."""

TOLERANCE = 1e-6
"""A metric regresses when actual + TOLERANCE < threshold (absorbs float noise)."""


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
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ThresholdsError(f"cannot read thresholds file {source}: {exc}") from exc
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
            problem = f"unknown mode {mode!r} (modes: {', '.join(MODES)})"
        elif at and top_k != str(entry.top_k):
            problem = f"the key says top_k {top_k} but its entry was recorded at top_k {entry.top_k}"
        elif new in keyed:
            problem = f"a second baseline for {mode} at top_k {entry.top_k}"
        else:
            keyed[new] = entry
            continue
        raise ThresholdsError(f"thresholds file {source}: key {key!r}: {problem}; " + _FIX)
    return keyed


def _levels(aggregate: Aggregate) -> BaselineLevels:
    return BaselineLevels(
        **{m: round(aggregate.metrics[m], 4) for m in HARNESS_METRICS}, queries=aggregate.queries
    )


def _floor(levels: MetricLevels) -> MetricLevels:
    return MetricLevels(**{m: round(max(0.0, getattr(levels, m) - MARGIN), 4) for m in HARNESS_METRICS})


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
    replacing only that (mode, top_k) entry and keeping every other one; written atomically in the
    keyed form, ordered by mode then top_k. An existing invalid file raises ThresholdsError rather
    than being replaced."""
    entries = dict(load_thresholds(path) or {})
    entries[entry_key(mode, entry.top_k)] = entry
    order = sorted(entries, key=lambda key: (key.partition("@")[0], entries[key].top_k))
    payload = {key: entries[key].model_dump(mode="json") for key in order}
    return write_atomic(path, json.dumps(payload, indent=2) + "\n")


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
    the run lacks (`present`)."""
    found: list[Regression] = []
    levels: list[tuple[str | None, MetricLevels]] = [
        (None, entry.thresholds.overall),
        *entry.thresholds.categories.items(),
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
