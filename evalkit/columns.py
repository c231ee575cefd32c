"""The column names of every DataFrame evalkit returns, in one namespace: `OVERALL_COLUMNS` are
`EvalRun.overall`'s, `QUERY_COLUMNS` `EvalRun.queries`', `COMPARISON_QUERY_COLUMNS` those of
`RunComparison.queries`, and so on (each constant's docstring, in its home module, names its frame
and says what each column means). A notebook or a test can select columns by these names instead
of spelling them: `run.queries[list(evalkit.columns.QUERY_COLUMNS)]`.

Each constant is imported from its home module on first use (`evalkit.lazy`), so this module loads
no pandas; `tests/test_architecture.py` holds that every `*_COLUMNS` of `evalkit.views` is here.
"""

from typing import TYPE_CHECKING

from evalkit.lazy import lazy_names

if TYPE_CHECKING:
    from evalkit.views.compare import (
        COMPARISON_METRIC_COLUMNS,
        COMPARISON_QUERY_COLUMNS,
        COMPARISON_SCENARIO_COLUMNS,
    )
    from evalkit.views.compare_many import MULTI_COMPARISON_COLUMNS
    from evalkit.views.frames import (
        BEHAVIOUR_COLUMNS,
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
    )
    from evalkit.views.history import RUN_TABLE_COLUMNS
    from evalkit.views.intervals import INTERVAL_COLUMNS, POWER_COLUMNS
    from evalkit.views.losses import QUERY_LOSS_COLUMNS, SCOPE_LOSS_COLUMNS
    from evalkit.views.ranking_diff import RANKING_DIFF_COLUMNS
    from evalkit.views.report import FAILURE_COLUMNS
    from evalkit.views.sweep import RECOMMENDATION_COLUMNS, SWEEP_COLUMNS
    from evalkit.views.systems import SYSTEMS_COLUMNS
    from evalkit.views.tables import LEAK_COLUMNS
    from evalkit.views.traces import (
        STORE_LATENCY_COLUMNS,
        STORE_MEASURE_COLUMNS,
        TOP_QUERY_COLUMNS,
        TRACE_QUERY_COLUMNS,
    )
    from evalkit.views.verdict import MARGIN_COLUMNS

HOMES: dict[str, tuple[str, ...]] = {
    "evalkit.views.compare": (
        "COMPARISON_METRIC_COLUMNS",
        "COMPARISON_QUERY_COLUMNS",
        "COMPARISON_SCENARIO_COLUMNS",
    ),
    "evalkit.views.compare_many": ("MULTI_COMPARISON_COLUMNS",),
    "evalkit.views.frames": (
        "BEHAVIOUR_COLUMNS",
        "CATEGORY_COLUMNS",
        "DROPPED_COLUMNS",
        "GATE_COMPARISON_COLUMNS",
        "HIT_COLUMNS",
        "LATENCY_COLUMNS",
        "MUTATION_COLUMNS",
        "NOT_APPLICABLE_COLUMNS",
        "OVERALL_COLUMNS",
        "QUERY_COLUMNS",
        "REGRESSION_COLUMNS",
        "SCENARIO_COLUMNS",
    ),
    "evalkit.views.history": ("RUN_TABLE_COLUMNS",),
    "evalkit.views.intervals": ("INTERVAL_COLUMNS", "POWER_COLUMNS"),
    "evalkit.views.losses": ("QUERY_LOSS_COLUMNS", "SCOPE_LOSS_COLUMNS"),
    "evalkit.views.ranking_diff": ("RANKING_DIFF_COLUMNS",),
    "evalkit.views.report": ("FAILURE_COLUMNS",),
    "evalkit.views.sweep": ("RECOMMENDATION_COLUMNS", "SWEEP_COLUMNS"),
    "evalkit.views.systems": ("SYSTEMS_COLUMNS",),
    "evalkit.views.tables": ("LEAK_COLUMNS",),
    "evalkit.views.traces": (
        "STORE_LATENCY_COLUMNS",
        "STORE_MEASURE_COLUMNS",
        "TOP_QUERY_COLUMNS",
        "TRACE_QUERY_COLUMNS",
    ),
    "evalkit.views.verdict": ("MARGIN_COLUMNS",),
}
"""Home module → the column constants it defines."""

__getattr__ = lazy_names(__name__, HOMES)

__all__ = [
    "BEHAVIOUR_COLUMNS",
    "CATEGORY_COLUMNS",
    "COMPARISON_METRIC_COLUMNS",
    "COMPARISON_QUERY_COLUMNS",
    "COMPARISON_SCENARIO_COLUMNS",
    "DROPPED_COLUMNS",
    "FAILURE_COLUMNS",
    "GATE_COMPARISON_COLUMNS",
    "HIT_COLUMNS",
    "INTERVAL_COLUMNS",
    "LATENCY_COLUMNS",
    "LEAK_COLUMNS",
    "MARGIN_COLUMNS",
    "MULTI_COMPARISON_COLUMNS",
    "MUTATION_COLUMNS",
    "NOT_APPLICABLE_COLUMNS",
    "OVERALL_COLUMNS",
    "POWER_COLUMNS",
    "QUERY_COLUMNS",
    "QUERY_LOSS_COLUMNS",
    "RANKING_DIFF_COLUMNS",
    "RECOMMENDATION_COLUMNS",
    "REGRESSION_COLUMNS",
    "RUN_TABLE_COLUMNS",
    "SCENARIO_COLUMNS",
    "SCOPE_LOSS_COLUMNS",
    "STORE_LATENCY_COLUMNS",
    "STORE_MEASURE_COLUMNS",
    "SWEEP_COLUMNS",
    "SYSTEMS_COLUMNS",
    "TOP_QUERY_COLUMNS",
    "TRACE_QUERY_COLUMNS",
]
