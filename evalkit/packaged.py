"""Files that ship with evalkit, and the name it is installed under.

The built-in suite (`datasets/`: scenarios, distractors, suite categories, thresholds) and the
report notebooks (`notebooks/`) live at the top of the repository, their source of truth; the
wheel build maps them into the package as `evalkit/data/datasets/` and `evalkit/data/notebooks/`
(pyproject.toml, `[tool.hatch.build.targets.wheel.sources]`). The `evalkit init` templates live
in the package (`evalkit/data/templates/`). Every command thus works from any directory, both in
a source checkout (editable install) and after `pip install evalkit-memory`.

Where each folder is found: the packaged copy when it is there (an installed wheel), else the
checkout's top-level folder (the package's parent folder). A folder counts as present only when
the file that defines it is there (`suite.yaml`, `eval_report.ipynb`), so an unrelated folder of
the same name beside an installed package (site-packages/datasets/ of the `datasets` library) is
never taken for it; when neither copy is there, the packaged path is returned and reading it fails
naming that path.

Edge case: evalkit reads these as real files (papermill opens notebooks by path, the suite loader
walks a directory), so evalkit must be installed as files, not imported from a zip archive; the
paths below then point into the installed package (read-only in a system site-packages: nothing
writes there).
"""

from __future__ import annotations

import sys
from pathlib import Path

DISTRIBUTION = "evalkit-memory"
"""The distribution name (`pip install evalkit-memory`; PyPI's `evalkit` is an unrelated project).
The import package and the command are `evalkit`."""


def evalkit_version() -> str:
    """The installed evalkit version, that of the `evalkit-memory` distribution ("unknown" when run
    from a source tree without install). importlib.metadata is imported here, by the one caller
    that needs it: every command pays for this module, only `--version` and a report for this."""
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


PACKAGE = Path(__file__).parent
"""The `evalkit` package folder: `evalkit/` in a checkout, `site-packages/evalkit/` installed (what
`importlib.resources.files("evalkit")` answers for a package installed as files, without loading
importlib.resources at every start)."""

DATA = PACKAGE / "data"
"""The package data folder: the templates, and in an installed wheel the datasets and notebooks."""


def shipped_folder(package: Path, name: str, defining_file: str) -> Path:
    """Where the folder `name` of the `package` folder's evalkit is: `package/data/<name>` when it
    holds `defining_file` (an installed wheel), else `<package's parent>/<name>` when that does (a
    source checkout), else the packaged path (see the module docstring)."""
    packaged, checkout = package / "data" / name, package.parent / name
    if not (packaged / defining_file).is_file() and (checkout / defining_file).is_file():
        return checkout
    return packaged


BUILTIN_DATASETS = shipped_folder(PACKAGE, "datasets", "suite.yaml")
"""The built-in scenario suite: `scenarios/`, `distractors.yaml`, `suite.yaml`, `thresholds.json`,
and `mcp/` (the MCP mapping of the reference server)."""

BUILTIN_SUITE = "built-in"
"""The built-in suite's name where a folder would be: `Provenance.datasets` of a run on it, and
the `--datasets` value that asks for it."""

THRESHOLDS_NAME = "thresholds.json"
"""File name of the baselines file inside a dataset directory (`--datasets DIR` → DIR/thresholds.json)."""

BUILTIN_THRESHOLDS = BUILTIN_DATASETS / THRESHOLDS_NAME
"""The built-in suite's recorded baselines."""

NOTEBOOKS = shipped_folder(PACKAGE, "notebooks", "eval_report.ipynb")
"""The report notebooks (`eval_report.ipynb`, `scenario_drilldown.ipynb`, `compare_runs.ipynb`)."""

SAMPLE_TRACES = DATA / "traces"
"""A sample of OpenTelemetry traces (`genai_memory.jsonl`, `retrieval.json`) and a label file
(`labels.jsonl`), the same as tests/fixtures/traces/: the `traces` notebook's default."""

TEMPLATES = DATA / "templates"
"""The files `evalkit init` writes into a new evaluation project."""


def inside_installed_package(path: Path) -> bool:
    """Whether `path` is a file of an installed evalkit (under a `site-packages` or `dist-packages`
    folder) rather than a file of a source checkout: such files belong to the installation, and a
    pip upgrade replaces them."""
    package = PACKAGE.resolve()
    installed = not {"site-packages", "dist-packages"}.isdisjoint(package.parts)
    return installed and path.resolve().is_relative_to(package)


def forget_namespace_datasets() -> None:
    """Drop a namespace package `datasets` from `sys.modules`. Importing sentence-transformers
    from a source checkout's root (on `sys.path` under `python -m` or pytest) imports the
    repository's data folder `datasets/`, which has no `__init__.py`, as a namespace package
    named `datasets`; libraries that test `"datasets" in sys.modules` for Hugging Face's package
    (lancedb) then fail importing `Dataset` from it. Hugging Face's `datasets` is a regular
    package (it has a `__file__`) and is never dropped; nothing happens when none is imported."""
    module = sys.modules.get("datasets")
    if module is not None and getattr(module, "__file__", None) is None:
        del sys.modules["datasets"]
