"""When to show progress bars: asked for explicitly, or on an interactive terminal outside CI."""

from __future__ import annotations

import os
import sys


def progress_enabled(requested: bool | None) -> bool:
    """True/False as requested; None → stderr is a TTY, `CI` is unset and no Jupyter kernel runs."""
    if requested is not None:
        return requested
    if os.environ.get("CI") or "ipykernel" in sys.modules:
        return False
    return sys.stderr.isatty()
