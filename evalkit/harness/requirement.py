"""The baseline requirement (SPEC §3.7: a CI job that passes must have checked something).

`require_baseline` (`RunConfig`, `--require-baseline` / `--no-require-baseline`, the
`evalkit.toml` key, the report notebook's parameter) has one meaning everywhere: True, a run that
compared no metric with a baseline has a regression of kind `baseline` (exit 1, a failed last
notebook cell); False, that is a note; None (the default), True in a CI context
(`evalkit.ci.ci_context`) and False elsewhere. The regression's message names the setting;
each front end adds the fix in its own spelling (`TURN_OFF`).
"""

from __future__ import annotations

from collections.abc import Mapping

from evalkit.ci import ci_context
from evalkit.harness.results import Regression

TURN_OFF = {
    "cli": "--no-require-baseline",
    "toml": "require_baseline = false",
    "papermill": "-p require_baseline False",
    "python": "require_baseline=False",
}
"""How each spelling of a request says in so many words that no baseline is needed."""


def baseline_requirement(
    require_baseline: bool | None, environ: Mapping[str, str] | None = None
) -> str | None:
    """Why a run must compare its metrics with a baseline, or None when it need not: the
    explicit setting, else the CI context of `environ` (default `os.environ`)."""
    if require_baseline is None:
        context = ci_context(environ)
        return None if context is None else f"a CI context: {context}"
    return "require_baseline is on" if require_baseline else None


def missing_baseline(
    require_baseline: bool | None, not_compared: str, environ: Mapping[str, str] | None = None
) -> list[Regression]:
    """The `baseline` regression of a run that did not compare every metric with a baseline
    (`not_compared` says why: no baseline, or scopes of it not comparable) when one is required
    (`baseline_requirement`); an empty list otherwise."""
    why = baseline_requirement(require_baseline, environ)
    if why is None:
        return []
    message = (
        f"a baseline is required ({why}) but not every metric was compared with one: {not_compared}. "
        "Record a baseline for this run, or say in so many words that none is needed (require_baseline off)"
    )
    return [Regression(kind="baseline", message=message)]
