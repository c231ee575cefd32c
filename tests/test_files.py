"""Atomic writes: content replaced whole, permissions like a plain open(), no temp file left; and
how a report shows a path (`shown_path`)."""

from __future__ import annotations

import os
import stat

import pytest

from evalkit.files import WORKDIR_ENV, shown_path, write_atomic


def test_write_atomic_replaces_content_with_normal_permissions(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    write_atomic(target, "first")
    write_atomic(target, b"second")
    assert target.read_text() == "second"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_write_atomic_leaves_the_old_file_and_no_temp_file_on_error(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(TypeError):
        write_atomic(target, 3)  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_path_below_the_working_directory_is_shown_relative_to_it(tmp_path, monkeypatch):
    monkeypatch.delenv(WORKDIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert shown_path(tmp_path / "datasets" / "thresholds.json") == "datasets/thresholds.json"
    assert shown_path(str(tmp_path / "sub" / ".." / "t.json")) == "t.json"
    assert shown_path(tmp_path) == "."
    assert shown_path("/home/runner/work/x/thresholds.json") == "/home/runner/work/x/thresholds.json"
    assert shown_path(f"{tmp_path}-other/t.json") == f"{tmp_path}-other/t.json"  # a prefix is not a parent
    assert shown_path("datasets/t.json") == "datasets/t.json"  # relative: as recorded


def test_the_workdir_variable_names_the_directory_paths_are_shown_relative_to(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(WORKDIR_ENV, str(tmp_path / "project"))
    assert shown_path(tmp_path / "project" / "t.json") == "t.json"
    assert shown_path(tmp_path / "t.json") == str(tmp_path / "t.json")
