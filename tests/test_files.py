"""Atomic writes: content replaced whole, permissions like a plain open(), no temp file left."""

from __future__ import annotations

import os
import stat

import pytest

from evalkit.files import write_atomic


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
