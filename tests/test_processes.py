"""tests/processes.py: a test's child process ends with the test, and with the test process (Linux)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.processes import read_line, started
from tests.shared import ROOT

_PARENT = """
import subprocess, sys
from tests.processes import started
with started([sys.executable, "-c", "import time; time.sleep(600)"]) as child:
    print(child.pid, flush=True)
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie (exited, not yet reaped by init) is gone too
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_child_dies_with_its_test_process_even_when_that_is_killed():
    """`kill -9` of an xdist worker once left an `evalkit serve --port 0` running with parent 1."""
    code = "import time\n" + _PARENT
    with started(
        [sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ) as parent:  # fmt: skip
        grandchild = int(read_line(parent.stdout))
        assert _alive(grandchild)
        parent.send_signal(signal.SIGKILL)  # no finally, no atexit: only the kernel can clean up
        parent.wait(timeout=30)
    assert _gone_within(grandchild, 10)


def test_a_child_still_running_when_the_test_ends_is_stopped():
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
    with (
        pytest.raises(AssertionError, match=r"printed no line within 0\.5 s"),
        started(sleeper, stdout=subprocess.PIPE) as child,
    ):
        read_line(child.stdout, timeout=0.5)
    assert child.returncode == -signal.SIGTERM
