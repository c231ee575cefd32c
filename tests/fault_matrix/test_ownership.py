"""Bounds and ownership: a command never deletes or replaces what it did not create in the same
run unless told to, and a multi-step write lands whole or not at all.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import errno
import json
import sys
from pathlib import Path

import pytest

from evalkit.errors import OutputError, UsageError
from evalkit.files import replace_parts
from evalkit.suites import trace_import
from evalkit.suites.packs import pack_directory, write_combined
from evalkit.suites.trace_import import import_traces
from tests.fault_matrix.common import FAKE_MCP, assert_refused, cli, snapshot
from tests.shared import DATASETS, FIXTURES

TRACES = FIXTURES / "traces"

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


def _import(capsys, *files: Path) -> tuple[int, str, str]:
    return cli(capsys, "import", "traces", "--out", "imported", *map(str, files))


def test_ctrl_c_in_a_trace_reimport_leaves_the_earlier_import_whole(ws, capsys, monkeypatch):
    """Ctrl-C just after the first file of a re-import left run.jsonl of the new import beside
    queries.json of the old one; now the import lands whole (a sibling folder swapped in) or not
    at all, and its temporary folder is gone."""
    assert _import(capsys, TRACES / "genai_memory.jsonl")[0] == 0
    (ws / "imported" / "scenarios" / "NOTES.md").write_text("mine")
    before = snapshot(ws)
    real, calls = trace_import.write_atomic, []

    def interrupted_after_the_first(path, data, **kw):
        if calls:
            raise KeyboardInterrupt
        calls.append(path)
        return real(path, data, **kw)

    monkeypatch.setattr(trace_import, "write_atomic", interrupted_after_the_first)
    with pytest.raises(KeyboardInterrupt):
        import_traces([TRACES / "retrieval.json"], ws / "imported")
    assert calls and snapshot(ws) == before
    monkeypatch.setattr(trace_import, "write_atomic", real)
    code, _, err = _import(capsys, TRACES / "retrieval.json")
    assert code == 0, err
    log = json.loads((ws / "imported" / "queries.json").read_text())
    assert [s["file"] for s in log["sources"]] == [str(TRACES / "retrieval.json")]
    assert (ws / "imported" / "scenarios" / "NOTES.md").read_text() == "mine"  # the user's note kept
    assert sorted(p.name for p in ws.iterdir()) == sorted(["data", "imported", "reports", "tmp"])


def test_a_failed_swap_puts_every_part_back(tmp_path, monkeypatch):
    target, build = tmp_path / "out", tmp_path / ".out.build"
    for folder, text in ((target, "old"), (build, "new")):
        (folder / "dir").mkdir(parents=True)
        (folder / "a").write_text(text)
        (folder / "dir" / "b").write_text(text)
    real, renames = Path.rename, []

    def failing_third(self, dest):
        renames.append(self)
        if len(renames) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, dest)

    monkeypatch.setattr(Path, "rename", failing_third)
    with pytest.raises(OutputError, match=r"cannot write into .*out: the disk is full.*it is unchanged"):
        replace_parts(build, target, ["a", "dir"])
    assert (target / "a").read_text() == "old" and (target / "dir" / "b").read_text() == "old"


def test_notebooks_force_checks_every_target_before_writing_any(ws, capsys):
    """`notebooks DIR --force` wrote the notebooks before the one that is a folder, then advised
    a file path "e.g. DIR/traces.ipynb/report.json" (advice meant for --out)."""
    (ws / "nb" / "traces.ipynb").mkdir(parents=True)
    before = snapshot(ws)
    code, _, err = cli(capsys, "notebooks", "nb", "--force")
    assert_refused(
        code,
        err,
        "evalkit notebooks cannot write 1 path; nothing was written",
        "nb/traces.ipynb is a folder, not a file: move it away or choose another folder",
    )
    assert "report.json" not in err and snapshot(ws) == before
