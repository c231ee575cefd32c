"""evalkit: measure how well an AI agent's long-term memory retrieves what it should.

The public API is what `__all__` lists; notebooks use only these names. `tables` and `charts`
(report tables and charts; they import matplotlib) and `mutations` (the mutation catalogue) are
submodules imported on first use: `from evalkit import tables`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from evalkit.api import (
    detect_mutations,
    make_config,
    notebook_path,
    run_and_load,
    run_beir,
    run_benchmark,
    run_eval,
    run_locomo,
)
from evalkit.embedders import Embedder, HashingEmbedder
from evalkit.errors import (
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
from evalkit.harness.provenance import evalkit_version
from evalkit.harness.results import RunResult
from evalkit.memory import DEFAULT_MIN_RELEVANCE, VECTOR_FLOOR, MemoryStore, StoreOptions
from evalkit.records import Edge, Hit, SearchResponse, Thought
from evalkit.scenarios import Suite, load_suite
from evalkit.systems import MemorySystem, ReferenceSystem, ScenarioMemory
from evalkit.views.compare import (
    COMPARISON_METRIC_COLUMNS,
    COMPARISON_QUERY_COLUMNS,
    COMPARISON_SCENARIO_COLUMNS,
    RunComparison,
    compare_runs,
)
from evalkit.views.frames import (
    CATEGORY_COLUMNS,
    DROPPED_COLUMNS,
    GATE_COMPARISON_COLUMNS,
    HIT_COLUMNS,
    MUTATION_COLUMNS,
    OVERALL_COLUMNS,
    QUERY_COLUMNS,
    REGRESSION_COLUMNS,
    SCENARIO_COLUMNS,
    EvalRun,
    load_run,
)
from evalkit.views.history import history_table, load_history
from evalkit.views.sweep import RECOMMENDATION_COLUMNS, SWEEP_COLUMNS, recommend_gates
from evalkit.views.verdict import Verdict, run_verdict

__version__ = evalkit_version()

_SUBMODULES = {
    "charts": "evalkit.views.charts",
    "mutations": "evalkit.suites.mutations",
    "tables": "evalkit.views.tables",
}


def __getattr__(name: str) -> ModuleType:
    """`evalkit.tables`, `evalkit.charts` and `evalkit.mutations`, imported on first use."""
    if name in _SUBMODULES:
        return importlib.import_module(_SUBMODULES[name])
    raise AttributeError(f"module 'evalkit' has no attribute {name!r}")


__all__ = [
    "CATEGORY_COLUMNS",
    "COMPARISON_METRIC_COLUMNS",
    "COMPARISON_QUERY_COLUMNS",
    "COMPARISON_SCENARIO_COLUMNS",
    "DEFAULT_MIN_RELEVANCE",
    "DROPPED_COLUMNS",
    "GATE_COMPARISON_COLUMNS",
    "HIT_COLUMNS",
    "MUTATION_COLUMNS",
    "OVERALL_COLUMNS",
    "QUERY_COLUMNS",
    "RECOMMENDATION_COLUMNS",
    "REGRESSION_COLUMNS",
    "SCENARIO_COLUMNS",
    "SWEEP_COLUMNS",
    "VECTOR_FLOOR",
    "DatasetError",
    "Edge",
    "Embedder",
    "EmbedderError",
    "EvalRun",
    "EvalkitError",
    "HashingEmbedder",
    "Hit",
    "MemoryStore",
    "MemorySystem",
    "ReferenceSystem",
    "RegressionError",
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
    "UsageError",
    "Verdict",
    "charts",
    "compare_runs",
    "detect_mutations",
    "evaluate",
    "history_table",
    "load_history",
    "load_run",
    "load_suite",
    "make_config",
    "mutations",
    "notebook_path",
    "recommend_gates",
    "run_and_load",
    "run_beir",
    "run_benchmark",
    "run_eval",
    "run_locomo",
    "run_verdict",
    "tables",
]
