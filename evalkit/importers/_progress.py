"""Progress bars for the importers: tqdm on an interactive terminal, silent everywhere else."""

from __future__ import annotations

import os
import sys
from typing import Any

from tqdm import tqdm


def progress_enabled(progress: bool | None) -> bool:
    """Resolve a `progress` argument: True/False are obeyed; None means "show a bar only when
    stderr is a terminal and the environment variable CI is unset" (so CI logs and pipes stay clean)."""
    if progress is not None:
        return progress
    return sys.stderr.isatty() and "CI" not in os.environ


def progress_bar(
    progress: bool | None, *, desc: str, total: int | None, unit: str, unit_scale: bool = False
) -> tqdm[Any]:
    """A manually updated tqdm bar on stderr, disabled (a no-op) unless `progress_enabled(progress)`."""
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=unit_scale,
        disable=not progress_enabled(progress),
        file=sys.stderr,
    )
