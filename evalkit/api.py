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
from evalkit.systems.resolve import resolve_system
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


def build_system(
    config: RunConfig, system: MemorySystem | None = None, progress: bool | None = None
) -> tuple[MemorySystem, EmbedderInfo | None]:
    """The system under test and a description of the embedder evalkit built for it (None when
    the system embeds by itself). `system` (a Python object) wins over `config.system`, a spec
    resolved by `evalkit.systems.resolve.resolve_system`; only `reference` builds an embedder from
    the config's mode, model and cache. Raises UsageError for an unknown spec, EmbedderError when a
    real model or its cache cannot be opened."""
    if system is not None:
        return system, None
    built: list[EmbedderInfo] = []

    def reference() -> ReferenceSystem:
        embedder = make_embedder(
            config.mode,
            model=config.model,
            cache_path=config.embedding_cache,
            use_cache=config.use_cache,
            progress=progress,
        )
        built.append(embedder_provenance(embedder))
        return ReferenceSystem(embedder, options=config.store)

    resolved = resolve_system(config.system, reference)
    return resolved, (built[0] if built else None)


def _system_object(
    system: MemorySystem | str | None, overrides: dict[str, Any]
) -> tuple[MemorySystem | None, dict[str, Any]]:
    """A `system` given as a spec string becomes the `system` run option; an object stays."""
    if isinstance(system, str):
        return None, {**overrides, "system": system}
    return system, overrides


def run_eval(
    config: RunConfig | None = None,
    *,
    datasets: str | Path = DEFAULT_DATASETS,
    scenarios: Sequence[str] | None = None,
    system: MemorySystem | str | None = None,
    mutations: bool = False,
    progress: bool | None = None,
    **overrides: Any,
) -> EvalRun:
    """Run the scenario suite in `datasets` (`scenarios` selects some by name) and return it.

    The system under test is `system` (a Python object, or a spec string that sets
    `config.system`) or else the one `config.system` names (`reference`, a URL, `mcp:MAPPING`,
    `module:factory`, a plugin; see `build_system`). The
    config's embedder and store options apply to the reference store only; another system's
    result records no embedder. `mutations` also runs the mutation suite and saves its detection
    power with the run (reference store only). Raises DatasetError, ThresholdsError, UsageError
    (AdapterError for a system that breaks the protocol) or EmbedderError on bad input.
    """
    system, overrides = _system_object(system, overrides)
    settings = make_config(config, **overrides)
    if mutations and (system is not None or settings.system != "reference"):
        raise UsageError("mutation testing measures the reference store; drop mutations or the system")
    suite = load_suite(datasets, scenarios)
    chosen, embedder = build_system(settings, system, progress)
    try:
        result = evaluate(suite, chosen, settings, embedder=embedder, progress=progress)
    finally:
        _release(chosen, built=system is None)
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
    system: MemorySystem | str | None = None,
    progress: bool | None = None,
    **overrides: Any,
) -> EvalRun:
    """Run an imported benchmark (`beir_set`, `locomo_set`) at its own top_k and metrics, without
    thresholds; ungated unless `gated=True`. Store options default to BM25 retrieval. `system` as
    in `run_eval`."""
    system, overrides = _system_object(system, overrides)
    settings = bench.config(make_config(config or BENCHMARK_DEFAULTS, **overrides))
    chosen, embedder = build_system(settings, system, progress)
    try:
        return EvalRun(
            evaluate(bench.suite, chosen, settings, embedder=embedder, notes=bench.notes, progress=progress)
        )
    finally:
        _release(chosen, built=system is None)


def _release(system: MemorySystem, *, built: bool) -> None:
    """Close a system this module built from a spec (an HTTP client, an MCP session) once its run
    is over; a system object the caller passed stays theirs to close."""
    close = getattr(system, "close", None)
    if built and callable(close):
        close()


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
    notebook shows exactly the file it leaves behind. `mutations` applies to the reference store
    only: for another `system` it is dropped, and the detection-power section says why."""
    if report_json is not None:
        return load_run(report_json)
    if run_options.get("system", "reference") != "reference":
        run_options = {**run_options, "mutations": False}
    run_eval(**run_options).save(out)
    return load_run(out)
