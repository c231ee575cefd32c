"""Thresholds files: bad, unreadable or unwritable ones exit 2 and are never replaced;
concurrent updates all survive.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from evalkit.harness.thresholds_file import ModeEntry, load_thresholds, update_thresholds
from tests.fault_matrix.common import (
    assert_refused,
    cli,
    run_args,
    snapshot,
)
from tests.shared import DATASETS

# --- thresholds files ----------------------------------------------------------------------------

BAD_THRESHOLDS: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "not-json": (b"{nope", ("is not valid JSON (line 1", "`evalkit baseline record`")),
    "wrong-schema": (b'{"deterministic": {"top_k": 5}}', ("does not match the schema", "recorded_at")),
    "not-utf8": (b'{"x": "\xff"}', ("is not UTF-8",)),
    "metric-out-of-range": (
        json.dumps(
            {
                "deterministic": {
                    **json.loads((DATASETS / "thresholds.json").read_text())["deterministic@5"],
                    "top_k": 0,
                }
            }
        ).encode(),
        ("deterministic.top_k",),
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_THRESHOLDS))
@pytest.mark.parametrize("record", [False, True], ids=["gate", "record"])
def test_bad_thresholds_file_exits_2_and_is_never_replaced(ws: Path, capsys, case: str, record: bool) -> None:
    content, needles = BAD_THRESHOLDS[case]
    if record:  # a report of a run checked against a good file, recorded after the file went bad
        assert cli(capsys, *run_args())[0] == 0
    (ws / "data" / "thresholds.json").write_bytes(content)
    before = snapshot(ws / "data")
    code, _, err = cli(capsys, *(["baseline", "record"] if record else run_args()))
    assert_refused(code, err, "data/thresholds.json", *needles)
    assert snapshot(ws / "data") == before


@pytest.mark.parametrize("kind", ["directory", "named pipe"])
def test_thresholds_path_that_is_not_a_file_exits_2(ws: Path, capsys, kind: str) -> None:
    path = ws / "data" / "thresholds.json"
    path.unlink()
    path.mkdir() if kind == "directory" else os.mkfifo(path)
    code, _, err = cli(capsys, *run_args())
    assert_refused(
        code, err, "cannot read thresholds file data/thresholds.json", f"{kind}, not a regular file"
    )


def test_read_only_thresholds_file_is_refused(ws: Path, capsys) -> None:
    path = ws / "data" / "thresholds.json"
    path.chmod(0o444)
    assert cli(capsys, *run_args())[0] == 0
    before = snapshot(ws)
    code, out, err = cli(capsys, "baseline", "record")
    assert_refused(code, err, "data/thresholds.json is read-only", "chmod u+w")
    assert out == "" and snapshot(ws) == before


def test_thresholds_under_an_unwritable_folder_is_refused(
    ws: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = ws / "locked"
    folder.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: Path(p).resolve() != folder and real_access(p, mode))
    assert cli(capsys, *run_args("--thresholds", "locked/t.json"))[0] == 0
    code, out, err = cli(capsys, "baseline", "record")
    assert_refused(code, err, "the folder locked is not writable")
    assert out == "" and list(folder.iterdir()) == []


def test_update_keeps_the_file_mode_and_removes_stale_temp_files(ws: Path, capsys) -> None:
    path = ws / "data" / "thresholds.json"
    path.chmod(0o640)
    stale = ws / "data" / ".thresholds.json.k1ll3d.tmp"
    stale.write_text("{half a write")
    assert cli(capsys, *run_args())[0] == 0
    code, _, err = cli(capsys, "baseline", "record", "--replace")  # the entry is the built-in suite's
    assert code == 0, err
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in (ws / "data").iterdir()) == ["scenarios", "thresholds.json"]
    assert set(load_thresholds(path) or {}) == {"deterministic@5", "real@5"}


def _update(args: tuple[str, str, dict[str, Any]]) -> None:
    path, mode, entry = args
    update_thresholds(path, mode, ModeEntry.model_validate(entry))


def test_concurrent_updates_of_different_entries_all_survive(tmp_path: Path) -> None:
    """Forty processes record forty (mode, top_k) entries in one file at once: the lock keeps
    every entry, each under its own `mode@top_k` key."""
    entry = json.loads((DATASETS / "thresholds.json").read_text())["deterministic@5"]
    path = tmp_path / "thresholds.json"
    jobs = [
        (str(path), mode, {**entry, "top_k": k}) for mode in ("deterministic", "real") for k in range(1, 21)
    ]
    # not "fork": this test process has threads (an xdist worker's; servers of earlier tests), and
    # a worker forked while one of them held a lock waited for ever (a full run stalled here)
    with multiprocessing.get_context("forkserver").Pool(4) as pool:
        pool.map(_update, jobs)
    expected = [f"{mode}@{k}" for mode in ("deterministic", "real") for k in range(1, 21)]
    assert list(load_thresholds(path) or {}) == expected  # every entry, ordered by mode then top_k
    assert [p.name for p in tmp_path.iterdir()] == ["thresholds.json"]


def test_every_bad_key_of_a_thresholds_file_is_named_at_once(ws: Path, capsys) -> None:
    """Only the first bad key was named; each fix cost a run. Now every key, with "did you mean"."""
    entry = json.loads((DATASETS / "thresholds.json").read_text())["deterministic@5"]
    (ws / "data" / "thresholds.json").write_text(
        json.dumps({"determinstic@5": entry, "real@7": {**entry, "top_k": 5}, "fast@5": entry})
    )
    before = snapshot(ws / "data")
    code, _, err = cli(capsys, *run_args())
    assert_refused(
        code,
        err,
        "data/thresholds.json does not match the schema (3 problems)",
        "  - key 'determinstic@5': unknown mode 'determinstic' (did you mean 'deterministic'?)",
        "  - key 'real@7': the key says top_k 7 but its entry was recorded at top_k 5",
        "  - key 'fast@5': unknown mode 'fast'",
    )
    assert snapshot(ws / "data") == before
