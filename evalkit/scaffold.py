"""`evalkit init`: scaffold a user's evaluation project from the packaged templates.

The templates (`evalkit/data/templates/`, see `evalkit.packaged.TEMPLATES`) mirror the project
they make: `evalkit.toml` (the settings: the suite is the project folder itself), `suite.yaml`
(the suite's own categories), `scenarios/example.yaml` (a short annotated scenario),
`thresholds.json` (no baseline yet), `github/workflows/evalkit.yml` (written as
`.github/workflows/evalkit.yml`: package data avoids dot-folders) and `EVALKIT.md` (a README
snippet); the report notebooks go into `notebooks/` (see `copy_notebooks`), their suite the
project folder. A notebook's relative paths are relative to the project root wherever its kernel
starts (`evalkit.api.notebook_path`), so papermill runs them from the project root or from
`notebooks/` alike. `@evalkit_pin@` in a template becomes `==<version>` of the evalkit that writes it, so
the workflow installs that version (nothing when the version is unknown: a source tree).

`copy_notebooks` (also `evalkit notebooks DIR`) copies the packaged report notebooks into a
folder of the user's, where JupyterLab can open, edit and run them (inside site-packages they are
read-only and hard to find).

Contract of `init_project` and `copy_notebooks`: an existing file is never
overwritten unless `force` is true: without it, UsageError lists every file that exists (and
nothing is written). Every path is checked before any is written: one that `force` cannot
replace (a folder, a pipe, a read-only file) is a UsageError naming each, with nothing written.
Other files in the folder are left alone. `evalkit run` inside the new
folder works at once (the baseline check is OFF until a baseline is recorded, and says so).
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat

from evalkit.errors import OutputError, UsageError, listed
from evalkit.files import check_writable, write_atomic
from evalkit.packaged import NOTEBOOKS, TEMPLATES
from evalkit.parameters import parse_parameters_cell
from evalkit.wording import counted

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


NOTEBOOK_FOLDER = Path("notebooks")
"""Where `evalkit init` puts the report notebooks inside a project."""

PROJECT_DEFAULTS: dict[str, object] = {"datasets": ".", "scenario": "deploy-facts"}
"""Parameter defaults of the notebooks `evalkit init` writes (into `<project>/notebooks/`): the
suite is the project folder (".", relative to the project root like every relative notebook path,
`evalkit.api.notebook_path`), the drill-down opens the example scenario; the packaged `reports/...`
defaults already name the project's reports folder."""


def init_project(directory: str | Path, version: str | None, force: bool = False) -> list[Path]:
    """Write the templates and the report notebooks (`notebooks/`, `PROJECT_DEFAULTS`) into
    `directory` (created if missing) and return the written paths; `version` is the evalkit
    version the workflow pins (None: unpinned). UsageError naming every existing file when any
    would be overwritten and `force` is false, or when `directory` is an existing file."""
    root = _folder(directory, "evalkit init needs a folder (new or existing)")
    pin = f"=={version}" if version else ""
    planned = {
        root / relative: template.read_text(encoding="utf-8").replace(PIN_MARK, pin)
        for relative, template in template_files().items()
    }
    planned |= _notebooks(root / NOTEBOOK_FOLDER, for_project=True)
    return _write(planned, force, "evalkit init")


def copy_notebooks(directory: str | Path, force: bool = False, *, for_project: bool = False) -> list[Path]:
    """Copy the report notebooks into `directory` (created if missing) and return the written
    paths. As packaged (byte for byte), their relative paths (`reports/...`) are relative to the
    project root when `directory` lies in a project, else to the kernel's working folder
    (`directory` in JupyterLab; `evalkit.api.notebook_path`); `for_project` sets the defaults of a
    project's `notebooks/` folder (`PROJECT_DEFAULTS`). The same overwrite contract as
    `init_project`."""
    root = _folder(directory, "give a folder for the notebooks (new or existing)")
    return _write(_notebooks(root, for_project=for_project), force, "evalkit notebooks")


def with_defaults(text: str, source: Path, defaults: dict[str, object]) -> str:
    """The notebook JSON `text` (of the notebook `source`, for messages) with its parameters cell's
    defaults replaced: a parameter named in `defaults` gets that value; other lines and cells are
    left as they are. Values are written as Python literals, keeping each line's annotation and
    help comment."""
    notebook = nbformat.reads(text, as_version=4)
    (cell,) = [c for c in notebook.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    declared = parse_parameters_cell(source, cell.source)
    lines = cell.source.splitlines(keepends=True)
    for node in ast.parse(cell.source).body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name) or node.value is None:
            continue  # parse_parameters_cell accepted only annotated assignments
        parameter = declared[node.target.id]
        if parameter.name not in defaults:
            continue
        value = defaults[parameter.name]
        line = lines[node.lineno - 1].encode("utf-8")  # ast offsets count UTF-8 bytes
        start, end = node.value.col_offset, node.value.end_col_offset
        literal = (
            '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
            if isinstance(value, str)
            else repr(value)
        )
        lines[node.lineno - 1] = (line[:start] + literal.encode("utf-8") + line[end:]).decode("utf-8")
    cell.source = "".join(lines)
    return nbformat.writes(notebook) + "\n"


def _notebooks(folder: Path, for_project: bool) -> dict[Path, str]:
    """Target path → text of each packaged report notebook, in name order."""
    planned = {}
    for source in sorted(NOTEBOOKS.glob("*.ipynb")):
        text = source.read_text(encoding="utf-8")
        planned[folder / source.name] = with_defaults(text, source, PROJECT_DEFAULTS) if for_project else text
    return planned


def _folder(directory: str | Path, need: str) -> Path:
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} is a file; {need}")
    return root


def _write(planned: dict[Path, str], force: bool, command: str) -> list[Path]:
    """Write `planned` (path → text), checking every path before writing any: an existing file
    is refused unless `force`, and a path `force` cannot replace (a folder, a pipe, a read-only
    file, a parent that is a file: `check_writable`) always; one UsageError lists them all."""
    blocked = []
    for path in planned:
        try:
            check_writable(path)
        except OutputError as exc:
            blocked.append(
                f"{path} is a folder, not a file: move it away or choose another folder (--force "
                "replaces files only)"
                if path.is_dir()
                else str(exc)
            )
    if blocked:
        raise UsageError(
            listed(f"{command} cannot write {counted(len(blocked), 'path')}; nothing was written", blocked)
        )
    existing = [str(path) for path in planned if path.exists()]
    if existing and not force:
        raise UsageError(
            f"{command} would overwrite {', '.join(existing)}; nothing was written. Pass --force "
            "to overwrite them, or choose another folder"
        )
    for target, text in planned.items():
        write_atomic(target, text)
    return list(planned)
