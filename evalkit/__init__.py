"""evalkit: measure how well an AI agent's long-term memory retrieves what it should.

Start here:

    run = evalkit.run_eval()                 # the built-in suite on the reference store
    run.overall, run.scenarios, run.queries  # the results as pandas DataFrames
    print(evalkit.run_verdict(run))          # PASS, FAIL or NOT COMPARED, and why
    evalkit.run_eval(system=MySystem())      # your memory system (docs: "Your system")
    evalkit.load_run("reports/report.json")  # a run saved by `evalkit run`

The top level holds what a run, a notebook and a system of your own need (`__all__`: 28 names).
The rest lives in namespaces, each imported on first use: `evalkit.columns` (the column names of
every DataFrame), `evalkit.benchmarks` (BEIR, LoCoMo, LongMemEval, run files, production
replays), `evalkit.tables` and `evalkit.charts` (the report's tables and charts; they import
matplotlib), `evalkit.report` (the HTML report's sections), `evalkit.traces` (an imported
production replay's views), `evalkit.mutations` (the mutation catalogue) and `evalkit.errors`.

Every name is imported on first use (PEP 562, `evalkit.lazy`), so `import evalkit` (and the
`evalkit` console script, which must install its Ctrl-C and SIGTERM handling before anything heavy
loads) costs almost nothing; `_HOMES` says which module each public name lives in.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.api import (
        assert_thresholds,
        notebook_path,
        perturbation_curve,
        record_baseline,
        run_and_load,
        run_eval,
        run_request,
    )
    from evalkit.errors import EvalkitError, RegressionError, UsageError
    from evalkit.harness.config import RunConfig
    from evalkit.harness.request import RunRequest
    from evalkit.harness.results import RunResult
    from evalkit.parameters import check_parameters
    from evalkit.records import Edge, Hit, SearchResponse, Thought
    from evalkit.scenarios import load_suite
    from evalkit.systems import MemorySystem, ReferenceSystem, ScenarioMemory, SearchOptions
    from evalkit.views.compare import compare_runs
    from evalkit.views.compare_many import compare_many
    from evalkit.views.frames import EvalRun, load_run
    from evalkit.views.history import load_history
    from evalkit.views.verdict import Verdict, run_verdict

_HOMES: dict[str, tuple[str, ...]] = {
    "evalkit.api": (
        "assert_thresholds", "notebook_path", "perturbation_curve", "record_baseline", "run_and_load",
        "run_eval", "run_request",
    ),
    "evalkit.errors": ("EvalkitError", "RegressionError", "UsageError"),
    "evalkit.harness.config": ("RunConfig",),
    "evalkit.harness.request": ("RunRequest",),
    "evalkit.harness.results": ("RunResult",),
    "evalkit.parameters": ("check_parameters",),
    "evalkit.records": ("Edge", "Hit", "SearchResponse", "Thought"),
    "evalkit.scenarios": ("load_suite",),
    "evalkit.systems": ("MemorySystem", "ReferenceSystem", "ScenarioMemory", "SearchOptions"),
    "evalkit.views.compare": ("compare_runs",),
    "evalkit.views.compare_many": ("compare_many",),
    "evalkit.views.frames": ("EvalRun", "load_run"),
    "evalkit.views.history": ("load_history",),
    "evalkit.views.verdict": ("Verdict", "run_verdict"),
}  # fmt: skip
"""Module → the public names it provides (checked against `__all__` by tests/test_architecture.py)."""

_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

_SUBMODULES = {
    "benchmarks": "evalkit.benchmarks",
    "charts": "evalkit.views.charts",
    "columns": "evalkit.columns",
    "errors": "evalkit.errors",
    "mutations": "evalkit.suites.mutations",
    "report": "evalkit.views.report",
    "tables": "evalkit.views.tables",
    "traces": "evalkit.views.traces",
}
"""The public namespaces (`evalkit.columns`, ...) → the module each is, imported on first use."""


def __getattr__(name: str) -> Any:
    """Each public name, `__version__`, and the namespaces of `_SUBMODULES`, imported on first use
    (then cached in the module's namespace)."""
    if name in _SUBMODULES:
        value: Any = importlib.import_module(_SUBMODULES[name])
    elif name == "__version__":
        value = importlib.import_module("evalkit.packaged").evalkit_version()
    elif name in _HOME_OF:
        value = getattr(importlib.import_module(_HOME_OF[name]), name)
    else:
        raise AttributeError(f"module 'evalkit' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public API (`__all__`) with `__version__`, for `dir(evalkit)` and tab completion: the
    names are imported on first use, so the module's namespace alone would list only its own
    helpers."""
    return sorted({*__all__, "__version__"})


__all__ = [
    "Edge",
    "EvalRun",
    "EvalkitError",
    "Hit",
    "MemorySystem",
    "ReferenceSystem",
    "RegressionError",
    "RunConfig",
    "RunRequest",
    "RunResult",
    "ScenarioMemory",
    "SearchOptions",
    "SearchResponse",
    "Thought",
    "UsageError",
    "Verdict",
    "assert_thresholds",
    "benchmarks",
    "charts",
    "check_parameters",
    "columns",
    "compare_many",
    "compare_runs",
    "errors",
    "load_history",
    "load_run",
    "load_suite",
    "mutations",
    "notebook_path",
    "perturbation_curve",
    "record_baseline",
    "report",
    "run_and_load",
    "run_eval",
    "run_request",
    "run_verdict",
    "tables",
    "traces",
]
