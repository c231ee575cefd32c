"""The fault matrix's working directory fixture."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.fault_matrix.common import TINY
from tests.shared import DATASETS


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding `data/` (the tiny scenario), `data/thresholds.json` (the
    built-in deterministic baseline) and `reports/`; temp files of the process go to `tmp/`."""
    (tmp_path / "data" / "scenarios").mkdir(parents=True)
    (tmp_path / "data" / "scenarios" / "tiny.yaml").write_text(TINY)
    (tmp_path / "data" / "thresholds.json").write_bytes((DATASETS / "thresholds.json").read_bytes())
    (tmp_path / "reports").mkdir()
    (tmp_path / "tmp").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return tmp_path
