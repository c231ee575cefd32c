"""Child processes that die with evalkit: `guarded(argv)` is `argv` behind a small launcher
that, on Linux, asks the kernel to kill the child (SIGKILL) when the thread that started it
ends, that is when evalkit is gone however it ended (even SIGKILL, which runs no cleanup), then
execs `argv` (same pid, same pipes, same process group). Elsewhere `argv` is returned as is.

The launcher is `python -I -S -c GUARD PARENT_PID ARGV…`, not `preexec_fn`, which Python
documents as unsafe in a process with threads. It exits at once (status 1) when the parent died
before the guard was set, and with status 127 and one line on stderr when `argv` cannot be
executed. The kernel's notion of the parent is the *thread* that started the child: start a
guarded child from a thread that outlives it (the MCP session's event-loop thread does).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

GUARD = (
    "import ctypes, os, signal, sys\n"
    f"ctypes.CDLL(None, use_errno=True).prctl({PR_SET_PDEATHSIG}, signal.SIGKILL)\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os._exit(1)  # the parent died before the guard was set\n"
    "try:\n"
    "    os.execvp(sys.argv[2], sys.argv[2:])\n"
    "except OSError as exc:\n"
    "    sys.stderr.write(f'cannot run {sys.argv[2]!r}: {exc}\\n')\n"
    "    os._exit(127)\n"
)
"""The launcher's code: die with the parent, then become `argv` (the death signal survives exec)."""


def guarded(argv: Sequence[str]) -> list[str]:
    """`argv` behind the launcher on Linux (the child dies with this process); `argv` elsewhere."""
    if not sys.platform.startswith("linux"):
        return list(argv)
    return [sys.executable, "-I", "-S", "-c", GUARD, str(os.getpid()), *argv]
