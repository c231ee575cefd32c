"""How report tables look: colours, cell styles and number formats, shared by tables and charts.

Red marks what fails CI or costs a right answer (status `fail`, relevant rows lost from the top-k,
negative Δ); amber marks what is expected or informative (`xfail`, `xpass`, rows dropped from the
over-fetched pool, relevant or not, superseded/contradicted standing);
green marks a check that did its job. Style functions are public so that tests pin the colours.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype
from pandas.io.formats.style import Styler

from evalkit.metrics import HARNESS, HARNESS_METRICS

METRIC_LABELS: dict[str, str] = {name: harness.label for name, harness in HARNESS.items()}
"""Display names of the harness metrics (column headers, chart titles): their registered
`HarnessMetric.label`, in `HARNESS_METRICS` order."""

FAIL_CSS = "background-color: #f8d7da; color: #842029; font-weight: bold"
"""Cells that fail CI: status fail, relevant rows dropped by the gate, a failed query."""
WARN_CSS = "background-color: #fff3cd; color: #664d03"
"""Cells worth a look that do not fail CI: xfail/xpass, irrelevant drops, non-current standing."""
RELEVANT_CSS = "background-color: #d1e7dd"
"""Retrieved rows the query labels relevant (drill-down)."""
LOSS_CSS = "color: #b02a37; font-weight: bold"
"""A metric that fell under the gate (negative Δ)."""
GAIN_CSS = "color: #146c43; font-weight: bold"
"""A metric that rose under the gate (positive Δ)."""
GOOD_CSS = "background-color: #d1e7dd; color: #0f5132"
"""A check that did its job (a mutation caught, the control quiet)."""
QUIET_CSS = "color: #8a8a8a"
"""Zero deltas and low-confidence flags."""

UNGATED_COLOR = "#4c72b0"
GATED_COLOR = "#dd8452"
RELEVANT_COLOR = "#2f9e44"
DROPPED_RELEVANT_COLOR = "#c92a2a"
"""Red: a relevant row the gate took out of the top-k (and the gate's floor line)."""
POOL_RELEVANT_COLOR = "#f08c00"
"""Amber: relevant rows the gate dropped from the over-fetched pool (mostly beyond the top-k)."""
DROPPED_IRRELEVANT_COLOR = "#adb5bd"
METRIC_COLORS = ("#4c72b0", "#55a868", "#8172b3", "#937860", "#64b5cd", "#ccb974")
"""The harness metrics' colours in `HARNESS_METRICS` order (recall, precision, MRR, hit rate,
then any further harness metric; cycled past the sixth): no red, which means failure
everywhere else. `metric_colors` pairs them with the metrics."""
SERIES_COLORS = (
    "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#e377c2", "#ff7f0e",
)  # fmt: skip
"""Lines of one chart that stand for categories or run series (matplotlib's tab10 without red),
cycled when there are more."""


NA_TEXT = "n/a"
"""What a table shows for a value that does not exist (a scenario not applicable to the system):
never "nan"."""


def metric_colors() -> list[tuple[str, str]]:
    """(harness metric, its colour) for every harness metric, in `HARNESS_METRICS` order."""
    return [(metric, METRIC_COLORS[i % len(METRIC_COLORS)]) for i, metric in enumerate(HARNESS_METRICS)]


def status_css(value: object) -> str:
    """CSS for a status or result cell: red for fail, amber for xfail/xpass, grey for
    not_applicable, none otherwise."""
    if value == "fail":
        return FAIL_CSS
    if value in ("xfail", "xpass"):
        return WARN_CSS
    if value == "not_applicable":
        return QUIET_CSS
    return ""


def delta_css(value: object) -> str:
    """CSS for a Δ (gated − ungated) cell: red when the gate lowered the metric, green when it
    raised it, grey when unchanged."""
    number = float(value)  # type: ignore[arg-type]
    if number != number:  # NaN: no value on one side (a scenario not applicable to the system)
        return QUIET_CSS
    if number < -1e-9:
        return LOSS_CSS
    if number > 1e-9:
        return GAIN_CSS
    return QUIET_CSS


def format_delta(value: object) -> str:
    """A Δ as text: signed to three places ("+0.133", "-0.067"), exactly "0" when unchanged,
    NA_TEXT when a side has no value."""
    number = float(value)  # type: ignore[arg-type]
    if number != number:
        return NA_TEXT
    return "0" if abs(number) < 1e-9 else f"{number:+.3f}"


def dropped_css(value: object) -> str:
    """CSS for a count of dropped rows: amber when any were dropped."""
    return WARN_CSS if float(value) > 0 else ""  # type: ignore[arg-type]


def relevant_lost_css(value: object) -> str:
    """CSS for a count of relevant rows lost from the top-k: red when any were (the gate cost
    the user a right answer)."""
    return FAIL_CSS if float(value) > 0 else ""  # type: ignore[arg-type]


class ReportTable(Styler):
    """A Styler whose plain-text form is its caption and the frame as text, so an executed
    notebook's text/plain output (diffs, text viewers) shows the table instead of
    `<pandas.io.formats.style.Styler at 0x…>`. Styler's chained methods return the same object,
    so a ReportTable stays one through `.format(...)`, `.map(...)` and the like."""

    def __repr__(self) -> str:
        # `caption` and `data` are Styler attributes that pandas-stubs does not declare
        caption, frame = self.caption, self.data  # type: ignore[attr-defined]
        return f"{caption or ''}\n{frame.to_string()}".lstrip("\n")


def styled(frame: pd.DataFrame, caption: str) -> Styler:
    """The frame's ReportTable with the caption (left, bold, one line), body cells kept on one line
    (column headers may wrap, so wide tables stay within the page) and text columns left-aligned."""
    styler = (
        ReportTable(frame)
        .set_caption(caption)
        .set_table_styles(
            [
                {"selector": "caption", "props": "text-align: left; font-weight: bold; white-space: nowrap"},
                {"selector": "td, th.row_heading", "props": "white-space: nowrap"},
                {"selector": "td, th", "props": "padding: 0.3em 0.35em"},
            ]
        )
    )
    text: list[Hashable] = [
        c for c in frame.columns if not (is_numeric_dtype(frame[c]) or is_bool_dtype(frame[c]))
    ]
    return styler.set_properties(subset=text, **{"text-align": "left"})


def style_side_by_side(table: pd.DataFrame, caption: str) -> Styler:
    def where(*second: str) -> list[Hashable]:
        return [c for c in table.columns if c[1] in second]

    metrics = where("ungated", "gated")
    styler = styled(table, caption).format(precision=3, subset=metrics, na_rep=NA_TEXT)
    styler = styler.format(format_delta, subset=where("Δ")).map(delta_css, subset=where("Δ"))
    styler = styler.map(status_css, subset=where("status")).map(dropped_css, subset=where("dropped rows"))
    styler = styler.map(dropped_css, subset=where("relevant dropped"))
    styler = styler.map(relevant_lost_css, subset=where("relevant lost from top-k"))
    return styler.set_table_styles(
        [
            {
                "selector": "th.col_heading.level0",
                "props": "text-align: center; border-bottom: 1px solid #999",
            },
            {"selector": "", "props": "font-size: 12px"},
            # 20+ columns: narrow padding keeps the last ("relevant lost from top-k") visible at 1366 px
            {"selector": "td, th", "props": "padding: 0.3em 0.22em"},
        ],
        overwrite=False,
    )


def regression_count_css(value: object) -> str:
    return FAIL_CSS if str(value) != "0" else ""


def nonempty_fail_css(value: object) -> str:
    return FAIL_CSS if value else ""


def is_true(value: object) -> bool:
    """True for a boolean True (Python or numpy); False for False, None and anything else."""
    return isinstance(value, bool | np.bool_) and bool(value)


def true_fail_css(value: object) -> str:
    return FAIL_CSS if is_true(value) else ""


def true_quiet_css(value: object) -> str:
    return QUIET_CSS if is_true(value) else ""


def standing_css(value: object) -> str:
    return WARN_CSS if value not in ("current", None) else ""


def relevant_row_css(row: pd.Series) -> list[str]:
    return [RELEVANT_CSS if row["relevant"] else ""] * len(row)


def yes_blank(value: object) -> str:
    return "yes" if is_true(value) else ""


def dropped_label(value: object) -> str:
    return "dropped" if is_true(value) else ""
