"""Units of work for the executor tests, in a module of their own: a worker started by forkserver
or spawn imports the unit's module, and this one imports little."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOCK = threading.Lock()
"""A lock that `needs_the_lock` takes: held by another thread of the caller while its workers
start, it stands for SQLite's, malloc's or an import lock (a forked worker copies it held)."""


def sleep_then_return(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def needs_the_lock(n: int) -> int:
    """`n`, once this process's `LOCK` is free (for ever in a worker that copied it held)."""
    with LOCK:
        return n


def environment_variable(name: str) -> str | None:
    return os.environ.get(name)


def imported(name: str) -> bool:
    """Whether the module `name` was in this process before this unit ran (this module imports
    nothing of evalkit)."""
    return name in sys.modules


@dataclass(frozen=True)
class RecordingLoads:
    """`fn`, in a process whose `sentence_transformer._load` first appends the process's pid to
    `log` on every model load: how a test counts the loads of workers that do not share its
    memory (a monkeypatch in the test process reaches no worker started by the forkserver)."""

    fn: Callable[[Any], Any]
    log: Path

    def __call__(self, unit: Any) -> Any:
        from evalkit.embedders import sentence_transformer

        load = sentence_transformer._load
        if getattr(load, "recording", None) != self.log:

            def recording_load(*args: Any, **kwargs: Any) -> Any:
                with self.log.open("a") as out:
                    out.write(f"{os.getpid()}\n")
                return load(*args, **kwargs)

            recording_load.recording = self.log  # type: ignore[attr-defined]
            sentence_transformer._load = recording_load  # type: ignore[assignment]
        return self.fn(unit)


def _finalized(folder: Path) -> None:
    (folder / f"finalized-{os.getpid()}").write_text("")


def interrupted_late(job: tuple[int, str]) -> int:
    """Job (0, folder) returns once job (1, folder) has started, so the two run on two workers,
    and its worker then waits for a next unit. Job 1 waits for Ctrl-C, then takes a second to
    clean up (as an interrupted MCP scenario drops its namespace on the server) before its
    KeyboardInterrupt goes on. Each worker marks in `folder` the job it ran (`job-N-PID`) and,
    from a `multiprocessing.util.Finalize` (as an MCP system stops its servers), that it ended
    cleanly (`finalized-PID`)."""
    import multiprocessing.util

    n, folder = job[0], Path(job[1])
    multiprocessing.util.Finalize(None, _finalized, args=(folder,), exitpriority=100)
    (folder / f"job-{n}-{os.getpid()}").write_text("")
    if n == 0:
        deadline = time.monotonic() + 120
        while not list(folder.glob("job-1-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        (folder / "returned-0").write_text("")
        return n
    try:
        time.sleep(120)
    except KeyboardInterrupt:
        time.sleep(1.0)
        raise
    return n
