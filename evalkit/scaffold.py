"""`evalkit init`: scaffold a user's evaluation project from the packaged templates.

The templates (`evalkit/data/templates/`, see `evalkit.packaged.TEMPLATES`) mirror the project
they make: `evalkit.toml` (the settings: the suite is the project folder itself), `suite.yaml`
(the suite's own categories), `scenarios/example.yaml` (a short annotated scenario),
`thresholds.json` (no baseline yet), `github/workflows/evalkit.yml` (written as
`.github/workflows/evalkit.yml`: package data avoids dot-folders) and `EVALKIT.md` (a README
snippet). `@evalkit_pin@` in a template becomes `==<version>` of the evalkit that writes it, so
the workflow installs that version (nothing when the version is unknown: a source tree).

Contract of `init_project`: an existing file is never
overwritten unless `force` is true: without it, UsageError lists every file that exists (and
nothing is written). Other files in the folder are left alone. `evalkit run` inside the new
folder works at once (metric gating is OFF until a baseline is recorded, and says so).
"""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import UsageError
from evalkit.files import write_atomic
from evalkit.packaged import TEMPLATES

PIN_MARK = "@evalkit_pin@"
"""Replaced by `==<version>` (or nothing) in every template."""

_RENAMED_PARTS = {"github": ".github"}
"""Template path parts written under another name (package data keeps no dot-folders)."""


def template_files() -> dict[Path, Path]:
    """Project-relative path → template file, for every template, in path order."""
    found = sorted(p for p in TEMPLATES.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return {
        Path(*(_RENAMED_PARTS.get(part, part) for part in p.relative_to(TEMPLATES).parts)): p for p in found
    }


def init_project(directory: str | Path, version: str | None, force: bool = False) -> list[Path]:
    """Write the templates into `directory` (created if missing) and return the written paths;
    `version` is the evalkit version the workflow pins (None: unpinned). UsageError naming every
    existing file when any would be overwritten and `force` is false, or when `directory` is an
    existing file."""
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} is a file; evalkit init needs a folder (new or existing)")
    planned = {root / relative: template for relative, template in template_files().items()}
    existing = [str(path) for path in planned if path.exists()]
    if existing and not force:
        raise UsageError(
            f"evalkit init would overwrite {', '.join(existing)}; nothing was written. Pass --force "
            "to overwrite them, or choose another folder"
        )
    pin = f"=={version}" if version else ""
    for target, template in planned.items():
        write_atomic(target, template.read_text(encoding="utf-8").replace(PIN_MARK, pin))
    return list(planned)
