"""evalkit: measure how well an AI agent's long-term memory retrieves what it should.

The public API is what `__all__` lists; notebooks use only these names. `report` (tables and
charts; imports matplotlib) and `mutations` (the mutation catalogue) are submodules, imported on
first use: `from evalkit import report`.
"""

from evalkit.api import run_eval
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
from evalkit.frames import (
    CATEGORY_COLUMNS,
    DROPPED_COLUMNS,
    GATE_COMPARISON_COLUMNS,
    HIT_COLUMNS,
    OVERALL_COLUMNS,
    QUERY_COLUMNS,
    REGRESSION_COLUMNS,
    SCENARIO_COLUMNS,
    EvalRun,
    load_report,
)
from evalkit.memory import DEFAULT_MIN_RELEVANCE, VECTOR_FLOOR, MemoryStore
from evalkit.model import Edge, Hit, SearchResponse, Thought
from evalkit.provenance import evalkit_version
from evalkit.system import Memory, MemorySystem, ReferenceSystem

__version__ = evalkit_version()

__all__ = [
    "CATEGORY_COLUMNS",
    "DEFAULT_MIN_RELEVANCE",
    "DROPPED_COLUMNS",
    "GATE_COMPARISON_COLUMNS",
    "HIT_COLUMNS",
    "OVERALL_COLUMNS",
    "QUERY_COLUMNS",
    "REGRESSION_COLUMNS",
    "SCENARIO_COLUMNS",
    "VECTOR_FLOOR",
    "DatasetError",
    "Edge",
    "Embedder",
    "EmbedderError",
    "EvalRun",
    "EvalkitError",
    "HashingEmbedder",
    "Hit",
    "Memory",
    "MemoryStore",
    "MemorySystem",
    "ReferenceSystem",
    "RegressionError",
    "ReportError",
    "SearchResponse",
    "StoreError",
    "Thought",
    "ThresholdsError",
    "UsageError",
    "load_report",
    "mutations",
    "report",
    "run_eval",
]
