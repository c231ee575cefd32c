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

from pydantic import Field

from evalkit.embedders.factory import EmbedderInfo
from evalkit.harness.config import RunConfig
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


def evalkit_version() -> str:
    """The installed evalkit version ("unknown" when run from a source tree without install)."""
    try:
        return metadata.version("evalkit")
    except metadata.PackageNotFoundError:
        return "unknown"


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


class Provenance(FrozenModel):
    """What produced a run. `system` is the system's own `describe()`; `embedder` describes the
    embedder evalkit built for the reference store (None when the system embeds by itself).
    `dataset_files` is the suite's `Suite.file_digests` (relative path → sha256; empty in
    reports written before it was recorded, and for suites built from other inputs): what a
    baseline recorded from this run fingerprints its suite with."""

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
) -> Provenance:
    """The provenance of a run made now, from the working directory. Credentials in a system
    URL (`http://user:pass@host`) are redacted: a report is shared, its secrets would be too."""
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
    )
