"""How the CLI ends on a signal.

Ctrl-C (SIGINT) raises KeyboardInterrupt, as Python does by default; SIGTERM (how CI cancels a
job) is turned into `Terminated`, also a BaseException, by `sigterm_raises`. Either unwinds the
stack, so every `finally` and context manager runs (the runner's temporary stores, the report
notebook's kernel and work folder are removed) before `evalkit.cli.main` exits 130 or 143.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated(BaseException):
    """SIGTERM arrived. A BaseException, like KeyboardInterrupt, so `except Exception` blocks
    never swallow it."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Inside the block, SIGTERM raises `Terminated`; the previous handler is restored after.
    Outside the main thread (where Python cannot set handlers) the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
