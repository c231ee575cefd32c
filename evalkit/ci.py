"""The CI context: `ci_context()` is the one place evalkit decides whether it runs in CI.

The rule: the environment variable `CI` set to anything but an empty string, `0`, `false`, `no`
or `off` (any case). GitHub Actions, GitLab CI, CircleCI, Travis CI, Bitbucket Pipelines,
Buildkite and most other CI services set `CI=true` in every job, and `evalkit init`'s workflow
runs there; a CI service that does not (Jenkins, Azure Pipelines) gets it from the job, or the
job says `--require-baseline`. A notebook executed by papermill (or `evalkit report`, or nbval)
is not a CI context by itself: the same request must give the same verdict from papermill, the
CLI and Python, so what decides is the environment the request runs in, never the spelling it
was made in.

In a CI context a run that compares no metric with a baseline fails unless told otherwise
(`evalkit.harness.requirement`), `evalkit run` refuses to fall back to the built-in suite outside
a project, and progress bars stay off (`evalkit.progress`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

CI_VARIABLE = "CI"
"""The environment variable whose value says a process runs in CI."""

_FALSE_WORDS = ("", "0", "false", "no", "off")


def ci_context(environ: Mapping[str, str] | None = None) -> str | None:
    """Why this process runs in a CI context (`"CI=true in the environment"`), or None when it
    does not. `environ` defaults to `os.environ`, read at each call."""
    value = (os.environ if environ is None else environ).get(CI_VARIABLE)
    if value is None or value.strip().lower() in _FALSE_WORDS:
        return None
    return f"{CI_VARIABLE}={value} in the environment"
