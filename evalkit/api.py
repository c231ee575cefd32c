"""`run_eval`: the one call that runs the built-in (or any) scenario suite and returns an EvalRun."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evalkit.datasets import load_suite
from evalkit.embedders.factory import embedder_provenance, make_embedder
from evalkit.evaluate import evaluate
from evalkit.frames import EvalRun
from evalkit.system import MemorySystem, ReferenceSystem

DEFAULT_DATASETS = Path("datasets")
DEFAULT_THRESHOLDS = DEFAULT_DATASETS / "thresholds.json"


def run_eval(
    mode: str = "deterministic",
    top_k: int = 5,
    gated: bool = True,
    datasets: str | Path = DEFAULT_DATASETS,
    thresholds: str | Path | None = DEFAULT_THRESHOLDS,
    scenarios: Sequence[str] | None = None,
    min_relevance: float | None = None,
    model: str | None = None,
    cache: bool | str | Path | None = None,
    system: MemorySystem | None = None,
    progress: bool | None = None,
) -> EvalRun:
    """Run the scenario suite in `datasets` and return the run as DataFrames.

    `mode`: "deterministic" (hashing embedder) or "real" (sentence-transformers; `model` a name or
    path, default the packaged all-MiniLM-L6-v2; `cache` None = default embedding cache, a path,
    or False). `thresholds` None disables metric gating. `scenarios` selects scenarios by name.
    `min_relevance` sets the gated pass's gate (None = the service default). `system` replaces the
    reference store with another memory system (the embedder is then only recorded, not used).
    Raises DatasetError, ThresholdsError, UsageError or EmbedderError on bad input.
    """
    suite = load_suite(datasets, scenarios)
    embedder = make_embedder(mode, model=model, cache=cache, progress=progress)
    report = evaluate(
        suite,
        system or ReferenceSystem(embedder),
        mode=mode,
        embedder_info=embedder_provenance(embedder),
        top_k=top_k,
        gated=gated,
        min_relevance=min_relevance,
        thresholds=thresholds,
        selected=scenarios is not None,
        progress=progress,
    )
    return EvalRun(report)
