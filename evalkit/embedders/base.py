"""The embedder contract every store and runner relies on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into float32 vectors of a fixed dimension.

    Contract: `embed_query` returns shape (dim,), `embed_passages` returns shape (len(texts), dim);
    values are finite float32, rows are unit length or all zero (text with nothing to embed).
    `identity` names the model and settings so caches and reports can tell embedders apart.
    """

    @property
    def dim(self) -> int: ...

    @property
    def identity(self) -> str: ...

    def embed_query(self, text: str) -> Vectors: ...

    def embed_passages(self, texts: Sequence[str]) -> Vectors: ...
