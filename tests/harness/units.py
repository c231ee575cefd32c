"""Units of work for the executor tests, in a module of their own: a worker started by forkserver
or spawn imports the unit's module, and this one imports little."""

from __future__ import annotations

import time


def sleep_then_return(seconds: float) -> float:
    time.sleep(seconds)
    return seconds
