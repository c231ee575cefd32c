"""The verdict of a saved run, stated first: did it pass, what failed, and what ran.

`run_verdict(run)` reads an `EvalRun` and returns a `Verdict`, which shows itself as HTML in a
notebook (a large PASS / FAIL headline, the identity line and every regression as a plain list,
never inside a scroll box) and as plain text everywhere else (`str(verdict)`, the executed
notebook's text/plain output, logs).

Rules (the verdict is the run's own, `RunResult.outcome`; see `evalkit.harness.verdict`):
- FAIL when the run has at least one regression (what makes `evalkit run` exit 1) — or, in a
  report written before that was a regression, when recall is 0 on every labelled query.
- NOT GATED when nothing failed but the metrics were not compared with a baseline of this system
  on this suite: the run carries a note from the evaluation saying why
  (`RunResult.baseline_check_off`), or it was configured without a thresholds file (benchmarks,
  `--thresholds none`). The headline then says "NOT GATED · baseline check OFF (<why>)" — never
  PASS, and never "No gating regressions.".
- PASS only when the metrics were compared and nothing regressed.
- Degenerate retrieval (a query with relevant ids that retrieved none, a scenario whose queries
  all got one ranking, recall 0 everywhere) is listed below the regressions, whatever the value.
- The suite strength, when the mutation suite ran with the run (`evalkit run --mutants`): "suite
  strength: caught N of M injected bugs" below the identity line, and after the listing, for
  each escaped mutation, what the suite needs to catch it (`RunResult.strength`: the verdict's,
  or computed from the saved detection for a report whose stored verdict predates it).
- The identity line names the system, the embedder mode, top_k and the gate of the gated pass
  with its role: "report-only", or "checked against its baseline recorded ..." when a gated baseline
  gated it (its regressions are then listed as `[gated-metric]`/`[gated-present]`); "gated pass
  skipped" without one.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from evalkit.harness.results import baseline_check_reason
from evalkit.harness.verdict import VerdictValue
from evalkit.views.frames import EvalRun

PASS_COLOR = "#0f5132"
FAIL_COLOR = "#842029"
NOT_GATED_COLOR = "#664d03"


@dataclass(frozen=True, slots=True)
class Verdict:
    """`value`: PASS, FAIL or NOT GATED. `passed`: no regressions. `baseline_check_off`: why the metrics
    were not compared with a baseline (None = they were). `identity`: "system S · mode M · top_k
    K · gate G". `regressions`: "[kind] message" lines. `degenerate`: "[kind] message" lines of
    the degenerate retrieval found. `reasons`: the verdict's reasons (see `RunVerdict`).
    `strength`: "suite strength: caught N of M injected bugs" (None: no mutation suite ran with
    the run); `escaped`: "<mutation> escaped: <what catches it>" lines."""

    passed: bool
    baseline_check_off: str | None
    identity: str
    regressions: tuple[str, ...]
    value: VerdictValue = "PASS"
    degenerate: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    strength: str | None = None
    escaped: tuple[str, ...] = ()

    @property
    def headline(self) -> str:
        """ "PASS", "FAIL — N regression(s)" or "NOT GATED", with "· baseline check OFF (why)"
        appended when the metrics were not compared."""
        if self.value == "FAIL":
            status = f"FAIL — {len(self.regressions)} regression(s)" if self.regressions else "FAIL"
        else:
            status = self.value
        off = self.baseline_check_off
        return status if off is None else f"{status} · baseline check OFF ({off})"

    @property
    def clean(self) -> str:
        """What a run without regressions says below the headline."""
        if self.value == "FAIL":
            return "; ".join(self.reasons)
        if self.baseline_check_off is None:
            return "No gating regressions."
        return "No assertion regressions; metrics were not compared with a baseline."

    def __str__(self) -> str:
        lines = [f"Verdict: {self.headline}", self.identity]
        lines += [self.strength] if self.strength is not None else []
        lines += [f"  - {line}" for line in self.regressions] or [self.clean]
        if self.degenerate:
            lines += ["Degenerate retrieval:", *(f"  - {line}" for line in self.degenerate)]
        if self.escaped:
            lines += ["Escaped mutations (what the suite needs to catch each):"]
            lines += [f"  - {line}" for line in self.escaped]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        color = {"PASS": PASS_COLOR, "FAIL": FAIL_COLOR}.get(self.value, NOT_GATED_COLOR)
        items = "".join(f"<li>{html.escape(line)}</li>" for line in self.regressions)
        listing = f"<ul>{items}</ul>" if items else f"<p>{html.escape(self.clean)}</p>"
        if self.degenerate:
            found = "".join(f"<li>{html.escape(line)}</li>" for line in self.degenerate)
            listing += f"<p><b>Degenerate retrieval</b></p><ul>{found}</ul>"
        if self.escaped:
            found = "".join(f"<li>{html.escape(line)}</li>" for line in self.escaped)
            listing += f"<p><b>Escaped mutations</b> (what the suite needs to catch each)</p><ul>{found}</ul>"
        strength = ""
        if self.strength is not None:
            tone = NOT_GATED_COLOR if self.escaped else PASS_COLOR
            strength = f'<p class="evalkit-strength" style="color: {tone}">{html.escape(self.strength)}</p>'
        return (
            f'<div class="evalkit-verdict"><p style="font-size: 1.6em; font-weight: bold; color: {color}; '
            f'margin: 0.2em 0">Verdict: {html.escape(self.headline)}</p>'
            f"<p>{html.escape(self.identity)}</p>{strength}{listing}</div>"
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
    outcome = result.outcome
    return Verdict(
        passed=not result.regressions,
        baseline_check_off=_baseline_check_off(run),
        identity=identity,
        regressions=tuple(f"[{r.kind}] {r.message}" for r in result.regressions),
        value=outcome.value,
        degenerate=tuple(f"[{d.kind}] {d.message}" for d in outcome.degenerate),
        reasons=tuple(outcome.reasons),
        strength=None if result.strength is None else result.strength.line,
        escaped=() if result.strength is None else tuple(result.strength.hints()),
    )


def _baseline_check_off(run: EvalRun) -> str | None:
    note = run.result.baseline_check_off
    if note is not None:
        return baseline_check_reason(note)
    if run.result.provenance.config.thresholds is None:
        return "the run was configured without a thresholds file"
    return None
