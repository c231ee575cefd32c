"""The report file: every report evalkit reads or writes goes through this module.

`save_report` writes a `RunResult` atomically in the SPEC §5 shape (the measurement pass at the
top level, the gated pass nested under `gated`; `evalkit.harness.results.RunResult` maps the
models to that shape). `load_report` reads a file back; `report_from_data` does the same for
JSON already parsed. Both first bring an older report up to the current shape with
`migrate_report`, then validate it against the models, so no model, view or command reads an
older shape: what changed, and when, is written once, in `MIGRATIONS`.

Versions (`schema_version`, `evalkit.harness.results.SCHEMA_VERSION` is the current one):
- 1 (30 Nov 2026, before the harness was split into passes): not migrated; such a report is
  refused with a message saying to re-run it.
- 2 (1 Dec 2026 to 4 Dec 2026): the version stayed 2 through every change of those days, so a
  report of version 2 may have any of the shapes `_from_2` lists.
- 3 (4 Dec 2026): every key the code of that day always writes is present, and the version
  moves with each change from then on.
- 4 (4 Dec 2026): `provenance.request`, the `RunRequest` the run was made from, is added (left
  out for a run made otherwise); the verdict value NOT GATED is called NOT COMPARED.

A change to the shape is one step: bump SCHEMA_VERSION, add `N: _from_N` to `MIGRATIONS` (a
function taking the JSON object of version N and returning it in the shape of N+1, whose
docstring says what changed and when), and keep a fixture of the old shape under
`tests/fixtures/reports/`. A report of a version newer than SCHEMA_VERSION raises
`ReportNewerError` in one line (exit 2 from the CLI), whatever its keys.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalkit.errors import ReportError, ReportNewerError
from evalkit.files import write_atomic
from evalkit.harness.config import DEFAULT_SYSTEM
from evalkit.harness.results import (
    MEASUREMENT,
    SCHEMA_VERSION,
    DetectionPower,
    PassResult,
    RunResult,
    degenerate_regressions,
)
from evalkit.harness.verdict import suite_strength
from evalkit.packaged import evalkit_version

Report = dict[str, Any]
"""A report's JSON object, as `json.loads` gives it."""

OLDEST_MIGRATED = 2
"""The oldest version `migrate_report` brings up to date; older reports are refused."""


def save_report(result: RunResult, path: str | Path) -> Path:
    """Write `result` as indented JSON of version SCHEMA_VERSION, atomically (temp file in the
    same folder + rename; OutputError naming the path when it cannot be written). `detection` is
    left out when mutation testing did not run, `gated_baseline` when the gated pass was
    report-only, `stability` when the run was not repeated, `perturbation_curve` when none was
    measured, `not_applicable` when every scenario applied."""
    optional = ("detection", "gated_baseline", "stability", "perturbation_curve")
    exclude = {name for name in optional if getattr(result, name) is None}
    if not result.not_applicable:
        exclude.add("not_applicable")
    return write_atomic(path, result.model_dump_json(indent=2, exclude=exclude) + "\n")


def load_report(path: str | Path) -> RunResult:
    """The run saved at `path`, migrated from its version when older (`migrate_report`).
    ReportError when the file is missing, is not JSON or is not a report; ReportNewerError when
    a newer evalkit wrote it."""
    source = Path(path)
    try:
        text = source.read_bytes()
    except FileNotFoundError as exc:
        raise ReportError(f"report {source} does not exist; run `evalkit run --out {source}` first") from exc
    except OSError as exc:
        raise ReportError(f"report {source} cannot be read: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReportError(f"report {source} is not JSON ({exc}); give a report `evalkit run` wrote") from exc
    return report_from_data(data, source)


def saved_run_of(path: Path | None) -> tuple[str, str | None] | None:
    """(system, suite) of the report at `path`: its `system` and `provenance.datasets`, without
    parsing or validating the rest (a 1,500-scenario report is 40 MB: parsing it all takes 0.7 s,
    validating it as a run 0.4 s more). In a report `save_report` wrote (indented by 2 spaces,
    and a JSON string holds no raw line break) a top-level key is the only one that starts a line
    after exactly two spaces, so each of the two values is decoded where its key is; a file
    formatted otherwise is parsed whole. None when `path` is None or no file, or the file is not
    JSON holding those two (a report of another tool, a broken file: nothing to say)."""
    if path is None or not path.is_file():
        return None
    try:
        text = path.read_bytes().decode("utf-8")
        data = _top_level(text, ("system", "provenance"))
        system, suite = data["system"], data["provenance"].get("datasets")
    except (OSError, ValueError, LookupError, TypeError, AttributeError):
        return None
    if not isinstance(system, str) or not isinstance(suite, str | None):
        return None
    return system, suite


def _top_level(text: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """The values of `keys` in the JSON object `text`, each decoded where its key starts a line
    after two spaces (see `saved_run_of`); the whole text parsed when one is not found so."""
    decoder = json.JSONDecoder()
    found = {}
    for key in keys:
        marker = f'\n  "{key}": '
        at = text.find(marker)
        if at < 0 or text.find(marker, at + 1) >= 0:
            return dict(json.loads(text))
        found[key] = decoder.raw_decode(text, at + len(marker))[0]
    return found


def report_from_data(data: Any, source: str | Path = "<data>") -> RunResult:
    """The run a report's parsed JSON holds (any version `migrate_report` reads), validated
    against the models. `source` names the report in messages. ReportError when it is not a
    report of this evalkit (after migration), ReportNewerError when it is newer."""
    migrated = migrate_report(data, source)
    try:
        return RunResult.model_validate(migrated)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        if all(error["type"] == "extra_forbidden" for error in errors):
            keys = sorted({str(error["loc"][-1]) for error in errors})  # the key, not the model path
            raise ReportError(
                f"report {source} has key(s) a report of schema {SCHEMA_VERSION} does not have: "
                f"{', '.join(keys)}; it was written by another evalkit build than this one "
                f"({evalkit_version()}): read it with the evalkit that wrote it"
            ) from exc
        raise ReportError(
            f"report {source} is not a valid evalkit report of schema {SCHEMA_VERSION} "
            f"(re-run it with this evalkit version): {exc}"
        ) from exc


def migrate_report(data: Any, source: str | Path = "<data>") -> Report:
    """`data` (a report's JSON object) in the shape of version SCHEMA_VERSION: each step of
    `MIGRATIONS` from its `schema_version` up; a current report comes back as given (a copy).
    ReportNewerError for a version above SCHEMA_VERSION; ReportError for a version older than
    OLDEST_MIGRATED, or data without an integer `schema_version` (not a report)."""
    if not isinstance(data, dict) or type(data.get("schema_version")) is not int:
        raise ReportError(
            f"report {source} is not an evalkit report (no integer schema_version at its top level); "
            "give a report written by `evalkit run`"
        )
    version: int = data["schema_version"]
    if version > SCHEMA_VERSION:
        raise ReportNewerError(
            f"report {source} is of schema {version}, newer than this evalkit ({evalkit_version()}) "
            f"reads (up to {SCHEMA_VERSION}): upgrade evalkit to read it"
        )
    if version < OLDEST_MIGRATED:
        raise ReportError(
            f"report {source} is of schema {version}, older than this evalkit reads (from "
            f"{OLDEST_MIGRATED}): re-run it with this evalkit version"
        )
    report = dict(data)
    for step in range(version, SCHEMA_VERSION):
        report = MIGRATIONS[step](report)
    return report


_BASELINE_CHECK_OFF = "baseline check OFF"
_METRIC_GATING_OFF = "metric gating OFF"
_GATING_IS_OFF = "metric gating is off"


def _note_from_2(note: str) -> str:
    """A version-2 note in the current wording: the baseline-check note was written three ways.
    Until 1 Dec 2026 (d102fe8) without a prefix ("<reason>: metric gating is off (assertions
    still gate)"), then "metric gating OFF: <reason> (assertions still gate)", and since 1 Dec
    2026 (9943f41) as today: "baseline check OFF: <reason> (assertions still count)", the
    reason saying "the baseline check is off" where it said "metric gating is off". Other notes
    are kept."""
    if note.startswith(_METRIC_GATING_OFF):
        note = _BASELINE_CHECK_OFF + note.removeprefix(_METRIC_GATING_OFF)
    elif _GATING_IS_OFF in note and not note.startswith(_BASELINE_CHECK_OFF):
        note = f"{_BASELINE_CHECK_OFF}: {note}"
    if not note.startswith(_BASELINE_CHECK_OFF):
        return note
    note = note.replace(_GATING_IS_OFF, "the baseline check is off")
    return note.removesuffix(" (assertions still gate)").removesuffix(" (assertions still count)") + (
        " (assertions still count)"
    )


_REFERENCE_DECLARATION: Report = {
    "capabilities": [
        "confidence", "contradiction", "deletion", "global_thoughts", "projects", "recency", "regate",
        "relevance_gate", "supersession", "update",
    ],
    "confidence_floor": 0.9,
    "mutation_testing": True,
}  # fmt: skip
"""What the reference store (the default system) declared about itself when version 3 began."""

_UNDECLARED: Report = {
    "capabilities": [
        "confidence", "contradiction", "global_thoughts", "projects", "recency", "regate",
        "relevance_gate", "supersession",
    ],
    "confidence_floor": None,
    "mutation_testing": False,
}  # fmt: skip
"""What a system declaring nothing declared when version 3 began (every capability but the
operations, no confidence floor, no mutation testing)."""


def _from_2(report: Report) -> Report:
    """Version 2 (1-4 Dec 2026) to 3. The version stayed 2 while these changed; each is brought
    to the shape version 3 always has:
    - `notes`: the baseline-check note in today's wording (`_note_from_2`).
    - `pinned_gates` (added 1 Dec 2026, fb1c5c9): before it, the top-level `relevance_gate` was the
      measurement pass's own summary; it moves to `pinned_gates`, and `relevance_gate` becomes the
      gated pass's summary (null without a gated pass), as SPEC §5 says.
    - `provenance.declaration` (added 1 Dec 2026, 6bc9880): absent before; the declaration the
      run's system made then (the reference store's for the default system, else that of a
      system declaring nothing), which is what the views assumed for such reports.
    - `latency` (added 1 Dec 2026, 7f7c7ce): absent before; an empty latency report (no calls).
    - `detection.checked_against` and each outcome's `hint` (added 1 Dec 2026, fb9b101 and
      c4c6540): absent before; null and "" (not recorded).
    - `verdict` (added 1 Dec 2026, 82fefd9): absent before, and recall 0 on every labelled query
      was not yet a regression; the `degenerate` regression today's run records is added, and
      the verdict is judged when the report is read.
    - `verdict.degenerate[].query_number` (1 Dec 2026, 695d20c): before it, `query` held the
      0-based index; it becomes the query's number from 1.
    - `verdict.strength` (added 1 Dec 2026, fb9b101): a stored verdict without it, of a run
      saved with its mutation suite (`detection`), gets the strength computed from `detection`.
    """
    report = {**report, "schema_version": 3}
    report["notes"] = [_note_from_2(note) for note in report.get("notes", [])]
    if "pinned_gates" not in report and "relevance_gate" in report:
        gated = report.get("gated")
        report["pinned_gates"] = report["relevance_gate"]
        report["relevance_gate"] = None if gated is None else gated["relevance_gate"]
    provenance = report.get("provenance")
    if isinstance(provenance, dict) and "declaration" not in provenance:
        declared = _REFERENCE_DECLARATION if report.get("system") == DEFAULT_SYSTEM else _UNDECLARED
        report["provenance"] = {**provenance, "declaration": declared}
    report.setdefault("latency", {"overall": None, "scenarios": {}})
    if isinstance(report.get("detection"), dict):
        detection = report["detection"]
        outcomes = [{"hint": "", **outcome} for outcome in detection.get("outcomes", [])]
        report["detection"] = {"checked_against": None, **detection, "outcomes": outcomes}
    verdict = report.get("verdict")
    if verdict is None:
        report["regressions"] = [*report.get("regressions", []), *_degenerate_from_2(report)]
    else:
        report["verdict"] = _verdict_from_2(verdict, report.get("detection"))
    return report


def _degenerate_from_2(report: Report) -> list[Report]:
    """The `degenerate` regression today's run records for the measurement pass of a version-2
    report without a verdict, unless the report has one; [] when its pass cannot be read (the
    validation of the whole report then says what is wrong)."""
    if any(isinstance(r, dict) and r.get("kind") == "degenerate" for r in report.get("regressions", [])):
        return []
    keys = ("scenarios", "overall", "categories")
    try:
        measurement = PassResult.model_validate(
            {
                "name": MEASUREMENT,
                "role": "measurement",
                **{key: report[key] for key in keys},
                "relevance_gate": report["pinned_gates"],
            }
        )
    except (KeyError, ValidationError):
        return []
    return [r.model_dump() for r in degenerate_regressions(measurement)]


def _verdict_from_2(verdict: Any, detection: Any) -> Any:
    """A version-2 stored verdict with numbered degenerate findings and, for a run saved with its
    mutation suite, its suite strength (see `_from_2`)."""
    if not isinstance(verdict, dict):
        return verdict
    findings = []
    for finding in verdict.get("degenerate", []):
        if isinstance(finding, dict) and "query" in finding:
            finding = dict(finding)
            index = finding.pop("query")
            finding["query_number"] = None if index is None else index + 1
        findings.append(finding)
    verdict = {**verdict, "degenerate": findings}
    if "strength" not in verdict and isinstance(detection, dict):
        try:
            strength = suite_strength(DetectionPower.model_validate(detection))
        except ValidationError:
            return verdict
        verdict["strength"] = strength.model_dump()
    return verdict


def _from_3(report: Report) -> Report:
    """Version 3 to 4 (4 Dec 2026, the run request):
    - `verdict.value` "NOT GATED" is "NOT COMPARED" ("gate" means the relevance gate only).
    - `provenance.request` (the run's `RunRequest`, from which the verdict prints its "Reproduce"
      lines) was added; it is optional and a version-3 report never has it, so such a run
      reproduces from its settings, as before."""
    verdict = report.get("verdict")
    if isinstance(verdict, dict) and verdict.get("value") == "NOT GATED":
        report = {**report, "verdict": {**verdict, "value": "NOT COMPARED"}}
    return {**report, "schema_version": 4}


MIGRATIONS: dict[int, Callable[[Report], Report]] = {2: _from_2, 3: _from_3}
"""Version N → the function bringing a report of version N to version N+1 (see its docstring for
what changed and when), for every N from OLDEST_MIGRATED to SCHEMA_VERSION − 1."""
