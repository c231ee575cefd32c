"""The deterministic embedder: signed feature hashing, no model, identical on every machine.

Algorithm (SPEC §3.1): lower-case; split on every character outside [a-z0-9]; keep tokens longer
than 2 characters; for each distinct token with count c add sign * (1 + ln c) at index
FNV-1a-32(token) mod dim, sign +1 when FNV-1a-32("sign:" + token) is even, else -1; L2-normalise.
Text with no token embeds to the zero vector (never NaN). Queries and passages embed identically.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from evalkit.embedders.base import Vectors
from evalkit.errors import EmbedderError

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def fnv1a_32(text: str) -> int:
    """FNV-1a 32-bit over the string's character codes (not its UTF-8 bytes)."""
    h = _FNV_OFFSET
    for ch in text:
        h ^= ord(ch)
        h = (h * _FNV_PRIME) & 0xFFFFFFFF
    return h


@lru_cache(maxsize=1 << 16)
def _token_hashes(token: str) -> tuple[int, float]:
    """(FNV-1a-32(token), sign) of one token. Cached: seeding re-hashes the same vocabulary
    millions of times, and the pure-Python hash was half the cost of seeding a store."""
    return fnv1a_32(token), (1.0 if fnv1a_32("sign:" + token) % 2 == 0 else -1.0)


def hashing_tokens(text: str) -> list[str]:
    """Tokens the hashing embedder counts: lower-cased [a-z0-9] runs longer than 2 characters."""
    return [t for t in _NON_ALNUM.split(text.lower()) if len(t) > 2]


class HashingEmbedder:
    """Signed feature-hashing embedder of dimension `dim` (default 384).

    A `dim` that is not a positive integer raises EmbedderError.
    """

    def __init__(self, dim: int = 384) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise EmbedderError(f"HashingEmbedder dim must be a positive integer, got {dim!r}; use e.g. 384")
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def identity(self) -> str:
        return f"hashing-fnv1a-{self._dim}"

    def embed_query(self, text: str) -> Vectors:
        return self._embed(text)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self._embed(text)
        return out

    def _embed(self, text: str) -> Vectors:
        vec = np.zeros(self._dim, dtype=np.float64)
        for token, count in Counter(hashing_tokens(text)).items():
            index, sign = _token_hashes(token)
            vec[index % self._dim] += sign * (1.0 + math.log(count))
        norm = float(np.linalg.norm(vec))
        if norm > 0.0:
            vec /= norm
        return vec.astype(np.float32)
