"""Baselines, thresholds and regressions (SPEC §3.5).

`datasets/thresholds.json` maps a mode (`deterministic`, `real`) to its recorded baseline and
thresholds (baseline − 0.02, floored at 0, rounded to 4 places), overall and per category.
A missing file means "no metric gating" (the caller warns); a file that exists but cannot be
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
    """The whole file: mode name → entry."""


def load_thresholds(path: str | Path) -> dict[str, ModeEntry] | None:
    """The entries of `path`, or None when the file does not exist.

    Raises ThresholdsError (naming the file, the failing field and the fix) for unreadable JSON
    or a schema mismatch.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ThresholdsError(f"cannot read thresholds file {source}: {exc}") from exc
    try:
        return ThresholdsFile.model_validate(json.loads(text)).root
    except json.JSONDecodeError as exc:
        raise ThresholdsError(
            f"thresholds file {source} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix it or regenerate it with `evalkit run --update-baseline`"
        ) from exc
    except ValidationError as exc:
        problems = "; ".join(field_problems(exc, ThresholdsFile))
        raise ThresholdsError(
            f"thresholds file {source} does not match the schema ({problems}); "
            "fix it or regenerate it with `evalkit run --update-baseline`"
        ) from exc


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
    """Upsert `entry` for `mode` in `path` (created if missing), leaving other modes untouched;
    written atomically. An existing invalid file raises ThresholdsError rather than being replaced."""
    entries = dict(load_thresholds(path) or {})
    entries[mode] = entry
    payload = {name: e.model_dump(mode="json") for name, e in sorted(entries.items())}
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
