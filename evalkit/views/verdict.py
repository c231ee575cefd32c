"""The verdict of a saved run, stated first: did it pass, what failed, and what ran.

`run_verdict(run)` reads an `EvalRun` and returns a `Verdict`, which shows itself as HTML in a
notebook (a large PASS / FAIL headline, the identity line and every regression as a plain list,
never inside a scroll box) and as plain text everywhere else (`str(verdict)`, the executed
notebook's text/plain output, logs).

Rules:
- FAIL when the run has at least one regression (what makes `evalkit run` exit 1), else PASS.
- Metric gating is OFF when the run was not compared with recorded thresholds: the run carries
  a note from the evaluation saying why (`RunResult.metric_gating_off`), or it was configured
  without a thresholds file (benchmarks). The verdict then says "metric gating OFF (<why>)":
  a PASS then only means the hard assertions held, and it never says "No gating regressions.".
- The identity line names the system, the embedder mode, top_k and the gate of the gated pass
  with its role: "report-only", or "gated on its baseline recorded ..." when a gated baseline
  gated it (its regressions are then listed as `[gated-metric]`/`[gated-present]`); "gated pass
  skipped" without one.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from evalkit.harness.results import GATING_OFF
from evalkit.views.frames import EvalRun

PASS_COLOR = "#0f5132"
FAIL_COLOR = "#842029"


@dataclass(frozen=True, slots=True)
class Verdict:
    """`passed`: no regressions. `gating_off`: why metric gating was off (None = it was on).
    `identity`: "system S · mode M · top_k K · gate G". `regressions`: "[kind] message" lines."""

    passed: bool
    gating_off: str | None
    identity: str
    regressions: tuple[str, ...]

    @property
    def headline(self) -> str:
        """ "PASS", "FAIL — N regression(s)", with "· metric gating OFF (why)" appended when off."""
        status = "PASS" if self.passed else f"FAIL — {len(self.regressions)} regression(s)"
        return status if self.gating_off is None else f"{status} · metric gating OFF ({self.gating_off})"

    @property
    def clean(self) -> str:
        """What a run without regressions says below the headline."""
        if self.gating_off is None:
            return "No gating regressions."
        return "No assertion regressions; metrics were not compared with a baseline."

    def __str__(self) -> str:
        lines = [f"Verdict: {self.headline}", self.identity]
        lines += [f"  - {line}" for line in self.regressions] or [self.clean]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        color = PASS_COLOR if self.passed else FAIL_COLOR
        items = "".join(f"<li>{html.escape(line)}</li>" for line in self.regressions)
        listing = f"<ul>{items}</ul>" if items else f"<p>{html.escape(self.clean)}</p>"
        return (
            f'<div class="evalkit-verdict"><p style="font-size: 1.6em; font-weight: bold; color: {color}; '
            f'margin: 0.2em 0">Verdict: {html.escape(self.headline)}</p>'
            f"<p>{html.escape(self.identity)}</p>{listing}</div>"
        )


def run_verdict(run: EvalRun) -> Verdict:
    """The verdict of `run` (see the module docstring for the rules)."""
    result = run.result
    gate = (
        "gated pass skipped"
        if result.gated is None
        else f"gate min_relevance {result.gated.relevance_gate.min_relevance:g} ({result.gated_pass_role})"
    )
    identity = f"system {result.system} · mode {result.mode} · top_k {result.top_k} · {gate}"
    return Verdict(
        passed=not result.regressions,
        gating_off=_gating_off(run),
        identity=identity,
        regressions=tuple(f"[{r.kind}] {r.message}" for r in result.regressions),
    )


def _gating_off(run: EvalRun) -> str | None:
    note = run.result.metric_gating_off
    if note is not None:
        return note.removeprefix(GATING_OFF).removeprefix(":").strip()
    if run.result.provenance.config.thresholds is None:
        return "the run was configured without a thresholds file"
    return None
