"""Files that ship inside the evalkit package, found with `importlib.resources`.

The built-in suite (`data/datasets/`: scenarios, distractors, suite categories, thresholds), the
report notebooks (`data/notebooks/`) and the `evalkit init` templates (`data/templates/`) are
package data, so every command works from any directory after `pip install evalkit`. In a clone
they are the same files under `evalkit/data/`.

Edge case: evalkit reads these as real files (papermill opens notebooks by path, the suite loader
walks a directory), so evalkit must be installed as files, not imported from a zip archive; the
paths below then point into the installed package (read-only in a system site-packages: nothing
writes there).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

DATA = Path(str(resources.files("evalkit").joinpath("data")))
"""The package data folder: `evalkit/data/` in a clone, `site-packages/evalkit/data/` installed."""

BUILTIN_DATASETS = DATA / "datasets"
"""The built-in scenario suite: `scenarios/`, `distractors.yaml`, `suite.yaml`, `thresholds.json`."""

THRESHOLDS_NAME = "thresholds.json"
"""File name of the baselines file inside a dataset directory (`--datasets DIR` → DIR/thresholds.json)."""

BUILTIN_THRESHOLDS = BUILTIN_DATASETS / THRESHOLDS_NAME
"""The built-in suite's recorded baselines."""

NOTEBOOKS = DATA / "notebooks"
"""The report notebooks (`eval_report.ipynb`, `scenario_drilldown.ipynb`)."""

SAMPLE_TRACES = DATA / "traces"
"""A sample of OpenTelemetry traces (`genai_memory.jsonl`, `retrieval.json`) and a label file
(`labels.jsonl`), the same as tests/fixtures/traces/: the `traces` notebook's default."""

TEMPLATES = DATA / "templates"
"""The files `evalkit init` writes into a new evaluation project."""


def inside_installed_package(path: Path) -> bool:
    """Whether `path` is package data of an installed evalkit (under a `site-packages` or
    `dist-packages` folder) rather than a file of a source checkout: such files belong to the
    installation, and a pip upgrade replaces them."""
    data = DATA.resolve()
    installed = not {"site-packages", "dist-packages"}.isdisjoint(data.parts)
    return installed and path.resolve().is_relative_to(data)
