"""Child processes of tests that end with the test, however the test ends.

`started(argv, **popen)` is `subprocess.Popen` as a context manager. On exit (the test passed,
failed, or was stopped by the per-test timeout, which raises in the test under pytest-timeout's
signal method) a child still running gets SIGTERM, then SIGKILL after `STOP_TIMEOUT` seconds, and
is reaped. On Linux the kernel also kills the child (SIGKILL) when the
test process dies first (`prctl(PR_SET_PDEATHSIG)`), so a test process killed from outside — an
xdist worker killed by hand — leaves no orphan behind it, such as the `evalkit serve --port 0` once
found with parent 1. That is set by evalkit's own launcher (`evalkit.systems.mcp.processes.guarded`,
which evalkit's MCP servers run behind). The kernel's notion of the parent is the *thread* that
started the child: start children from the test's own thread, never from a helper thread that
ends before them.

`read_line(stream, timeout)`: the next line of a child's pipe, or AssertionError after `timeout`
seconds (a bare `readline()` waits for ever when the child hangs before printing).
"""

from __future__ import annotations

import contextlib
import queue
import signal
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

from evalkit.systems.mcp.processes import guarded

STOP_TIMEOUT = 10.0
"""Seconds a child gets to exit after SIGTERM before it is killed."""


@contextmanager
def started(argv: Sequence[str], **popen: Any) -> Iterator[subprocess.Popen[Any]]:
    """`subprocess.Popen(argv, **popen)` that dies with this process and is stopped on exit."""
    child = subprocess.Popen(guarded(argv), **popen)
    try:
        yield child
    finally:
        stop(child)


def stop(child: subprocess.Popen[Any]) -> None:
    """SIGTERM, SIGKILL after `STOP_TIMEOUT` s, reap. Safe on a child that has exited. Its stdin is
    closed; stdout and stderr are left to the garbage collector, since closing a pipe blocks while a
    `read_line` thread still reads it (a grandchild can hold it open)."""
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    if child.stdin is not None:
        with contextlib.suppress(OSError):  # unread input to a child that exited: nothing to keep
            child.stdin.close()


def read_line(stream: IO[Any] | None, timeout: float = 60.0) -> Any:
    """The next line of `stream` (a child's pipe; "" at its end); AssertionError when no line comes
    within `timeout` seconds. The read runs on a daemon thread, which ends at the pipe's end (when
    the child exits, at the latest)."""
    assert stream is not None, "the child was started without this pipe"
    lines: queue.Queue[Any] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"the child printed no line within {timeout:g} s") from None
