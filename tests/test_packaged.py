"""evalkit.packaged: the top-level datasets/ and notebooks/ of a checkout, or their copies mapped
into an installed wheel (evalkit/data/...), are found from the package folder; an unrelated
folder of the same name is never taken for them. tests/test_wheel.py checks the installed side."""

from __future__ import annotations

import tomllib
from pathlib import Path

from evalkit import packaged
from evalkit.packaged import evalkit_version, shipped_folder
from tests.shared import ROOT


def _file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x", encoding="utf-8")
    return path


def test_this_checkout_reads_its_top_level_datasets_and_notebooks() -> None:
    assert packaged.PACKAGE == ROOT / "evalkit"
    assert packaged.BUILTIN_DATASETS == ROOT / "datasets"
    assert packaged.BUILTIN_THRESHOLDS == ROOT / "datasets" / "thresholds.json"
    assert packaged.NOTEBOOKS == ROOT / "notebooks"
    assert packaged.TEMPLATES == ROOT / "evalkit" / "data" / "templates"
    assert not (ROOT / "evalkit" / "data" / "datasets").exists()
    assert not (ROOT / "evalkit" / "data" / "notebooks").exists()


def test_the_installed_version_is_that_of_the_evalkit_memory_distribution() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert packaged.DISTRIBUTION == project["name"] == "evalkit-memory"
    assert evalkit_version() == project["version"]


def test_the_packaged_copy_wins_over_a_folder_beside_the_package(tmp_path: Path) -> None:
    package = tmp_path / "site-packages" / "evalkit"
    _file(package / "data" / "datasets" / "suite.yaml")
    _file(tmp_path / "site-packages" / "datasets" / "suite.yaml")
    assert shipped_folder(package, "datasets", "suite.yaml") == package / "data" / "datasets"


def test_a_checkout_without_a_packaged_copy_reads_its_top_level_folder(tmp_path: Path) -> None:
    package = tmp_path / "checkout" / "evalkit"
    _file(package / "__init__.py")
    _file(tmp_path / "checkout" / "notebooks" / "eval_report.ipynb")
    assert shipped_folder(package, "notebooks", "eval_report.ipynb") == tmp_path / "checkout" / "notebooks"


def test_an_unrelated_folder_of_the_same_name_is_not_taken(tmp_path: Path) -> None:
    package = tmp_path / "site-packages" / "evalkit"
    _file(package / "__init__.py")
    _file(tmp_path / "site-packages" / "datasets" / "__init__.py")  # the `datasets` library
    assert shipped_folder(package, "datasets", "suite.yaml") == package / "data" / "datasets"


def test_installed_package_files_are_told_from_checkout_files(tmp_path: Path, monkeypatch) -> None:
    assert not packaged.inside_installed_package(packaged.BUILTIN_THRESHOLDS)
    installed = tmp_path / "lib" / "site-packages" / "evalkit"
    monkeypatch.setattr(packaged, "PACKAGE", installed)
    assert packaged.inside_installed_package(installed / "data" / "datasets" / "thresholds.json")
    assert not packaged.inside_installed_package(tmp_path / "project" / "thresholds.json")
