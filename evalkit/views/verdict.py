"""The verdict of a saved run, stated first: did it pass, what failed, and what ran.

`run_verdict(run)` reads an `EvalRun` and returns a `Verdict`, which shows itself as HTML in a
notebook (a large PASS / FAIL headline, the identity line and every regression as a plain list,
never inside a scroll box) and as plain text everywhere else (`str(verdict)`, the executed
notebook's text/plain output, logs).

Rules (the verdict is the run's own, `RunResult.outcome`; see `evalkit.harness.verdict`):
- FAIL when the run has at least one regression (what makes `evalkit run` exit 1).
- NOT COMPARED when nothing failed but the metrics were not compared with a baseline of this system
  on this suite: the run carries a note from the evaluation saying why
  (`RunResult.baseline_check_off`), or it was configured without a thresholds file (benchmarks,
  `--thresholds none`). The headline then says "NOT COMPARED · baseline check OFF (<why>)" — never
  PASS, and never "No gating regressions.".
- PASS only when the metrics were compared and nothing regressed.
- Degenerate retrieval (a query with relevant ids that retrieved none, a scenario whose queries
  all got one ranking, recall 0 everywhere) is listed below the regressions, whatever the value.
- The suite strength, when the mutation suite ran with the run (`evalkit run --mutants`): "suite
  strength: caught N of M injected bugs" below the identity line, and after the listing, for
  each escaped mutation, what the suite needs to catch it (`RunResult.strength`).
- The identity line names the system, the embedder mode, top_k and the gate of the gated pass
  with its role: "report-only", or "checked against its baseline recorded ..." when a gated baseline
  gated it (its regressions are then listed as `[gated-metric]`/`[gated-present]`); "gated pass
  skipped" without one.
- The baseline: which entry the metrics were compared with (file, system, date) and, per
  compared scope (overall first, then each category) and harness metric, the run's value, the
  recorded baseline value, Δ = run − baseline and the margin = run − threshold (negative = a
  regression). Read from the report (`Provenance.baseline`); a report written before evalkit
  recorded it says so instead of reading a thresholds file that may have moved on. The file is
  shown relative to the working directory when it lies below it, absolute otherwise
  (`evalkit.files.shown_path`; the report keeps it as recorded): a report rendered in a CI
  checkout says `datasets/thresholds.json`, not the runner's home directory. For `evalkit
  report` the working directory is the one the command was typed in, not the notebook's.
- The command that reproduces the run (`reproduce_command`; a `--thresholds` file shown the
  same way, so the command works where it was typed), prefixed with `PYTHONPATH=.` when the
  system is a module of the working directory, which `evalkit run` imports only so.
- `page_title`: the verdict and the system, what the HTML report's <title> says.
"""

from __future__ import annotations

import html
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from evalkit.files import WORKDIR_ENV, shown_path
from evalkit.harness.config import DEFAULT_DATASETS, DEFAULT_SYSTEM, DEFAULT_THRESHOLDS
from evalkit.harness.provenance import ComparedBaseline, ComparedScope
from evalkit.harness.request import RunRequest
from evalkit.harness.results import Aggregate, RunResult, baseline_check_reason
from evalkit.harness.verdict import VerdictValue
from evalkit.packaged import BUILTIN_SUITE
from evalkit.views.frames import EvalRun, missing_gated_pass
from evalkit.wording import counted

PASS_COLOR = "#0f5132"
FAIL_COLOR = "#842029"
NOT_COMPARED_COLOR = "#664d03"

PAGE_TITLE_KEY = "evalkit_page_title"
"""The display-metadata key (of the verdict's text/html output) holding the HTML report's page
title; `evalkit.notebooks.render_html`'s caller reads it (`page_title`)."""

MARGIN_COLUMNS: tuple[str, ...] = ("scope", "metric", "value", "baseline", "delta", "threshold", "margin")
"""One row per compared scope × harness metric of `Verdict.margins`: `delta` = value − baseline,
`margin` = value − threshold (negative: below the threshold, a regression)."""


@dataclass(frozen=True, slots=True)
class Margin:
    """One compared scope ("overall" or a category) and metric: the run's value, the recorded
    baseline (None when the entry holds no baseline value for it) and the threshold."""

    scope: str
    metric: str
    value: float
    baseline: float | None
    threshold: float

    @property
    def delta(self) -> float | None:
        """value − baseline (None without a baseline value)."""
        return None if self.baseline is None else self.value - self.baseline

    @property
    def margin(self) -> float:
        """value − threshold: how far the run is above the level that would be a regression."""
        return self.value - self.threshold


@dataclass(frozen=True, slots=True)
class Verdict:
    """`value`: PASS, FAIL or NOT COMPARED. `passed`: no regressions. `baseline_check_off`: why the metrics
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
    baseline: str | None = None
    margins: tuple[Margin, ...] = ()
    command: str | None = None
    system: str = ""
    papermill: str | None = None
    reproduce_in_html: bool = True
    """Whether the HTML shows the "Reproduce this run" block (`reproduce_html`); the report shows
    it with the run summary instead, so that its first screen is the verdict and the losses."""

    @property
    def page_title(self) -> str:
        """What the HTML report's <title> says: "PASS · system S" (the headline without its
        reasons, so a browser tab stays short)."""
        status = self.headline.split(" · ")[0]
        return f"{status} · system {self.system}" if self.system else status

    @property
    def headline(self) -> str:
        """ "PASS", "FAIL — N regressions" (1 regression) or "NOT COMPARED", with "· baseline check OFF (why)"
        appended when the metrics were not compared."""
        if self.value == "FAIL":
            status = f"FAIL — {counted(len(self.regressions), 'regression')}" if self.regressions else "FAIL"
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
        if self.baseline is not None:
            lines.append(self.baseline)
            lines += [
                f"  {m.scope} {m.metric}: {m.value:.4f} (baseline {_number(m.baseline)}, "
                f"Δ {_signed(m.delta)}; threshold {m.threshold:.4f}, margin {_signed(m.margin)})"
                for m in self.margins
            ]
        if self.command is not None:
            lines.append(f"Reproduce: {self.command}")
        if self.papermill is not None:
            lines.append(f"Reproduce with papermill: {self.papermill}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        color = {"PASS": PASS_COLOR, "FAIL": FAIL_COLOR}.get(self.value, NOT_COMPARED_COLOR)
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
            tone = NOT_COMPARED_COLOR if self.escaped else PASS_COLOR
            strength = f'<p class="evalkit-strength" style="color: {tone}">{html.escape(self.strength)}</p>'
        listing += self._baseline_html()
        if self.reproduce_in_html:
            listing += self.reproduce_html()
        status = self.headline.split(" · baseline check OFF (")[0]
        off = (
            f"<p><b>Baseline check OFF:</b> {html.escape(_report_advice(self.baseline_check_off))}</p>"
            if self.baseline_check_off is not None
            else ""
        )
        return (
            f'<div class="evalkit-verdict"><p style="font-size: 1.6em; font-weight: bold; color: {color}; '
            f'margin: 0.2em 0">Verdict: {html.escape(status)}</p>'
            f"{off}<p>{html.escape(self.identity)}</p>{strength}{listing}</div>"
        )

    def reproduce_html(self) -> str:
        """ "Reproduce this run" and the `evalkit run` and papermill lines ("" without them)."""
        if self.command is None:
            return ""
        shown = "\n".join(line for line in (self.command, self.papermill) if line is not None)
        return (
            "<p><b>Reproduce this run</b></p>"
            '<pre style="white-space: pre-wrap; overflow-wrap: anywhere">'
            f"{html.escape(shown)}</pre>"
        )

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
        """HTML and text, with the page title as display metadata (`evalkit.notebooks.render_html`
        makes it the HTML report's <title>)."""
        return (
            {"text/html": self._repr_html_(), "text/plain": str(self)},
            {"text/html": {PAGE_TITLE_KEY: self.page_title}},
        )

    def _baseline_html(self) -> str:
        """The baseline compared with: one line when every compared value equals its baseline
        (to 3 places) — the margin, shown once, when it is the same everywhere — else the table
        of the scopes where some metric moved, and one line naming the scopes that did not."""
        if self.baseline is None:
            return ""
        head = f"<p><b>{html.escape(self.baseline)}</b></p>"
        moved = {m.scope for m in self.margins if _signed(m.delta, 3) not in ("0", "—")}
        still = list(dict.fromkeys(m.scope for m in self.margins if m.scope not in moved))
        if not moved:
            return head + f"<p>{html.escape(_unchanged_line(self.margins))}</p>"
        shown = [m for m in self.margins if m.scope in moved]
        rest = (
            f"<p>{html.escape(counted(len(still), 'other scope'))} ({html.escape(', '.join(still))}): "
            "every value equal to its baseline.</p>"
            if still
            else ""
        )
        return head + self._margins_table(shown) + rest

    def _margins_table(self, shown: tuple[Margin, ...] | list[Margin]) -> str:
        scopes = list(dict.fromkeys(m.scope for m in shown))
        metrics = list(dict.fromkeys(m.metric for m in shown))
        by_key = {(m.scope, m.metric): m for m in shown}
        head = "".join(f'<th colspan="3" style="text-align: center">{html.escape(m)}</th>' for m in metrics)
        sub = "<th>value</th><th>Δ base</th><th>margin</th>" * len(metrics)
        rows = []
        for scope in scopes:
            cells = []
            for metric in metrics:
                m = by_key.get((scope, metric))
                if m is None:
                    cells.append('<td colspan="3">not compared</td>')
                    continue
                style = f' style="color: {FAIL_COLOR}; font-weight: bold"' if m.margin < -1e-6 else ""
                cells.append(
                    f"<td>{m.value:.3f}</td><td>{html.escape(_signed(m.delta, 3))}</td>"
                    f'<td{style} title="threshold {m.threshold:.4f}">{html.escape(_signed(m.margin, 3))}</td>'
                )
            rows.append(f'<tr><th style="text-align: left">{html.escape(scope)}</th>{"".join(cells)}</tr>')
        table = (
            '<table class="evalkit-margins" style="font-size: 12px"><thead><tr><th rowspan="2">scope</th>'
            f"{head}</tr><tr>{sub}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
        note = (
            "<p>Δ base = this run − the recorded baseline; margin = this run − the threshold "
            "(how much the metric may still drop before it is a regression; red = below it).</p>"
        )
        return f'<div style="overflow-x: auto">{table}</div>{note}'


def _unchanged_line(compared: tuple[Margin, ...]) -> str:
    """ "Every compared value (4 metrics × 9 scopes) equals its baseline (Δ 0); each may fall
    0.020 before it is a regression ..." — the margin once when it is the same everywhere, else its
    range."""
    scopes = len({m.scope for m in compared})
    metrics = len({m.metric for m in compared})
    spans = sorted({f"{m.margin:.3f}" for m in compared}, key=float)
    room = f"each may fall {spans[0]}" if len(spans) == 1 else f"each may fall {spans[0]} to {spans[-1]}"
    return (
        f"Every compared value ({counted(metrics, 'metric')} × {counted(scopes, 'scope')}) equals its "
        f"baseline (Δ 0); {room} before it is a regression (margin = this run − the threshold)."
    )


def _report_advice(reason: str) -> str:
    """`reason` with, after advice to record into a file of one's own (`--thresholds PATH`), how
    the report compares with that file: the report notebook takes `-p thresholds PATH`."""
    if "--thresholds PATH" not in reason:
        return reason
    return (
        f"{reason}; then compare with it: `evalkit report -p thresholds PATH` "
        "(`evalkit run --thresholds PATH`)"
    )


def shown_reason(run: EvalRun, reason: str) -> str:
    """`reason` with the run's own absolute paths (its thresholds file, its suite folder) shown as
    `shown_path` shows them — relative to the working directory when below it — and, elsewhere,
    the built-in baselines as BUILTIN_THRESHOLDS (they sit inside the installed package). A report is shared,
    and the note was written with the paths of the machine that ran it."""
    prov = run.result.provenance
    for path in (prov.config.thresholds, prov.datasets):
        if path is not None and Path(path).is_absolute():
            shown = shown_path(path)
            if Path(shown).is_absolute() and _builtin_thresholds(Path(path)):
                shown = BUILTIN_THRESHOLDS
            reason = reason.replace(str(path), shown)
    return reason


BUILTIN_THRESHOLDS = "the built-in suite's thresholds.json"
"""How a report names the built-in baselines, wherever evalkit is installed."""


def run_verdict(run: EvalRun) -> Verdict:
    """The verdict of `run` (see the module docstring for the rules)."""
    result = run.result
    gate = (
        missing_gated_pass(result)
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
        baseline=_baseline_line(result.provenance.baseline, result),
        margins=margins(result),
        command=reproduce_command(result),
        system=result.system,
        papermill=reproduce_papermill(result),
    )


def margins(result: RunResult) -> tuple[Margin, ...]:
    """Every compared scope × harness metric of `result`'s recorded baseline (overall first, then
    categories in the baseline's order) with the run's value; () when metrics were not compared
    or the report predates recorded baselines. A scope the run lacks is left out (it is a
    `present` regression, listed above)."""
    compared = result.provenance.baseline
    if compared is None:
        return ()
    measured = result.measurement
    scopes: list[tuple[str, ComparedScope | None, Aggregate | None]] = (
        [("overall", compared.overall, measured.overall)] if compared.overall is not None else []
    )
    scopes += [(c, s, measured.categories.get(c)) for c, s in compared.categories.items()]
    return tuple(
        Margin(name, metric, aggregate.metrics[metric], scope.baseline.get(metric), threshold)
        for name, scope, aggregate in scopes
        if scope is not None and aggregate is not None
        for metric, threshold in scope.threshold.items()
        if metric in aggregate.metrics
    )


def reproduce_command(result: RunResult) -> str | None:
    """The `evalkit run` command line of the request the run recorded (`Provenance.request`:
    each option that differs from its default, paths shown relative to the working directory
    when below it; the progress display left out), else, for a run that recorded none, the
    command line that makes this run again (same system, mode, model, top_k,
    gated pass and gate, suite folder, scenarios, thresholds file, --[no-]require-baseline, --perturb
    and its curve), shell-quoted; None when the report does not record its suite
    (`Provenance.datasets`: a benchmark import, or a report written before evalkit recorded it).
    The thresholds flag is left out when it is the default (`<datasets>/thresholds.json`, or
    the built-in one for the built-in suite).
    Options set from Python only (store options) have no flag and are not shown."""
    prov = result.provenance
    prefix = [PYTHONPATH_HERE] if _module_here(prov.config.system) else []
    if prov.request is not None:
        return " ".join([*prefix, shlex.join(["evalkit", "run", *_shown_request(prov.request).argv()])])
    config = prov.config
    if prov.datasets is None:
        return None
    argv = ["evalkit", "run"]
    if config.system != DEFAULT_SYSTEM:
        argv += ["--system", config.system]
    if config.mode == "real":
        argv += ["--embedder", "real" if config.model is None else f"real:{config.model}"]
    argv += ["--top-k", str(config.top_k)]
    if not config.gated:
        argv += ["--gated-pass", "off"]
    elif config.min_relevance is not None:
        argv += ["--gated-pass", f"{config.min_relevance:g}"]
    if prov.datasets != BUILTIN_SUITE:
        argv += ["--datasets", prov.datasets]
    for name in prov.scenarios:
        argv += ["--scenario", name]
    if config.thresholds is None:
        argv += ["--thresholds", "none"]
    elif (
        not _builtin_thresholds(config.thresholds)
        and Path(config.thresholds) != Path(prov.datasets) / "thresholds.json"
    ):
        argv += ["--thresholds", shown_path(config.thresholds)]
    if config.require_baseline is not None:  # None: on in a CI context, as the same line will be
        argv.append("--require-baseline" if config.require_baseline else "--no-require-baseline")
    perturbed = prov.perturbation
    for flag, key in (("distractors", "distractors"), ("stale-repeats", "stale_repeats")):
        if perturbed.get(key):
            argv += ["--perturb", f"{flag}={perturbed[key]}"]
    curve = result.perturbation_curve
    if curve is not None:
        argv += ["--perturb", f"{curve.kind}={','.join(str(n) for n in curve.values)}"]
    seed = perturbed.get("seed") if perturbed else curve.seed if curve is not None else 0
    if seed:
        argv += ["--perturb-seed", str(seed)]
    return " ".join([*prefix, shlex.join(argv)])


PYTHONPATH_HERE = "PYTHONPATH=."
"""What the "Reproduce" line starts with when the system is a module of the working directory."""


def _module_here(system: str) -> bool:
    """Whether `system` names a Python object (`MODULE:FACTORY`) whose top-level module is a file
    or folder of the working directory (`WORKDIR_ENV` when set: the one `evalkit report` was typed
    in): `evalkit run` does not search there, so the line that reproduces the run needs
    `PYTHONPATH=.` (the fix the "cannot import module" error gives)."""
    if ":" not in system or system.startswith(("http://", "https://", "mcp:")):
        return False
    top = system.partition(":")[0].split(".")[0]
    here = Path(os.environ.get(WORKDIR_ENV) or os.getcwd())
    return bool(top) and ((here / top).is_dir() or (here / f"{top}.py").is_file())


REPORT_NOTEBOOK = "notebooks/eval_report.ipynb"
"""The report notebook as the papermill line names it (`evalkit notebooks` copies it)."""


def reproduce_papermill(result: RunResult) -> str | None:
    """The papermill command line that makes the run again with the report notebook: every
    notebook parameter of the request the run recorded (`RunRequest.notebook_parameters`), None
    for a run that recorded no request or asked for an option the notebook does not offer."""
    request = result.provenance.request
    chosen = None if request is None else _shown_request(request).notebook_parameters()
    if chosen is None:
        return None
    argv = ["papermill", REPORT_NOTEBOOK, "eval_report.out.ipynb"]
    for name, value in chosen.items():
        argv += ["-p", name, f"{value:g}" if isinstance(value, float) else str(value)]
    return shlex.join(argv)


def _shown_request(request: RunRequest) -> RunRequest:
    """`request` with its paths shown as `shown_path` shows them, the built-in suite and its
    baselines as the defaults, and where the run wrote (report, history) and its progress display
    left out: a reproduction writes its own outputs."""
    update: dict[str, object] = {"progress": None, "out": None, "history": None}
    for name in ("datasets", "thresholds", "cache"):
        value = getattr(request, name)
        if isinstance(value, Path):
            update[name] = Path(shown_path(value))
    if request.datasets is not None and Path(request.datasets).resolve() == Path(DEFAULT_DATASETS).resolve():
        update["datasets"] = None
    if request.thresholds is not None and _builtin_thresholds(Path(str(request.thresholds))):
        update["thresholds"] = None
    return request.model_copy(update=update)


def _builtin_thresholds(path: Path | None) -> bool:
    return path is not None and Path(path).resolve() == Path(DEFAULT_THRESHOLDS).resolve()


def _baseline_line(compared: ComparedBaseline | None, result: RunResult) -> str | None:
    if compared is None:
        return None
    return (
        f"Baseline: {shown_path(compared.file)}, recorded {compared.recorded_at} "
        f"for system {compared.system} "
        f"(mode {result.mode}, top_k {result.top_k})"
    )


def _number(value: float | None) -> str:
    return "none" if value is None else f"{value:.4f}"


def _signed(value: float | None, places: int = 4) -> str:
    """ "+0.0200", "-0.0100"; a value that rounds to zero at `places` is "0" (never "-0.0000")."""
    if value is None:
        return "—"
    return "0" if abs(value) < 0.5 * 10**-places else f"{value:+.{places}f}"


def _baseline_check_off(run: EvalRun) -> str | None:
    note = run.result.baseline_check_off
    if note is not None:
        return shown_reason(run, baseline_check_reason(note))
    if run.result.provenance.config.thresholds is None:
        return "the run was configured without a thresholds file"
    return None
