"""When to show progress bars: asked for explicitly, or on an interactive terminal outside CI."""

from __future__ import annotations

import sys

from evalkit.ci import ci_context


def progress_enabled(requested: bool | None) -> bool:
    """True/False as requested; None → stderr is a TTY, no CI context (`evalkit.ci`) and no Jupyter
    kernel runs."""
    if requested is not None:
        return requested
    if ci_context() is not None or "ipykernel" in sys.modules:
        return False
    return sys.stderr.isatty()
