"""Signals (subprocesses):
Ctrl-C and SIGTERM exit 130/143 with no traceback, removing the stores and writing nothing.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import started
from tests.shared import ROOT

# --- signals (subprocesses) ------------------------------------------------------------------------


def _big_dataset(folder: Path, thoughts: int = 4000) -> None:
    (folder / "scenarios").mkdir(parents=True)
    scenario = {
        "name": "big",
        "category": "explicit-fact",
        "distractors": False,
        "thoughts": [
            {"id": f"t{i}", "content": f"note {i} on topic {i % 97} of service {i % 13}"}
            for i in range(thoughts)
        ],
        "queries": [{"query": f"topic {i}", "relevant": [f"t{i}"]} for i in range(20)],
    }
    (folder / "scenarios" / "big.json").write_text(json.dumps(scenario))


def _child_env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp), "EVALKIT_FORBID_SKIPS": ""}


def _wait_for(pattern: str, folder: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not list(folder.glob(pattern)):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the child never got that far"
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("signum", "expected", "word"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
def test_signal_during_a_run_removes_the_stores_and_writes_nothing(
    tmp_path: Path, signum, expected, word
) -> None:
    _big_dataset(tmp_path / "data")
    (tmp_path / "tmp").mkdir()
    argv = [
        "run",
        "--datasets",
        "data",
        "--thresholds",
        "none.json",
        "--out",
        "r.json",
        "--gated-pass",
        "off",
    ]
    with started(
        [sys.executable, "-m", "evalkit", *argv], cwd=tmp_path, env=_child_env(tmp_path / "tmp"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as child:  # fmt: skip
        _wait_for("evalkit-*", tmp_path / "tmp", child)  # a scenario's store is open
        child.send_signal(signum)
        out, err = child.communicate(timeout=60)
    assert child.returncode == expected, err
    assert word in err and "Traceback" not in err and out == ""
    assert list((tmp_path / "tmp").iterdir()) == []
    assert not (tmp_path / "r.json").exists()


_IMPORT_INTERRUPT = """
import os, signal, sys
import evalkit.cli
assert "numpy" not in sys.modules, "the entry point must not import the heavy modules"
class Hook:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":  # the run's command module loads it (the hashing embedder, the store)
            os.kill(os.getpid(), signal.{signal})
        return None
sys.meta_path.insert(0, Hook())
sys.exit(evalkit.cli.main(["run", "--gated-pass", "off"]))
"""


@pytest.mark.parametrize(("name", "expected"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_signal_while_the_cli_is_importing_prints_no_traceback(
    tmp_path: Path, name: str, expected: int
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_INTERRUPT.replace("{signal}", name)],
        cwd=tmp_path, env=_child_env(tmp_path), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == expected, done.stderr
    assert done.stderr.startswith("evalkit: ") and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("signals", "expected", "message"),
    [
        ((signal.SIGINT, signal.SIGINT), 130, "evalkit: interrupted\n"),
        ((signal.SIGTERM,), 143, "evalkit: terminated (SIGTERM)\n"),
    ],
    ids=["two-ctrl-c", "sigterm"],
)
def test_signal_during_report_leaves_no_kernel_files_or_stores(
    tmp_path: Path, signals: tuple[int, ...], expected: int, message: str
) -> None:
    """As a terminal (or CI) does: signals to the process group while the notebook's run is seeding."""
    (tmp_path / "tmp").mkdir()
    with started(
        [sys.executable, "-m", "evalkit", "report", "--out-dir", str(tmp_path / "out"), "--no-progress"],
        cwd=ROOT, env=_child_env(tmp_path / "tmp"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    ) as child:  # fmt: skip
        _wait_for("evalkit-notebook-*/tmp/evalkit-*", tmp_path / "tmp", child)
        for signum in signals:
            if child.poll() is None:
                os.killpg(child.pid, signum)
                time.sleep(0.3)
        out, err = child.communicate(timeout=60)
    assert child.returncode == expected, err
    assert err == message and out == ""  # no traceback, no [IPKernelApp] noise
    time.sleep(0.5)  # the kernel notices its parent left
    assert list((tmp_path / "tmp").iterdir()) == []
    assert not (tmp_path / "out").exists()
