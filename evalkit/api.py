"""The Python API of a run: build what a `RunConfig` names, call the one evaluation path
(`evalkit.harness.evaluate.evaluate`), hand back an `EvalRun`.

`score_run` scores a run file produced elsewhere, `export_trec` writes a report as TREC files;
`run_eval` runs a scenario suite, `run_benchmark` (and `run_beir` / `run_locomo` /
`run_longmemeval`) an imported benchmark, `detect_mutations` (`suites.mutations.run_mutants`,
re-exported) the mutation suite; `record_baseline` records a run as the baseline of its thresholds
file (what `evalkit baseline record [--gated]` does), `assert_thresholds`
raises on a run's regressions (the report notebook's final cell); `run_and_load`
is what the report notebook calls: run, save the JSON report, load it back (so the notebook
shows exactly the saved file). Every function accepts a whole `RunConfig` and/or keyword
overrides of its fields (`run_eval(top_k=10, gated=False)`); bad values raise UsageError before anything runs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.embedders import Embedder
from evalkit.embedders.factory import EmbedderInfo, embedder_provenance, make_embedder
from evalkit.errors import RegressionError, UsageError
from evalkit.files import shown_path
from evalkit.harness.baselines import record_baseline as record_mode_baseline
from evalkit.harness.baselines import record_gated_baseline
from evalkit.harness.config import DEFAULT_DATASETS, RunConfig
from evalkit.harness.evaluate import evaluate
from evalkit.harness.executors import Executor, make_executor
from evalkit.harness.project import find_project_file
from evalkit.harness.provenance import Provenance
from evalkit.harness.regressions import assert_no_regressions
from evalkit.harness.repeats import MAX_REPEAT
from evalkit.harness.repeats import compare_runs as compare_repeats
from evalkit.harness.request import NONE, RunRequest
from evalkit.harness.requirement import TURN_OFF, missing_baseline
from evalkit.harness.results import PerturbationCurve, RunResult
from evalkit.memory import StoreOptions
from evalkit.metrics import HARNESS_METRICS
from evalkit.metrics.registry import BEHAVIOUR_METRICS
from evalkit.packaged import BUILTIN_SUITE, SAMPLE_TRACES, THRESHOLDS_NAME
from evalkit.scenarios import load_suite
from evalkit.scenarios.perturb import CurveSpec, Perturbation, perturb_suite
from evalkit.suites.benchmarks import (
    DEFAULT_BEIR_KS,
    DEFAULT_LOCOMO_KS,
    DEFAULT_LONGMEMEVAL_KS,
    BenchSet,
    beir_set,
    locomo_set,
    longmemeval_set,
)
from evalkit.suites.locomo import STANDARD_CATEGORIES
from evalkit.suites.mutations import run_mutants as detect_mutations
from evalkit.suites.runfiles import check_run, read_run, write_trec
from evalkit.suites.trace_import import RUN_FILE as TRACE_RUN_FILE
from evalkit.suites.trace_import import import_traces, replay_notes
from evalkit.systems import MemorySystem, ReferenceSystem, ReplaySystem
from evalkit.systems.declaration import declaration_of
from evalkit.systems.resolve import DEFAULT_SYSTEM, resolve_system
from evalkit.systems.secrets import redact_url
from evalkit.views.frames import EvalRun, curve_frame, load_run
from evalkit.views.verdict import shown_reason

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.views.traces import TraceReplay

BENCHMARK_DEFAULTS = RunConfig(
    gated=False, store=StoreOptions(retrieval="bm25"), thresholds=None, require_baseline=False
)
"""How a benchmark runs unless told otherwise: BM25, ungated, no baselines to compare with (and
none required, in CI too: a benchmark is measured, not checked)."""


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
    resolved by `evalkit.systems.resolve.resolve_system`; only `reference` and the store systems
    (`chroma`, `qdrant`, `lancedb`, `pgvector`) get an embedder built from the config's mode, model
    and cache. Raises UsageError for an unknown spec, EmbedderError when a
    real model or its cache cannot be opened."""
    if system is not None:
        return system, None
    built: list[EmbedderInfo] = []

    def embedder() -> Embedder:
        made = make_embedder(
            config.mode,
            model=config.model,
            cache_path=config.embedding_cache,
            use_cache=config.use_cache,
            progress=progress,
        )
        built.append(embedder_provenance(made))
        return made

    def reference() -> ReferenceSystem:
        return ReferenceSystem(embedder(), options=config.store)

    resolved = resolve_system(config.system, reference, embedder)
    return resolved, (built[0] if built else None)


def _suite_config(datasets: str | Path, config: RunConfig | None, **overrides: Any) -> RunConfig:
    """`make_config` for a run on the scenario suite in `datasets`: unless `config` or a
    `thresholds` override names a file, the run gates on `<datasets>/thresholds.json`."""
    own = config is None and "thresholds" not in overrides
    suite_thresholds = {"thresholds": Path(datasets) / THRESHOLDS_NAME} if own else {}
    return make_config(config, **suite_thresholds, **overrides)


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
    fail_on_escaped: bool = False,
    progress: bool | None = None,
    executor: Executor | None = None,
    repeat: int = 1,
    perturb: Perturbation | None = None,
    perturb_curve: CurveSpec | None = None,
    **overrides: Any,
) -> EvalRun:
    """Run the scenario suite in `datasets` (`scenarios` selects some by name) and return it.

    Unless `config` or a `thresholds=` override names one, the run gates on
    `<datasets>/thresholds.json` (the CLI's rule: a suite keeps its baselines beside it).
    The system under test is `system` (a Python object, or a spec string that sets
    `config.system`) or else the one `config.system` names (`reference`, a URL, `mcp:MAPPING`,
    `module:factory`, a plugin; see `build_system`). The config's store options apply to the
    reference store only, its embedder to the reference store and the built-in vector stores;
    another system's result records no embedder. `mutations` also runs the mutation suite on the
    same suite and saves its detection power with the run, its verdict stating the suite
    strength (only for a system whose declaration says `mutation_testing`, the reference store:
    UsageError otherwise, before anything runs); `fail_on_escaped` (which implies `mutations`)
    makes each escaped mutation a regression (`RunResult.with_detection`). `executor` runs the scenarios
    (and mutations) elsewhere, e.g.
    `make_executor("processes", 4)` (default: serially here; an HTTP or MCP system runs its
    scenarios in flight on threads, 4 here, its own default when None); results are identical on
    every executor. Raises DatasetError, ThresholdsError, UsageError (AdapterError for a system that
    breaks the protocol; its subclass MemorySystemError, the system's own exception as its
    `__cause__`, for one that raises) or EmbedderError on bad input.

    `repeat` N > 1 runs the suite N times on the same system at the same clock and returns the
    first run with its `stability` (`evalkit.harness.repeats`: the queries whose ids or order
    differed between the runs; the verdict names them). UsageError for `repeat` below 1.

    `perturb` grows every scenario's memory deterministically (`evalkit.scenarios.perturb`:
    pool distractors, stale repeats); such a run is never compared with a baseline (NOT COMPARED,
    with a note naming the perturbation). See `perturbation_curve` for a curve over its size.

    `perturb_curve` also measures a perturbation curve on the same system, settings and scenarios
    (`measure_curve`: one more run per non-zero value, this run being the value-0 point) and saves
    it with the run (`RunResult.perturbation_curve`); the run itself, and so its verdict and its
    baseline check, stay the unperturbed suite's, and no point of the curve is compared with a
    baseline. UsageError with `perturb` (a curve of a perturbed suite is not offered: give one).
    """
    if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= MAX_REPEAT:
        raise UsageError(f"repeat must be a whole number of runs from 1 to {MAX_REPEAT}; got {repeat!r}")
    if perturb_curve is not None and perturb is not None and not perturb.empty:
        raise UsageError(
            "perturb and perturb_curve together: a curve starts from the unperturbed suite; "
            "drop perturb (or measure the curve of one kind with perturb_curve alone)"
        )
    system, overrides = _system_object(system, overrides)
    settings = _suite_config(datasets, config, **overrides)
    mutations = mutations or fail_on_escaped
    suite = load_suite(datasets, scenarios)
    if perturb is not None:
        suite = perturb_suite(suite, perturb)
    chosen, embedder = build_system(settings, system, progress)
    clock = datetime.now(UTC).replace(microsecond=0) if repeat > 1 else None
    try:
        if mutations and not declaration_of(chosen).mutation_testing:
            raise UsageError(
                f"mutation testing applies to a system whose declaration says mutation_testing (the "
                f"catalogue mutates the reference store's search); {chosen.name} does not: drop --mutants "
                "(mutations=False), or run them on the reference store"
            )
        results = [
            evaluate(
                suite, chosen, settings, embedder=embedder, clock=clock, progress=progress, executor=executor
            )
            for _ in range(repeat)
        ]
    finally:
        _release(chosen, built=system is None)
    result = results[0] if repeat == 1 else results[0].with_stability(compare_repeats(results))
    provenance = _with_suite_source(result.provenance, datasets, scenarios)
    if suite.perturbation is not None and perturb is not None:
        provenance = provenance.model_copy(update={"perturbation": perturb.fields})
    result = result.model_copy(update={"provenance": provenance})
    if mutations:
        detection = detect_mutations(suite, settings, executor=executor)
        result = result.with_detection(detection, fail_on_escaped=fail_on_escaped)
    if perturb_curve is not None:
        curve = measure_curve(
            perturb_curve, settings, systems=(system,), datasets=datasets, scenarios=scenarios,
            executor=executor, known=result,
        )  # fmt: skip
        result = result.with_curve(curve)
    return EvalRun(result)


def run_request(
    request: RunRequest, *, system: MemorySystem | None = None, executor: Executor | None = None
) -> EvalRun:
    """Run what `request` asks for: `run_eval` on its suite folder (`datasets`, None = the
    built-in suite) with its settings (`RunRequest.config`), scenarios, perturbation or curve,
    mutation suite and repeats, on the executor it names unless `executor` is given. `system`
    (a Python object) replaces the request's system spec. The result records the request
    (`Provenance.request`: the report's "Reproduce" lines are printed from it). What `evalkit run`
    does before it saves the report. A request naming a pack runs the packs' folder given as its
    `datasets` (`evalkit.suites.packs.pack_directory`; `evalkit run` sets it) and records the pack,
    not the folder; UsageError for a pack without its folder."""
    if request.pack is not None and request.datasets is None:
        raise UsageError(
            f"pack {request.pack!r}: give the packs' folder as datasets (evalkit.suites.packs.pack_directory)"
        )
    chosen = executor or make_executor(request.executor_kind, request.workers, request.ray_address)
    run = run_eval(
        request.config(),
        datasets=request.datasets or DEFAULT_DATASETS,
        scenarios=list(request.scenarios) or None,
        system=system,
        mutations=request.mutants is not None,
        fail_on_escaped=request.mutants == "fail",
        progress=request.progress,
        executor=chosen,
        repeat=request.repeat,
        perturb=request.perturbation,
        perturb_curve=request.curve,
    )
    shared = request.model_copy(update={"system": redact_url(request.system)})  # a report is shared
    if request.pack is not None:  # the pack names the suite; its folder is where this run wrote it
        shared = shared.model_copy(update={"datasets": None})
    recorded = run.result.provenance.model_copy(update={"request": shared})
    return EvalRun(run.result.model_copy(update={"provenance": recorded}))


def _with_suite_source(
    provenance: Provenance, datasets: str | Path, scenarios: Sequence[str] | None
) -> Provenance:
    """`provenance` with the suite folder (BUILTIN_SUITE for the built-in suite: the command's
    default; relative to the working directory when it lies below it: `shown_path`, which for
    `evalkit report`'s kernel means the directory the command was typed in) and the selected
    scenario names, so a report can print the command that reproduces its run."""
    folder = Path(datasets).resolve()
    shown = BUILTIN_SUITE
    if folder != Path(DEFAULT_DATASETS).resolve():
        shown = shown_path(folder)
    return provenance.model_copy(update={"datasets": shown, "scenarios": list(scenarios or [])})


def run_benchmark(
    bench: BenchSet,
    config: RunConfig | None = None,
    *,
    system: MemorySystem | str | None = None,
    progress: bool | None = None,
    executor: Executor | None = None,
    **overrides: Any,
) -> EvalRun:
    """Run an imported benchmark (`beir_set`, `locomo_set`) at its own top_k and metrics, without
    thresholds; ungated unless `gated=True`. Store options default to BM25 retrieval. `system` and
    `executor` as in `run_eval` (a LoCoMo conversation is a unit; BEIR's one scenario is cut into a
    shard of queries per worker, each seeding the corpus once)."""
    system, overrides = _system_object(system, overrides)
    settings = bench.config(make_config(config or BENCHMARK_DEFAULTS, **overrides))
    chosen, embedder = build_system(settings, system, progress)
    try:
        result = evaluate(
            bench.suite,
            chosen,
            settings,
            embedder=embedder,
            notes=bench.notes,
            progress=progress,
            executor=executor,
        )
    finally:
        _release(chosen, built=system is None)
    if not bench.category_names:
        return EvalRun(result)
    named = result.provenance.model_copy(update={"question_categories": dict(bench.category_names)})
    return EvalRun(result.model_copy(update={"provenance": named}))


def _release(system: MemorySystem, *, built: bool) -> None:
    """Close a system this module built from a spec (an HTTP client, an MCP session) once its run
    is over; a system object the caller passed stays theirs to close."""
    if built:
        system.close()


def run_beir(
    path: str | Path,
    split: str = "test",
    ks: Sequence[int] = DEFAULT_BEIR_KS,
    *,
    progress: bool | None = None,
    executor: Executor | None = None,
    **overrides: Any,
) -> EvalRun:
    """Run the BEIR directory `path` (split `split`) with nDCG, recall, MAP, MRR and success at
    every k of `ks`; other options as in `run_benchmark`. UsageError for bad options (before
    anything is loaded), DatasetError for bad data, EmbedderError for a missing real model."""
    config = make_config(BENCHMARK_DEFAULTS, **overrides)
    return run_benchmark(beir_set(path, split, ks, progress), config, progress=progress, executor=executor)


def run_locomo(
    path: str | Path,
    categories: Iterable[str] = STANDARD_CATEGORIES,
    ks: Sequence[int] = DEFAULT_LOCOMO_KS,
    *,
    progress: bool | None = None,
    executor: Executor | None = None,
    **overrides: Any,
) -> EvalRun:
    """Run the LoCoMo file `path` at turn level: each conversation is its own store, searched by
    its questions of `categories` (default 1-4) with recall, success and nDCG at every k of `ks`;
    other options as in `run_benchmark`."""
    config = make_config(BENCHMARK_DEFAULTS, **overrides)
    return run_benchmark(
        locomo_set(path, categories, ks, progress), config, progress=progress, executor=executor
    )


def run_longmemeval(
    path: str | Path,
    granularity: str = "session",
    ks: Sequence[int] = DEFAULT_LONGMEMEVAL_KS,
    *,
    progress: bool | None = None,
    **overrides: Any,
) -> EvalRun:
    """Run the LongMemEval file `path` at `granularity` ("session" or "turn"): each question is
    its own store, searched by its question, with recall, recall_all, success and nDCG at every k
    of `ks`; abstention questions are reported but left out of the aggregates. Every other
    keyword goes to `run_benchmark` (run options, `system`): UsageError for a bad one,
    DatasetError for bad data."""
    bench = longmemeval_set(path, granularity, ks, progress)
    return run_benchmark(bench, BENCHMARK_DEFAULTS, progress=progress, **overrides)


def score_run(
    run_file: str | Path,
    bench: BenchSet | None = None,
    *,
    format: str | None = None,
    datasets: str | Path = DEFAULT_DATASETS,
    config: RunConfig | None = None,
    progress: bool | None = None,
    **overrides: Any,
) -> EvalRun:
    """Score rankings produced elsewhere: the run file `run_file` (TREC or JSONL, see
    `evalkit.suites.runfiles`; `format` None = from the suffix) replayed by a `ReplaySystem`
    through the one evaluation path. Against the scenario suite in `datasets` (with its
    thresholds: the same baseline check as `run_eval`, `<datasets>/thresholds.json` unless `config` or a
    `thresholds=` override names one) when `bench` is None, else against the imported
    benchmark (`beir_set`, `locomo_set`, `longmemeval_set`) at its own top_k and metrics. The
    replay has no relevance gate, so only the ungated pass runs. DatasetError for a bad run file
    or one that does not match the suite (unknown query or document ids)."""
    run = read_run(run_file, format)
    system = ReplaySystem(run.rankings, run.describe())
    if bench is not None:
        checked = replace(bench, notes=(*bench.notes, *check_run(run, bench.suite)))
        return run_benchmark(checked, config, system=system, progress=progress, **overrides)
    suite = load_suite(datasets)
    settings = _suite_config(datasets, config, **{"gated": False, **overrides})
    notes = (*check_run(run, suite), *replay_notes(datasets))
    return EvalRun(evaluate(suite, system, settings, notes=notes, progress=progress))


def export_trec(report: str | Path | EvalRun, outdir: str | Path) -> tuple[Path, Path, Path]:
    """Write a saved report's (or a run's) ungated pass into `outdir` as `run.trec`,
    `qrels.trec` (graded) and `run.jsonl` (see `evalkit.suites.runfiles.write_trec`); trec_eval,
    ranx and ir_measures read the first two, `score_run` reads either run back."""
    run = report if isinstance(report, EvalRun) else load_run(report)
    return write_trec(run.result, outdir)


def notebook_path(path: str | Path) -> Path:
    """A notebook's path parameter as an absolute path: absolute paths as given, relative ones
    against `notebook_base()` — the project root when the kernel runs inside a project, else the
    kernel's working directory — so a project's notebooks find its suite whether papermill or
    Jupyter starts the kernel in the project root or in `notebooks/`. `evalkit report` makes
    every path absolute (against the directory the command was typed in) before the kernel
    starts. The packaged notebooks' defaults need no folder: None for the built-in suite and its
    baselines, `reports/...` for what a run writes."""
    given = Path(path)
    return given if given.is_absolute() else (notebook_base()[0] / given).resolve()


def notebook_base() -> tuple[Path, str]:
    """What a notebook's relative paths are relative to, and how to say so: the project root —
    the first folder, from the kernel's working directory upwards, holding evalkit.toml or a
    pyproject.toml with [tool.evalkit] (`find_project_file`, as `evalkit run` finds its project)
    — else the working directory itself."""
    found = find_project_file()
    if found is not None:
        return found[0].parent.resolve(), f"the project root (the folder of {found[0].name})"
    return Path.cwd().resolve(), (
        "the kernel's working directory (no evalkit.toml or [tool.evalkit] in it or above it)"
    )


def _suite_folder(given: str | Path) -> Path:
    """A notebook's `datasets` parameter as a folder (`notebook_path`); UsageError when a relative
    one resolves to a folder without `scenarios/`, saying what it was resolved against."""
    folder = notebook_path(given)
    if Path(given).is_absolute() or (folder / "scenarios").is_dir():
        return folder
    base, described = notebook_base()
    raise UsageError(
        f"datasets {str(given)!r}: {folder} holds no scenarios/ folder. A notebook's relative paths are "
        f"relative to {described}, {base}, wherever the kernel starts; set datasets relative to it "
        '("." when the suite is the project folder) or give an absolute path'
    )


def perturbation_curve(
    values: Sequence[int],
    kind: str = "distractors",
    config: RunConfig | None = None,
    *,
    systems: Sequence[MemorySystem | str | None] = (None,),
    datasets: str | Path = DEFAULT_DATASETS,
    seed: int = 0,
    executor: Executor | None = None,
    **overrides: Any,
) -> pd.DataFrame:
    """The harness metrics as a suite's memory grows: one `run_eval` per system and value of
    `kind` ("distractors": N pool distractors per scenario; "stale-repeats": K copies of each
    superseded thought; `evalkit.scenarios.perturb`), all drawn with `seed`, so the curve is the
    same on every call.

    Returns a DataFrame with one row per (system, metric) — `system` the system's name, `metric`
    each of `HARNESS_METRICS`, then each behaviour metric the suite scores at every value — and
    one column per value, in the order given (the columns' name is `kind`), holding the overall
    mean of the measurement (ungated) pass (`evalkit.views.frames.curve_frame` of
    `measure_curve`'s record). Value 0 is the unperturbed suite. `systems` are system objects
    or specs (None = `config.system`); a larger N keeps every distractor of a smaller one, so
    the curve grows one memory. `perturbation_chart` (`evalkit.views.charts`) draws it.
    UsageError for an unknown kind, no values, a value given twice, below 0 or above the pool's
    size, before anything runs.
    """
    spec = CurveSpec(kind, tuple(values), seed)
    curve = measure_curve(spec, config, systems=systems, datasets=datasets, executor=executor, **overrides)
    return curve_frame(curve)


def measure_curve(
    spec: CurveSpec,
    config: RunConfig | None = None,
    *,
    systems: Sequence[MemorySystem | str | None] = (None,),
    datasets: str | Path = DEFAULT_DATASETS,
    scenarios: Sequence[str] | None = None,
    executor: Executor | None = None,
    known: RunResult | None = None,
    **overrides: Any,
) -> PerturbationCurve:
    """The perturbation curve `spec` asks for, as the report records it (`PerturbationCurve`):
    one `run_eval` of the suite (`scenarios` of it) per system and value, perturbed, none compared
    with a baseline. `known` is an unperturbed run of the first system with the same settings
    (`run_eval(perturb_curve=...)`'s own run): its means are the value-0 point instead of a run
    again (the same numbers: runs are deterministic)."""
    series: dict[str, dict[str, list[float]]] = {}
    for position, system in enumerate(systems):
        points = []
        for perturbation in spec.perturbations:
            if perturbation.empty and known is not None and position == 0:
                points.append(known)
                continue
            run = run_eval(
                config, datasets=datasets, scenarios=scenarios, system=system,
                perturb=None if perturbation.empty else perturbation, executor=executor, **overrides,
            )  # fmt: skip
            points.append(run.result)
        name = points[0].system
        means = [p.measurement.overall for p in points]
        measured = [m for m in BEHAVIOUR_METRICS if all(m in a.behaviour for a in means)]
        series[name] = {
            **{metric: [a.metrics[metric] for a in means] for metric in HARNESS_METRICS},
            **{metric: [a.behaviour[metric] for a in means] for metric in measured},
        }
    return PerturbationCurve.model_validate(
        {"kind": spec.kind, "seed": spec.seed, "values": list(spec.values), "series": series}
    )


def run_and_load(out: str | Path, *, report_json: str | Path | None = None, **request: Any) -> EvalRun:
    """The run a report notebook shows. With `report_json`: that saved run, as it was (nothing
    runs). Otherwise the run `request` asks for — `RunRequest` fields as the notebooks name them
    (`embedder`, `gated_pass`, `perturb`, `mutants`, ...; None = the default) — is made with
    `run_request`, saved to `out` and loaded back from it, so the notebook shows exactly the file it
    leaves behind. `out`, `report_json`, `datasets` and `thresholds` are notebook paths (see
    `notebook_path`). The mutation suite applies to the reference store only: for another
    `system` it is dropped, and the detection-power section says why. UsageError naming the
    parameter for a bad value or options that do not combine."""
    if report_json is not None:
        return load_run(notebook_path(report_json))
    fields = {name: value for name, value in request.items() if value is not None}
    if isinstance(fields.get("datasets"), str | Path):
        fields["datasets"] = _suite_folder(fields["datasets"])
    if isinstance(fields.get("thresholds"), str | Path) and str(fields["thresholds"]).lower() != NONE:
        fields["thresholds"] = notebook_path(fields["thresholds"])
    if fields.get("system", DEFAULT_SYSTEM) != DEFAULT_SYSTEM:
        fields.pop("mutants", None)
    chosen = RunRequest.checked({**fields, "out": notebook_path(out)}, "notebook")
    return load_run(run_request(chosen).save(notebook_path(out)))


def record_baseline(
    run: EvalRun,
    thresholds: str | Path | None = None,
    *,
    gated: bool = False,
    tolerance: float | None = None,
    category_tolerances: Mapping[str, float] | None = None,
    accept_unstable: bool = False,
    replace: bool = False,
) -> Path:
    """Record `run` in its thresholds file and return the file's path: what
    `evalkit baseline record` does over a saved report (`gated=True`: `--gated`).

    The file is `thresholds`, else the one the run was configured with
    (`run.result.provenance.config.thresholds`). Ungated: the ungated pass becomes the baseline
    of the run's mode and top_k (`harness.baselines.record_baseline`; every other entry kept).
    Gated: the gated pass becomes the gated baseline of its mode, top_k and gate, with recall
    `tolerance` (overall and default per category) and `category_tolerances`, else the replaced
    entry's, else 0.05 (`harness.baselines.record_gated_baseline`). Record a run of the whole
    suite: a run over some scenarios averages other queries than the runs it will be compared with.
    UsageError for tolerances without `gated`, a run configured without a thresholds file and no
    `thresholds`, a file inside the installed evalkit package, a run without a gated pass (gated),
    a category tolerance naming no category of the gated pass; ThresholdsError for an invalid
    existing file; OutputError for a file that cannot be written. A repeated run whose runs
    disagree (`run_eval(repeat=N)`) is a UsageError unless `accept_unstable` (an ungated entry
    then records a note naming the unstable queries). So is replacing an ungated entry recorded
    for another system or on another suite, unless `replace`.
    """
    if not gated and (tolerance is not None or category_tolerances):
        raise UsageError(
            "tolerance and category_tolerances set a gated baseline's tolerances: add gated=True"
        )
    path = thresholds if thresholds is not None else run.result.provenance.config.thresholds
    if path is None:
        raise UsageError(
            "the run was configured without a thresholds file, so there is nowhere to record its baseline; "
            "pass thresholds=PATH"
        )
    if gated:
        return record_gated_baseline(
            path, run.result, tolerance, category_tolerances, accept_unstable=accept_unstable
        )[0]
    return record_mode_baseline(path, run.result, accept_unstable=accept_unstable, replace=replace)


def assert_thresholds(run: EvalRun, fail: bool = True, require_baseline: bool | None = None) -> str:
    """The run's verdict line when it has no regressions; otherwise RegressionError listing every
    regression (followed by the baseline-check-OFF note, if any), or with `fail` False that message
    and "(not raised: ...)" returned instead (`harness.regressions.assert_no_regressions`). The
    report notebook's final cell, so the run's own paths in it are shown relative to where the
    command ran (`evalkit.views.verdict.shown_reason`).

    `require_baseline` as in `RunConfig` (None: on in a CI context, `evalkit.ci`) decides whether
    a run that compared no metric with a baseline fails here, whatever the run was made or saved
    with: None adds that regression in a CI context (and keeps one the run already has), True
    always, False removes it. When it fails so, the message says how to turn it off in the
    notebook's spelling (`-p require_baseline False`)."""
    result = run.result
    not_compared = result.metrics_not_compared
    required = [r for r in result.regressions if r.kind == "baseline"]
    if not_compared is not None and (require_baseline is not None or not required):
        kept = [r for r in result.regressions if r.kind != "baseline"]
        required = missing_baseline(require_baseline, not_compared)
        result = result.model_copy(update={"regressions": [*kept, *required]})
    hint = f"to pass without comparing, say so: {TURN_OFF['papermill']} (papermill or evalkit report)"
    try:  # the report is shared: its paths relative to where the command ran (`shown_reason`)
        return shown_reason(run, assert_no_regressions(result, fail, hint if required else None))
    except RegressionError as exc:
        raise RegressionError(shown_reason(run, str(exc))) from None


def trace_replay(traces_dir: str | Path | None = None, report_json: str | Path | None = None) -> TraceReplay:
    """An imported production replay for the `traces` notebook: the query log of the import
    `traces_dir` (`evalkit import traces --out DIR`) and its scored run — the saved report
    `report_json` when given, else `score_run(DIR/run.jsonl, datasets=DIR)` now (a replay: no
    store is built). `traces_dir` None imports the packaged sample traces (with their label file)
    into a temporary directory first (removed before returning). Paths are notebook paths (see
    `notebook_path`). ReportError for a missing or foreign query log; DatasetError as
    `score_run`."""
    from evalkit.views.traces import TraceReplay, load_trace_queries  # matplotlib: for the notebook only

    if traces_dir is None:
        with tempfile.TemporaryDirectory(prefix="evalkit-traces-") as tmp:
            sample = [SAMPLE_TRACES / "genai_memory.jsonl", SAMPLE_TRACES / "retrieval.json"]
            import_traces(sample, Path(tmp) / "import", labels=SAMPLE_TRACES / "labels.jsonl")
            return trace_replay(Path(tmp) / "import", report_json)
    folder = notebook_path(traces_dir)
    queries, holds_user_text, warnings = load_trace_queries(folder)
    run = (
        load_run(notebook_path(report_json))
        if report_json is not None
        else score_run(folder / TRACE_RUN_FILE, datasets=folder)
    )
    return TraceReplay(queries=queries, holds_user_text=holds_user_text, warnings=warnings, run=run)
