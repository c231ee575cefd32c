"""evalkit: measure how well an AI agent's long-term memory retrieves what it should.

Start here:

    run = evalkit.run_eval()                 # the built-in suite on the reference store
    run.overall, run.scenarios, run.queries  # the results as pandas DataFrames
    print(evalkit.run_verdict(run))          # PASS, FAIL or NOT COMPARED, and why
    evalkit.run_eval(system=MySystem())      # your memory system (docs: "Your system")
    evalkit.load_run("reports/report.json")  # a run saved by `evalkit run`

The public API is what `__all__` lists; notebooks use only these names. `tables` and `charts`
(report tables and charts; they import matplotlib), `traces` (the views of an imported production
replay), `report` (the sections of the HTML report) and `mutations` (the mutation catalogue) are
submodules imported on first use:
`from evalkit import tables`.

Every name is imported on first use (PEP 562), so `import evalkit` (and the `evalkit` console
script, which must install its Ctrl-C and SIGTERM handling before anything heavy loads) costs
almost nothing; `_HOMES` says which module each public name lives in.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.api import (
        assert_thresholds,
        detect_mutations,
        export_trec,
        make_config,
        notebook_path,
        perturbation_curve,
        record_baseline,
        run_and_load,
        run_beir,
        run_benchmark,
        run_eval,
        run_locomo,
        run_longmemeval,
        score_run,
    )
    from evalkit.embedders import Embedder, HashingEmbedder
    from evalkit.errors import (
        AdapterError,
        AdapterWarning,
        DatasetError,
        EmbedderError,
        EvalkitError,
        RegressionError,
        ReportError,
        StoreError,
        ThresholdsError,
        UsageError,
    )
    from evalkit.harness.config import RunConfig
    from evalkit.harness.evaluate import evaluate
    from evalkit.harness.executors import Executor, make_executor
    from evalkit.harness.results import RunResult
    from evalkit.memory import DEFAULT_MIN_RELEVANCE, VECTOR_FLOOR, MemoryStore, StoreOptions
    from evalkit.parameters import check_parameters
    from evalkit.records import Edge, Hit, SearchResponse, Thought
    from evalkit.scenarios import Suite, load_suite
    from evalkit.scenarios.lint import lint_suite
    from evalkit.systems import MemorySystem, ReferenceSystem, ReplaySystem, ScenarioMemory
    from evalkit.systems.capabilities import CAPABILITIES
    from evalkit.views.compare import (
        COMPARISON_METRIC_COLUMNS,
        COMPARISON_QUERY_COLUMNS,
        COMPARISON_SCENARIO_COLUMNS,
        RunComparison,
        compare_runs,
    )
    from evalkit.views.compare_many import MULTI_COMPARISON_COLUMNS, MultiComparison, compare_many
    from evalkit.views.frames import (
        CATEGORY_COLUMNS,
        DROPPED_COLUMNS,
        GATE_COMPARISON_COLUMNS,
        HIT_COLUMNS,
        LATENCY_COLUMNS,
        MUTATION_COLUMNS,
        NOT_APPLICABLE_COLUMNS,
        OVERALL_COLUMNS,
        QUERY_COLUMNS,
        REGRESSION_COLUMNS,
        SCENARIO_COLUMNS,
        EvalRun,
        load_run,
    )
    from evalkit.views.history import history_table, load_history
    from evalkit.views.ranking_diff import RANKING_DIFF_COLUMNS, ranking_diff
    from evalkit.views.sweep import RECOMMENDATION_COLUMNS, SWEEP_COLUMNS, recommend_gates
    from evalkit.views.verdict import Verdict, run_verdict

_HOMES: dict[str, tuple[str, ...]] = {
    "evalkit.api": (
        "assert_thresholds", "detect_mutations", "export_trec", "make_config", "notebook_path",
        "perturbation_curve", "record_baseline", "run_and_load", "run_beir", "run_benchmark", "run_eval",
        "run_locomo", "run_longmemeval", "score_run", "trace_replay",
    ),
    "evalkit.embedders": ("Embedder", "HashingEmbedder"),
    "evalkit.errors": (
        "AdapterError", "AdapterWarning", "DatasetError", "EmbedderError", "EvalkitError", "RegressionError",
        "ReportError", "StoreError",
        "ThresholdsError", "UsageError",
    ),
    "evalkit.harness.config": ("RunConfig",),
    "evalkit.harness.executors": ("Executor", "make_executor"),
    "evalkit.harness.evaluate": ("evaluate",),
    "evalkit.harness.results": ("RunResult",),
    "evalkit.memory": ("DEFAULT_MIN_RELEVANCE", "VECTOR_FLOOR", "MemoryStore", "StoreOptions"),
    "evalkit.parameters": ("check_parameters",),
    "evalkit.records": ("Edge", "Hit", "SearchResponse", "Thought"),
    "evalkit.scenarios": ("Suite", "load_suite"),
    "evalkit.scenarios.lint": ("lint_suite",),
    "evalkit.systems": ("MemorySystem", "ReferenceSystem", "ReplaySystem", "ScenarioMemory"),
    "evalkit.systems.capabilities": ("CAPABILITIES",),
    "evalkit.views.frames": (
        "CATEGORY_COLUMNS", "DROPPED_COLUMNS", "GATE_COMPARISON_COLUMNS", "HIT_COLUMNS", "LATENCY_COLUMNS",
        "MUTATION_COLUMNS", "NOT_APPLICABLE_COLUMNS", "OVERALL_COLUMNS", "QUERY_COLUMNS",
        "REGRESSION_COLUMNS", "SCENARIO_COLUMNS", "EvalRun", "load_run",
    ),
    "evalkit.views.compare": (
        "COMPARISON_METRIC_COLUMNS", "COMPARISON_QUERY_COLUMNS", "COMPARISON_SCENARIO_COLUMNS",
        "RunComparison", "compare_runs",
    ),
    "evalkit.views.compare_many": ("MULTI_COMPARISON_COLUMNS", "MultiComparison", "compare_many"),
    "evalkit.views.history": ("history_table", "load_history"),
    "evalkit.views.ranking_diff": ("RANKING_DIFF_COLUMNS", "ranking_diff"),
    "evalkit.views.sweep": ("RECOMMENDATION_COLUMNS", "SWEEP_COLUMNS", "recommend_gates"),
    "evalkit.views.verdict": ("Verdict", "run_verdict"),
    "evalkit.views.traces": ("TRACE_QUERY_COLUMNS", "TraceReplay", "load_trace_queries"),
}  # fmt: skip
"""Module → the public names it provides (checked against `__all__` by tests/test_architecture.py)."""

_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

_SUBMODULES = {
    "charts": "evalkit.views.charts",
    "mutations": "evalkit.suites.mutations",
    "report": "evalkit.views.report",
    "tables": "evalkit.views.tables",
    "traces": "evalkit.views.traces",
}


def __getattr__(name: str) -> Any:
    """Each public name, `__version__`, and the submodules `evalkit.tables`, `evalkit.charts` and
    `evalkit.mutations`, imported on first use (then cached in the module's namespace)."""
    if name in _SUBMODULES:
        return importlib.import_module(_SUBMODULES[name])
    if name == "__version__":
        value: Any = importlib.import_module("evalkit.packaged").evalkit_version()
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
    "CAPABILITIES",
    "CATEGORY_COLUMNS",
    "COMPARISON_METRIC_COLUMNS",
    "COMPARISON_QUERY_COLUMNS",
    "COMPARISON_SCENARIO_COLUMNS",
    "DEFAULT_MIN_RELEVANCE",
    "DROPPED_COLUMNS",
    "GATE_COMPARISON_COLUMNS",
    "HIT_COLUMNS",
    "LATENCY_COLUMNS",
    "MULTI_COMPARISON_COLUMNS",
    "MUTATION_COLUMNS",
    "NOT_APPLICABLE_COLUMNS",
    "OVERALL_COLUMNS",
    "QUERY_COLUMNS",
    "RANKING_DIFF_COLUMNS",
    "RECOMMENDATION_COLUMNS",
    "REGRESSION_COLUMNS",
    "SCENARIO_COLUMNS",
    "SWEEP_COLUMNS",
    "TRACE_QUERY_COLUMNS",
    "VECTOR_FLOOR",
    "AdapterError",
    "AdapterWarning",
    "DatasetError",
    "Edge",
    "Embedder",
    "EmbedderError",
    "EvalRun",
    "EvalkitError",
    "Executor",
    "HashingEmbedder",
    "Hit",
    "MemoryStore",
    "MemorySystem",
    "MultiComparison",
    "ReferenceSystem",
    "RegressionError",
    "ReplaySystem",
    "ReportError",
    "RunComparison",
    "RunConfig",
    "RunResult",
    "ScenarioMemory",
    "SearchResponse",
    "StoreError",
    "StoreOptions",
    "Suite",
    "Thought",
    "ThresholdsError",
    "TraceReplay",
    "UsageError",
    "Verdict",
    "assert_thresholds",
    "charts",
    "check_parameters",
    "compare_many",
    "compare_runs",
    "detect_mutations",
    "evaluate",
    "export_trec",
    "history_table",
    "lint_suite",
    "load_history",
    "load_run",
    "load_suite",
    "load_trace_queries",
    "make_config",
    "make_executor",
    "mutations",
    "notebook_path",
    "perturbation_curve",
    "ranking_diff",
    "recommend_gates",
    "record_baseline",
    "report",
    "run_and_load",
    "run_beir",
    "run_benchmark",
    "run_eval",
    "run_locomo",
    "run_longmemeval",
    "run_verdict",
    "score_run",
    "tables",
    "trace_replay",
    "traces",
]
