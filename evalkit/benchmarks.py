"""Runs of data evalkit did not write: public benchmarks (BEIR, LoCoMo, LongMemEval), run files
produced elsewhere (TREC or JSONL, scored against a suite or a benchmark; a run exported as TREC
files) and production replays (imported OpenTelemetry traces).

    run = evalkit.benchmarks.run_beir("data/scifact")           # BEIR SciFact on the reference store
    run = evalkit.benchmarks.score_run("run.trec", datasets="suite/")  # a run made elsewhere, our labels

Each name is imported from `evalkit.api` on first use (`evalkit.lazy`); the loaders themselves
are in `evalkit.suites.benchmarks`.
"""

from typing import TYPE_CHECKING

from evalkit.lazy import lazy_names

if TYPE_CHECKING:
    from evalkit.api import (
        export_trec,
        run_beir,
        run_benchmark,
        run_locomo,
        run_longmemeval,
        score_run,
        trace_replay,
    )

__getattr__ = lazy_names(
    __name__,
    {
        "evalkit.api": (
            "export_trec", "run_beir", "run_benchmark", "run_locomo", "run_longmemeval", "score_run",
            "trace_replay",
        ),
    },
)  # fmt: skip

__all__ = [
    "export_trec",
    "run_beir",
    "run_benchmark",
    "run_locomo",
    "run_longmemeval",
    "score_run",
    "trace_replay",
]
