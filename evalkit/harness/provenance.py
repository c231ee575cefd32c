"""Where a result came from: the run's configuration, evalkit version, git commit and dirty flag,
Python and package versions, dataset digest, the system under test and its embedder. Recorded
in every report as a typed `Provenance`."""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from evalkit.embedders.factory import EmbedderInfo
from evalkit.harness.config import RunConfig
from evalkit.harness.request import RunRequest
from evalkit.packaged import evalkit_version
from evalkit.systems.declaration import SystemDeclaration
from evalkit.systems.secrets import redact_url
from evalkit.validation import FrozenModel

PACKAGES: tuple[str, ...] = (
    "numpy",
    "pandas",
    "pydantic",
    "sqlean-py",
    "sqlite-vec",
    "torch",
    "sentence-transformers",
)


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """Installed versions of `names`; packages that are not installed are left out."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


class GitState(FrozenModel):
    """The commit of the repository the run started in and whether tracked files had changes
    (both None outside a git repository)."""

    commit: str | None
    dirty: bool | None


class ComparedScope(FrozenModel):
    """One scope (overall or a category) of the baseline a run's metrics were compared with:
    each harness metric's recorded `baseline` value and its `threshold` (the level below which it
    is a regression), as the thresholds file held them when the run was judged."""

    baseline: dict[str, float]
    threshold: dict[str, float]


class ComparedBaseline(FrozenModel):
    """The baseline entry a run's ungated pass was compared with (`evalkit.harness.evaluate`):
    the thresholds `file`, when the entry was `recorded_at`, the `system` it was recorded for,
    and the compared scopes — `overall` (None when it was not compared: scenarios feeding it
    were not applicable) and the compared `categories`. Kept in the report so a reader sees the
    baseline and the margin to each threshold even after the file moved on."""

    file: str
    recorded_at: str
    system: str
    overall: ComparedScope | None
    categories: dict[str, ComparedScope] = Field(default_factory=dict)


class Provenance(FrozenModel):
    """What produced a run. `system` is the system's own `describe()`; `embedder` describes the
    embedder evalkit built for the reference store (None when the system embeds by itself).
    `dataset_files` is the suite's `Suite.file_digests` (relative path → sha256; empty for
    suites built from other inputs, and in version-2 reports written before it was recorded):
    what a baseline recorded from this run fingerprints its suite with. `declaration` is what the
    system declared about itself (`SystemDeclaration`: capabilities, confidence floor, mutation
    testing). `question_categories` names the suite's question categories
    (`query_category` → name, e.g. LoCoMo's "1" → "multi-hop"; a benchmark import gives them) —
    empty, and left out of the JSON, for other suites. `datasets` (the suite
    folder as given, relative to the working directory when below it; BUILTIN_SUITE for the
    packaged suite; None when not recorded: benchmark imports) and
    `scenarios` (the names selected, empty = all) let a report print the command that reproduces
    its run; `baseline` is the baseline its metrics were compared with (`ComparedBaseline`; None
    when metrics were not compared). `perturbation` is what `evalkit run --perturb` added to the
    suite (`evalkit.scenarios.perturb.Perturbation` as {"distractors": N, "stale_repeats": K,
    "seed": S}; empty for an unperturbed run). `request` is the `RunRequest` the run was made
    from (`evalkit run`, the report notebook, `run_request`; None for a run made otherwise and in
    older reports): the verdict's "Reproduce" lines are printed from it. These are left out of the
    JSON when unset."""

    config: RunConfig
    evalkit_version: str
    git: GitState
    python: str
    platform: str
    packages: dict[str, str]
    dataset_digest: str
    system: dict[str, Any]
    embedder: EmbedderInfo | None
    dataset_files: dict[str, str] = Field(default_factory=dict)
    declaration: SystemDeclaration
    question_categories: dict[str, str] = Field(default_factory=dict)
    datasets: str | None = None
    scenarios: list[str] = Field(default_factory=list)
    baseline: ComparedBaseline | None = None
    perturbation: dict[str, int] = Field(default_factory=dict)
    request: RunRequest | None = None

    @model_serializer(mode="wrap")
    def _omit_absent_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("question_categories", "datasets", "scenarios", "baseline", "perturbation", "request"):
            if not getattr(self, name):
                data.pop(name, None)
        return data


def git_state(directory: str | Path = ".") -> GitState:
    """The commit and dirty flag of the repository holding `directory`."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return GitState(commit=None, dirty=None)
    return GitState(commit=commit, dirty=bool(status.strip()))


def collect(
    config: RunConfig,
    dataset_digest: str,
    system: dict[str, Any],
    embedder: EmbedderInfo | None,
    dataset_files: Mapping[str, str] | None = None,
    *,
    declaration: SystemDeclaration,
) -> Provenance:
    """The provenance of a run made now, from the working directory; `declaration` is what the
    system declared (`evalkit.systems.declaration.declaration_of`). Credentials in a system URL
    (`http://user:pass@host`) are redacted: a report is shared, its secrets would be too."""
    return Provenance(
        config=config.model_copy(update={"system": redact_url(config.system)}),
        evalkit_version=evalkit_version(),
        git=git_state(),
        python=platform.python_version(),
        platform=platform.platform(terse=True),
        packages=package_versions(),
        dataset_digest=dataset_digest,
        system=system,
        embedder=embedder,
        dataset_files=dict(dataset_files or {}),
        declaration=declaration,
    )
