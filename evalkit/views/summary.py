"""A saved run as a short Markdown summary, for CI job summaries (`$GITHUB_STEP_SUMMARY`), pull
request comments or chat: `evalkit summary REPORT` prints it.

Sections, in order:
- the verdict (`run_verdict`: PASS or FAIL with the regression count, baseline check OFF and why)
  and the identity line (system, mode, top_k, gate), then, when the mutation suite ran with the
  run, "Suite strength: caught N of M injected bugs." and what catches each escaped mutation;
- the regressions, one bullet each ("No gating regressions." or its gating-off variant when none);
- the biggest drops against the baseline: the `drops` (default 5) largest falls of an overall or
  per-category metric of the ungated pass below the recorded baseline of the run's mode and
  top_k, largest first (ties: overall first, then category, then metric order); a line saying
  none fell, or why there is nothing to compare with (no baseline given);
- suite strength, only when the run carries detection results (mutation testing ran with it):
  how many injected search bugs the gate caught, whether the no-op control stayed quiet, and one
  row per mutation.
Text from the run (messages, names) is escaped so it cannot break the Markdown table or list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from evalkit.harness.results import DetectionPower
from evalkit.harness.thresholds_file import round_half_away
from evalkit.views.frames import EvalRun
from evalkit.views.verdict import run_verdict

METRICS = ("recall", "precision", "mrr", "hit_rate")
"""The metrics compared with the baseline, in display order."""


@dataclass(frozen=True, slots=True)
class Drop:
    """One metric below its baseline: `scope` "overall" or "category", `name` the category (or
    "overall"), baseline and current value, and `delta` = current − baseline (negative)."""

    scope: str
    name: str
    metric: str
    baseline: float
    value: float

    @property
    def delta(self) -> float:
        return self.value - self.baseline


def biggest_drops(run: EvalRun, baseline: Mapping[str, Mapping[str, float]], limit: int = 5) -> list[Drop]:
    """The `limit` largest falls of the run's ungated overall and per-category metrics below
    `baseline` ("overall" and each category name → metric → value), largest first; metrics or
    categories absent from either side are left out, and a value that, rounded as baselines are
    recorded (`PLACES` decimals, half away from zero), is at or above its baseline is no drop."""
    result = run.result
    current = {"overall": result.overall.metrics} | {
        name: aggregate.metrics for name, aggregate in result.categories.items()
    }
    drops = [
        Drop(
            "overall" if name == "overall" else "category",
            name,
            metric,
            levels[metric],
            round_half_away(now[metric]),
        )
        for name, levels in baseline.items()
        if (now := current.get(name)) is not None
        for metric in METRICS
        if metric in levels and metric in now and round_half_away(now[metric]) < levels[metric]
    ]
    order = {"overall": 0, "category": 1}
    drops.sort(key=lambda d: (d.delta, order[d.scope], METRICS.index(d.metric)))
    return drops[:limit]


def summary_markdown(
    run: EvalRun,
    baseline: Mapping[str, Mapping[str, float]] | None,
    *,
    baseline_label: str = "",
    no_baseline: str = "no baseline to compare with",
    drops: int = 5,
) -> str:
    """The Markdown summary of `run` (see the module docstring). `baseline` maps "overall" and
    each category to its baseline metrics (None: `no_baseline` says why there is none);
    `baseline_label` names it in the drops heading (e.g. "deterministic@5, recorded ...")."""
    verdict = run_verdict(run)
    lines = [f"## evalkit: {_text(verdict.headline)}", "", _text(verdict.identity), ""]
    if verdict.strength is not None:
        lines += [_text(verdict.strength[0].upper() + verdict.strength[1:]) + ".", ""]
        if verdict.escaped:
            lines += ["To catch what escaped:", "", *(f"- {_text(line)}" for line in verdict.escaped), ""]
    if verdict.regressions:
        lines += [f"### Regressions ({len(verdict.regressions)})", ""]
        lines += [f"- {_text(line)}" for line in verdict.regressions]
    else:
        lines.append(_text(verdict.clean))
    label = f" ({_text(baseline_label)})" if baseline_label else ""
    lines += ["", f"### Biggest drops against the baseline{label}", ""]
    if baseline is None:
        lines.append(f"Nothing to compare: {_text(no_baseline)}.")
    else:
        lines += _drops_table(biggest_drops(run, baseline, drops))
    if run.result.detection is not None:
        lines += ["", "### Suite strength", "", *_strength(run.result.detection)]
    return "\n".join(lines) + "\n"


def _drops_table(drops: list[Drop]) -> list[str]:
    if not drops:
        return ["No overall or category metric is below its baseline."]
    rows = [
        f"| {_cell(d.name if d.scope == 'overall' else f'category {d.name}')} | {d.metric} | "
        f"{d.baseline:.4f} | {d.value:.4f} | {d.delta:+.4f} |"
        for d in drops
    ]
    return ["| scope | metric | baseline | now | Δ |", "|---|---|---:|---:|---:|", *rows]


def _strength(detection: DetectionPower) -> list[str]:
    """How many injected search bugs the gate caught, the control's outcome, one row each."""
    alarm = bool(detection.false_alarms)
    control = "the no-op control raised an alarm" if alarm else "the no-op control stayed quiet"
    rows = [
        f"| {_cell(o.mutation)}{' (control)' if o.control else ''} | {'yes' if o.caught else 'no'} | "
        f"{'yes' if o.expected else '**no**'} | {_cell(o.regressions[0].message) if o.regressions else ''} |"
        for o in detection.outcomes
    ]
    return [
        f"{detection.caught} of {len(detection.injected)} injected search bugs caught; {control}.",
        "",
        "| mutation | caught | as expected | caught by |",
        "|---|---|---|---|",
        *rows,
    ]


def _text(text: str) -> str:
    """Run text safe in Markdown prose: characters that start markup are escaped (`_` is left: a
    GitHub-flavoured Markdown underscore inside a word, as in `top_k`, is no emphasis)."""
    return "".join(f"\\{c}" if c in "\\`*[]<>|" else c for c in text)


def _cell(text: str) -> str:
    """Run text safe in a Markdown table cell: one line, escaped."""
    return _text(" ".join(text.split()))
