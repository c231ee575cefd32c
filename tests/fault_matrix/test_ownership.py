"""Bounds and ownership: a command never deletes or replaces what it did not create in the same
run unless told to, and a multi-step write lands whole or not at all.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import sys

import pytest

from evalkit.errors import UsageError
from evalkit.suites.packs import pack_directory, write_combined
from tests.fault_matrix.common import FAKE_MCP, assert_refused, cli, snapshot
from tests.shared import DATASETS

PACKS = ["deletion-ghosts", "event-time"]


def test_rebuilding_a_combined_pack_keeps_the_baseline_recorded_there(tmp_path):
    """A two-pack run after --update-baseline deleted that baseline: the folder was rmtree'd."""
    folder = pack_directory(PACKS, tmp_path)
    write_combined(PACKS, folder)
    (folder / "thresholds.json").write_text('{"recorded": "by the user"}')
    (folder / "scenarios" / "stale.yaml").write_text("left by an older evalkit")
    write_combined(PACKS, folder)
    assert (folder / "thresholds.json").read_text() == '{"recorded": "by the user"}'
    assert not (folder / "scenarios" / "stale.yaml").exists()  # the suite itself is rebuilt whole
    assert sorted(p.name for p in folder.iterdir()) == [
        "distractors.yaml",
        "scenarios",
        "suite.yaml",
        "thresholds.json",
    ]


@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_a_combined_pack_path_that_is_a_file_or_a_link_is_refused(tmp_path, kind):
    target = tmp_path / "+".join(PACKS)
    if kind == "file":
        target.write_text("mine")
    else:
        (tmp_path / "elsewhere").mkdir()
        target.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(
        UsageError, match=rf"is a {'file' if kind == 'file' else 'symbolic link'}.*move it away"
    ):
        pack_directory(PACKS, tmp_path)
    assert (target.read_text() == "mine") if kind == "file" else not any((tmp_path / "elsewhere").iterdir())


def test_mcp_inspect_out_never_replaces_a_file_without_force(ws, capsys):
    """`mcp inspect --out FILE` replaced an existing mapping without asking; the check comes
    before the server starts (its pid file is never written)."""
    mine, pidfile = ws / "mine.toml", ws / "server.pid"
    mine.write_text("# my mapping\n")
    server = ["--", sys.executable, str(FAKE_MCP), "ok", str(pidfile)]
    code, _, err = cli(capsys, "mcp", "inspect", "--out", str(mine), *server)
    assert_refused(code, err, "--out", "exists; pass --force to replace it")
    assert mine.read_text() == "# my mapping\n" and not pidfile.exists()
    code, _, err = cli(capsys, "mcp", "inspect", "--out", str(mine), "--force", *server)
    assert code == 0, err
    assert "[search]" in mine.read_text()


def test_a_refused_repeat_recording_writes_nothing(ws, capsys):
    code, _, err = cli(
        capsys, "run", "--datasets", str(DATASETS), "--thresholds", "data/thresholds.json", "--repeat", "2",
        "--system", "tests.systems_fixtures:ShuffledTiesSystem",
    )  # fmt: skip
    assert code in (0, 1), err  # the run's report is written: recording is `evalkit baseline record`
    before = snapshot(ws)
    code, _, err = cli(capsys, "baseline", "record", "--replace")
    assert code == 2 and "evalkit: error: no baseline recorded: the 2 runs disagree" in err, err
    assert "Traceback" not in err and snapshot(ws) == before
