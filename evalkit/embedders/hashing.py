"""The deterministic embedder: signed feature hashing, no model, identical on every machine.

Algorithm (SPEC §3.1): lower-case; split on every character outside [a-z0-9]; keep tokens longer
than 2 characters (`evalkit.embedders.tokens`); for each distinct token with count c add
sign * (1 + ln c) at index FNV-1a-32(token) mod dim, sign +1 when FNV-1a-32("sign:" + token) is
even, else -1; L2-normalise. Text with no token embeds to the zero vector (never NaN). Queries and
passages embed identically.

Arithmetic (SPEC §5), bit for bit that of the original service, whose vector is a Float32Array:
distinct tokens are added in order of first appearance; each addend is computed in float64 and
the slot's running value is rounded to float32 after every addition; the norm is the square root
of the float64 sum, in slot order, of the squared float32 values; each slot is divided by it in
float64 and rounded to float32. Summing and normalising in float64 and rounding once at the end
differs in the last bit for some texts: a slot holding 1 + ln c enters the norm rounded, and two
tokens sharing a slot add up differently. FNV-1a runs over UTF-16 code units (see `fnv1a_32`).
The one remaining source of difference is the platform's `log` (C's here, JavaScript's
`Math.log` there), which could differ in the last bit of a float64 for some counts.

A property of the algorithm worth knowing: FNV-1a's low bit is the XOR of its input units' low
bits (and the offset's), so at an even dim the sign is fixed by the slot's parity (odd slot +1,
even slot −1) and tokens sharing a slot never cancel.
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from evalkit.embedders.base import Vectors
from evalkit.embedders.tokens import hashing_tokens
from evalkit.errors import EmbedderError

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv1a_32(text: str) -> int:
    """FNV-1a 32-bit over the string's UTF-16 code units (what JavaScript's `charCodeAt` reads),
    not its UTF-8 bytes: a character outside the Basic Multilingual Plane counts as the two units
    of its surrogate pair ("𝔘" = U+1D518 hashes as 0xD835, 0xDD18); a lone surrogate is one unit."""
    h = _FNV_OFFSET
    for unit in _utf16_units(text):
        h ^= unit
        h = (h * _FNV_PRIME) & 0xFFFFFFFF
    return h


def _utf16_units(text: str) -> list[int]:
    """The UTF-16 code units of `text`: a character above U+FFFF becomes its surrogate pair."""
    units: list[int] = []
    for ch in text:
        code = ord(ch)
        if code > 0xFFFF:
            code -= 0x10000
            units += (0xD800 | (code >> 10), 0xDC00 | (code & 0x3FF))
        else:
            units.append(code)
    return units


@lru_cache(maxsize=1 << 16)
def _token_hashes(token: str) -> tuple[int, float]:
    """(FNV-1a-32(token), sign) of one token. Cached: seeding re-hashes the same vocabulary
    millions of times, and the pure-Python hash was half the cost of seeding a store."""
    return fnv1a_32(token), (1.0 if fnv1a_32("sign:" + token) % 2 == 0 else -1.0)


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
        return self.embed_passages([text])[0]

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Vectors of `texts` (a new float32 array), with the float32 arithmetic of the module
        docstring. A text's vector depends on that text alone, so the last `VECTOR_CACHE_SIZE`
        distinct texts' vectors are remembered: a suite's shared distractors are seeded into
        every scenario's store, and each query is asked once per pass."""
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return np.stack([_text_vector(text, self._dim) for text in texts])


VECTOR_CACHE_SIZE = 4096
"""How many distinct (text, dim) vectors `HashingEmbedder` remembers (about 6 MB at dim 384)."""


@lru_cache(maxsize=VECTOR_CACHE_SIZE)
def _text_vector(text: str, dim: int) -> np.ndarray:
    """The read-only embedding of one text: slot sums rounded to float32, the float64 sum of
    their squares in slot order (empty slots add 0.0, which changes no sum), its square root,
    and each slot divided by it in float64, then rounded to float32 as the array stores it."""
    sums = _slot_sums(text, dim)
    slots = sorted(sums)
    rounded = [_round_to_float32(sums[slot]) for slot in slots]
    squares = 0.0
    for value in rounded:
        squares += value * value
    vector = np.zeros(dim, dtype=np.float32)
    if squares > 0.0:  # a zero vector stays zero
        norm = math.sqrt(squares)
        vector[slots] = [value / norm for value in rounded]
    vector.flags.writeable = False
    return vector


def _slot_sums(text: str, dim: int) -> dict[int, float]:
    """Slot → running sum of its addends, tokens taken in order of first appearance. The
    service rounds a slot to float32 after every addition; here a slot's first addend is
    left for the caller to round (rounding 0 + a is rounding a) and only a slot that a
    second token hits is rounded on the way, which keeps the common case fast."""
    sums: dict[int, float] = {}
    for token, count in Counter(hashing_tokens(text)).items():
        index, sign = _token_hashes(token)
        slot = index % dim
        addend = sign if count == 1 else sign * (1.0 + math.log(count))  # ln 1 = 0 exactly
        if slot in sums:
            sums[slot] = _round_to_float32(_round_to_float32(sums[slot]) + addend)
        else:
            sums[slot] = addend
    return sums


_FLOAT32 = struct.Struct("<f")


def _round_to_float32(value: float) -> float:
    """`value` rounded to the nearest float32 (ties to even), as a Python float. Packing through
    `struct` is C's double-to-float conversion, and several times faster than `np.float32`."""
    rounded: float = _FLOAT32.unpack(_FLOAT32.pack(value))[0]
    return rounded
