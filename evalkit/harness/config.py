"""One run's settings: `RunConfig`, validated once, passed whole, recorded in the report.

Every run — `evalkit run`, `bench`, `mutants`, the notebooks, the Python API — is described by a
RunConfig and goes through `evalkit.harness.evaluate.evaluate`. A new option is one field here
plus the place that uses it. Constructing a RunConfig with a bad value raises UsageError naming
the field and the fix (see `evalkit.validation.CheckedModel`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import BeforeValidator, Field, field_validator, model_validator

from evalkit.memory.options import DEFAULT_STORE_OPTIONS, StoreOptions
from evalkit.metrics import parse_metrics
from evalkit.packaged import BUILTIN_DATASETS, BUILTIN_THRESHOLDS
from evalkit.records import MAX_TOP_K
from evalkit.systems.resolve import DEFAULT_SYSTEM
from evalkit.validation import CheckedModel, one_of

Mode = Literal["deterministic", "real"]
MODES: tuple[str, ...] = get_args(Mode)
"""Embedder modes: `deterministic` (feature hashing, offline, identical everywhere) or `real`
(a sentence-transformers model). A mode also keys the baselines in the thresholds file."""

SYSTEM_MODE = "system"
"""The mode of a run whose system embeds by itself (it declares `own_embedder`): evalkit's
embedder mode does not apply to it, and its baselines are keyed apart."""

BASELINE_MODES: tuple[str, ...] = (*MODES, SYSTEM_MODE)
"""The modes a run can have, and so the modes that key baselines."""

DEFAULT_TOP_K = 5
"""Results per query when a run does not choose (and the top_k of the built-in baselines)."""

DEFAULT_DATASETS = BUILTIN_DATASETS
"""The scenario directory a run reads unless told otherwise: the built-in suite (package data)."""

DEFAULT_THRESHOLDS = BUILTIN_THRESHOLDS
"""The baselines file a run gates on unless told otherwise: the built-in suite's."""


def _not_a_bool(value: object) -> object:
    """A before-validator: True and False are not integers here (pydantic takes True as 1, so
    `run_eval(top_k=True)` ran at top_k 1)."""
    if isinstance(value, bool):
        raise ValueError(f"expected an integer, got the boolean {value}")
    return value


class RunConfig(CheckedModel):
    """How one run is made and judged.

    - `mode`, `model`, `embedding_cache`, `use_cache`: the embedder. `model` (real mode only) is a
      sentence-transformers name or local path, None = the packaged all-MiniLM-L6-v2;
      `embedding_cache` (real mode only) is the cache file, None = the default location;
      `use_cache` False embeds everything afresh.
    - `system`: the system under test by spec (`evalkit.systems.resolve`; the default,
      `DEFAULT_SYSTEM`, is evalkit's reference store, built with `store` options). A Python
      object passed to the library instead is named by its own `name`.
    - `top_k`: results per query for queries without their own (1..MAX_TOP_K).
    - `gated`: also run the report-only pass under the relevance gate; `min_relevance`: its gate
      (None = the system's default, 0.4 for the reference store).
    - `metrics`: IR metrics computed per query beside the harness metrics, as `name@k` labels
      (benchmarks: `ndcg@10`, ...).
    - `thresholds`: the baselines file that the baseline check reads, None = no baselines (benchmarks,
      `--thresholds none`): metrics are not compared and the verdict is NOT COMPARED at best; a
      missing file turns the baseline check off with a note.
    - `require_baseline`: the baseline check turned off (no file, no entry for this mode and top_k,
      scenarios selected by name) is a regression instead of a note, so CI cannot pass ungated.
      None (the default) means on in a CI context (`evalkit.ci`), off elsewhere; False
      turns it off in CI too.
    """

    mode: Annotated[Mode, BeforeValidator(one_of("embedder mode", MODES))] = "deterministic"
    model: str | None = None
    embedding_cache: Path | None = None
    use_cache: bool = True
    system: str = DEFAULT_SYSTEM
    store: StoreOptions = DEFAULT_STORE_OPTIONS
    top_k: Annotated[int, BeforeValidator(_not_a_bool)] = Field(default=DEFAULT_TOP_K, ge=1, le=MAX_TOP_K)
    gated: bool = True
    min_relevance: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    metrics: tuple[str, ...] = ()
    thresholds: Path | None = DEFAULT_THRESHOLDS
    require_baseline: bool | None = None

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, labels: tuple[str, ...]) -> tuple[str, ...]:
        """Canonical labels (`NDCG@10` → `ndcg@10`); an unknown metric raises UsageError."""
        return tuple(spec.label for spec in parse_metrics(",".join(labels))) if labels else ()

    @model_validator(mode="after")
    def _embedder_options_need_real_mode(self) -> RunConfig:
        if self.mode != "real" and self.model is not None:
            raise ValueError(f"model {self.model!r} needs mode 'real'; the deterministic mode uses no model")
        if self.mode != "real" and self.embedding_cache is not None:
            raise ValueError("embedding_cache needs mode 'real'; the deterministic mode caches nothing")
        return self
