"""Build the embedder a run asks for, and describe it for reports.

Modes: `deterministic` (the hashing embedder, dim 384, never cached: it is cheaper than a cache
lookup) and `real` (a sentence-transformers model, cached on disk unless `cache=False`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit.embedders.base import Embedder
from evalkit.embedders.cache import CachedEmbedder, EmbeddingCache
from evalkit.embedders.hashing import HashingEmbedder
from evalkit.embedders.sentence_transformer import SentenceTransformerEmbedder
from evalkit.errors import UsageError

MODES = ("deterministic", "real")
DETERMINISTIC_DIM = 384


def make_embedder(
    mode: str = "deterministic",
    *,
    model: str | None = None,
    cache: bool | str | Path | None = None,
    progress: bool | None = None,
) -> Embedder:
    """The embedder for `mode`.

    `model` (real mode only): a sentence-transformers name or local path; None = the packaged
    all-MiniLM-L6-v2. `cache` (real mode only; ignored for deterministic): None/True = the default
    cache file, a path = that file, False = no cache. `progress`: see `evalkit.progress.progress_enabled`.
    Raises UsageError for an unknown mode or a model given in deterministic mode, and
    EmbedderError when the model or the cache cannot be opened.
    """
    if mode == "deterministic":
        if model is not None:
            raise UsageError(f"model {model!r} needs mode 'real'; the deterministic mode uses no model")
        return HashingEmbedder(DETERMINISTIC_DIM)
    if mode == "real":
        embedder = SentenceTransformerEmbedder(model, progress=progress)
        if cache is False:
            return embedder
        return CachedEmbedder(embedder, EmbeddingCache(None if cache is None or cache is True else cache))
    raise UsageError(f"unknown embedder mode {mode!r}; valid modes: {', '.join(MODES)}")


def embedder_provenance(embedder: Embedder) -> dict[str, Any]:
    """What produced the vectors: `mode` (deterministic, real, or custom for any other Embedder),
    `identity`, `dim`, `cache` (the cache file, or None), and for real mode the model, its path,
    both prefixes and the weights digest (`SentenceTransformerEmbedder.provenance`)."""
    cache_path = None
    if isinstance(embedder, CachedEmbedder):
        cache_path = str(embedder.cache.path)
        embedder = embedder.inner
    info: dict[str, Any] = {"identity": embedder.identity, "dim": embedder.dim, "cache": cache_path}
    if isinstance(embedder, SentenceTransformerEmbedder):
        return {"mode": "real", **info, **embedder.provenance()}
    if isinstance(embedder, HashingEmbedder):
        return {"mode": "deterministic", **info}
    return {"mode": "custom", **info}
