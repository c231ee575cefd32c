"""Outputs that fail while being written (full disk and other OSErrors):
exit 2, the old report and every baseline kept.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tests.fault_matrix.common import (
    assert_refused,
    cli,
    run_args,
    snapshot,
)

# --- outputs that fail while being written (full disk and other OSErrors) --------------------------

WRITE_FAILURES = {
    "disk-full": (errno.ENOSPC, "the disk is full; free some space"),
    "quota": (errno.EDQUOT, "the disk quota is exceeded"),
    "permission": (errno.EACCES, "permission denied; choose a writable path"),
    "read-only-fs": (errno.EROFS, "the file system is read-only"),
    "io-error": (errno.EIO, "Input/output error"),
}


def _fail_fsync_of(monkeypatch: pytest.MonkeyPatch, marker: str, code: int) -> None:
    """Make `os.fsync` raise OSError(code) for files whose name contains `marker`."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if marker in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(code, os.strerror(code))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("case", sorted(WRITE_FAILURES))
def test_report_write_failure_exits_2_keeping_the_old_report(
    ws: Path, capsys, monkeypatch, case: str
) -> None:
    code_, reason = WRITE_FAILURES[case]
    report = ws / "reports" / "report.json"
    report.write_text("old report")
    _fail_fsync_of(monkeypatch, ".report.json.", code_)
    code, _, err = cli(capsys, *run_args())
    assert_refused(code, err, "cannot write reports/report.json", reason, "the old file is unchanged")
    assert report.read_text() == "old report"
    assert [p.name for p in (ws / "reports").iterdir()] == ["report.json"]
    assert list((ws / "tmp").iterdir()) == []


@pytest.mark.parametrize("case", ["disk-full", "permission"])
def test_thresholds_write_failure_exits_2_and_loses_no_baseline(
    ws: Path, capsys, monkeypatch, case: str
) -> None:
    code_, reason = WRITE_FAILURES[case]
    before = snapshot(ws / "data")
    _fail_fsync_of(monkeypatch, ".thresholds.json.", code_)
    assert cli(capsys, *run_args())[0] == 0
    code, _, err = cli(capsys, "baseline", "record", "--replace")  # the entry is the built-in suite's
    assert_refused(code, err, "cannot write data/thresholds.json", reason)
    assert snapshot(ws / "data") == before  # no temp file, no lock file, the old baselines
