"""The Python API of a run: build what a `RunConfig` names, call the one evaluation path
(`evalkit.harness.evaluate.evaluate`), hand back an `EvalRun`.

`run_eval` runs a scenario suite, `run_benchmark` (and `run_beir` / `run_locomo`) an imported
benchmark, `detect_mutations` the mutation suite; `run_and_load` is what the report notebook
calls: run, save the JSON report, load it back (so the notebook shows exactly the saved file).
Every function accepts a whole `RunConfig` and/or keyword overrides of its fields
(`run_eval(top_k=10, gated=False)`); bad values raise UsageError before anything runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from evalkit.embedders.factory import EmbedderInfo, embedder_provenance, make_embedder
from evalkit.errors import UsageError
from evalkit.harness.config import DEFAULT_DATASETS, RunConfig
from evalkit.harness.evaluate import evaluate
from evalkit.harness.results import DetectionPower
from evalkit.memory import StoreOptions
from evalkit.packaged import THRESHOLDS_NAME
from evalkit.scenarios import Suite, load_suite
from evalkit.suites.benchmarks import (
    DEFAULT_BEIR_KS,
    DEFAULT_LOCOMO_KS,
    BenchSet,
    beir_set,
    locomo_set,
)
from evalkit.suites.locomo import STANDARD_CATEGORIES
from evalkit.suites.mutations import run_mutants
from evalkit.systems import MemorySystem, ReferenceSystem
from evalkit.views.frames import EvalRun, load_run

BENCHMARK_DEFAULTS = RunConfig(gated=False, store=StoreOptions(retrieval="bm25"), thresholds=None)
"""How a benchmark runs unless told otherwise: BM25, ungated, nothing to gate on."""


def make_config(config: RunConfig | None = None, **overrides: Any) -> RunConfig:
    """`config` (default: RunConfig()) with `overrides` applied, validated as a whole. Store
    options may be given as a `store=StoreOptions(...)` or as loose `retrieval`, `tokenizer`,
    `query_syntax` keywords. Raises UsageError naming any bad or unknown option."""
    base = config or RunConfig()
    store = {k: overrides.pop(k) for k in list(overrides) if k in StoreOptions.model_fields}
    if store:
        overrides["store"] = StoreOptions(**{**overrides.get("store", base.store).model_dump(), **store})
    unknown = sorted(set(overrides) - set(RunConfig.model_fields))
    if unknown:
        raise UsageError(
            f"unknown run option(s) {', '.join(unknown)}; options: {', '.join(RunConfig.model_fields)}, "
            f"{', '.join(StoreOptions.model_fields)}"
        )
    return RunConfig(**{**base.model_dump(), **overrides})


def reference_system(config: RunConfig, progress: bool | None = None) -> tuple[ReferenceSystem, EmbedderInfo]:
    """The reference store `config` describes and a description of its embedder. Raises
    EmbedderError when a real model or its cache cannot be opened."""
    if config.system != "reference":
        raise UsageError(
            f"unknown system {config.system!r}; the CLI knows 'reference' (pass another system to "
            "the library as a MemorySystem object)"
        )
    embedder = make_embedder(
        config.mode,
        model=config.model,
        cache_path=config.embedding_cache,
        use_cache=config.use_cache,
        progress=progress,
    )
    return ReferenceSystem(embedder, options=config.store), embedder_provenance(embedder)


def run_eval(
    config: RunConfig | None = None,
    *,
    datasets: str | Path = DEFAULT_DATASETS,
    scenarios: Sequence[str] | None = None,
    system: MemorySystem | None = None,
    mutations: bool = False,
    progress: bool | None = None,
    **overrides: Any,
) -> EvalRun:
    """Run the scenario suite in `datasets` (`scenarios` selects some by name) and return it.

    Unless `config` or a `thresholds=` override names one, the run gates on
    `<datasets>/thresholds.json` (the CLI's rule: a suite keeps its baselines beside it).
    `system` replaces the reference store with another memory system (the config's embedder and
    store options are then unused, and the result records no embedder). `mutations` also runs
    the mutation suite and saves its detection power with the run (reference store only).
    Raises DatasetError, ThresholdsError, UsageError or EmbedderError on bad input.
    """
    own = config is None and "thresholds" not in overrides
    settings = make_config(
        config, **({"thresholds": Path(datasets) / THRESHOLDS_NAME} if own else {}), **overrides
    )
    suite = load_suite(datasets, scenarios)
    if system is not None:
        if mutations:
            raise UsageError("mutation testing measures the reference store; drop mutations or system")
        return EvalRun(evaluate(suite, system, settings, progress=progress))
    reference, embedder = reference_system(settings, progress)
    result = evaluate(suite, reference, settings, embedder=embedder, progress=progress)
    if mutations:
        result = result.model_copy(update={"detection": detect_mutations(suite, settings)})
    return EvalRun(result)


def detect_mutations(
    suite: Suite, config: RunConfig, names: Sequence[str] | None = None, workers: int | None = None
) -> DetectionPower:
    """The mutation suite on `suite` (see `evalkit.suites.mutations.run_mutants`)."""
    return run_mutants(suite, config, names, workers)


def run_benchmark(
    bench: BenchSet,
    config: RunConfig | None = None,
    *,
    system: MemorySystem | None = None,
    progress: bool | None = None,
    **overrides: Any,
) -> EvalRun:
    """Run an imported benchmark (`beir_set`, `locomo_set`) at its own top_k and metrics, without
    thresholds; ungated unless `gated=True`. Store options default to BM25 retrieval."""
    settings = bench.config(make_config(config or BENCHMARK_DEFAULTS, **overrides))
    if system is not None:
        return EvalRun(evaluate(bench.suite, system, settings, notes=bench.notes, progress=progress))
    reference, embedder = reference_system(settings, progress)
    return EvalRun(
        evaluate(bench.suite, reference, settings, embedder=embedder, notes=bench.notes, progress=progress)
    )


def run_beir(
    path: str | Path,
    split: str = "test",
    ks: Sequence[int] = DEFAULT_BEIR_KS,
    *,
    progress: bool | None = None,
    **overrides: Any,
) -> EvalRun:
    """Run the BEIR directory `path` (split `split`) with nDCG, recall, MAP, MRR and success at
    every k of `ks`; other options as in `run_benchmark`. UsageError for bad options (before
    anything is loaded), DatasetError for bad data, EmbedderError for a missing real model."""
    config = make_config(BENCHMARK_DEFAULTS, **overrides)
    return run_benchmark(beir_set(path, split, ks, progress), config, progress=progress)


def run_locomo(
    path: str | Path,
    categories: Iterable[str] = STANDARD_CATEGORIES,
    ks: Sequence[int] = DEFAULT_LOCOMO_KS,
    *,
    progress: bool | None = None,
    **overrides: Any,
) -> EvalRun:
    """Run the LoCoMo file `path` at turn level: each conversation is its own store, searched by
    its questions of `categories` (default 1-4) with recall, success and nDCG at every k of `ks`;
    other options as in `run_benchmark`."""
    config = make_config(BENCHMARK_DEFAULTS, **overrides)
    return run_benchmark(locomo_set(path, categories, ks, progress), config, progress=progress)


def run_and_load(out: str | Path, *, report_json: str | Path | None = None, **run_options: Any) -> EvalRun:
    """The run a report notebook shows. With `report_json`: that saved run, as it was (nothing
    runs). Otherwise `run_eval(**run_options)` is saved to `out` and loaded back from it, so the
    notebook shows exactly the file it leaves behind."""
    if report_json is not None:
        return load_run(report_json)
    run_eval(**run_options).save(out)
    return load_run(out)
