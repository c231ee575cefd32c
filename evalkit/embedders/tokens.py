"""The hashing embedder's tokens (SPEC §3.1), in pure Python: the suite linter reads them without
loading numpy."""

from __future__ import annotations

import re

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def hashing_tokens(text: str) -> list[str]:
    """Tokens the hashing embedder counts: lower-cased [a-z0-9] runs longer than 2 characters."""
    return [t for t in _NON_ALNUM.split(text.lower()) if len(t) > 2]
