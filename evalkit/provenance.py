"""Where a result came from: evalkit version, git commit and dirty flag, Python and package
versions, dataset digest and the system under test. Recorded in every report."""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

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


def git_state(directory: str | Path = ".") -> dict[str, Any]:
    """{"commit": sha or None, "dirty": bool or None} of the repository holding `directory`."""
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
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(status.strip())}


def collect(dataset_digest: str, system: dict[str, Any], embedder: dict[str, Any]) -> dict[str, Any]:
    """The provenance block of a report."""
    return {
        "evalkit_version": evalkit_version(),
        "git": git_state(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "packages": package_versions(),
        "dataset_digest": dataset_digest,
        "system": system,
        "embedder": embedder,
    }
