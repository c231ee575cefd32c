"""Build the embedder a run asks for, and describe it for reports.

Modes: `deterministic` (the hashing embedder, dim 384, never cached: it is cheaper than a cache
lookup) and `real` (a sentence-transformers model, cached on disk unless `use_cache` is False).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from evalkit.embedders.base import Embedder
from evalkit.embedders.cache import CachedEmbedder, EmbeddingCache
from evalkit.embedders.hashing import HashingEmbedder
from evalkit.embedders.sentence_transformer import SentenceTransformerEmbedder
from evalkit.errors import UsageError
from evalkit.validation import FrozenModel

DETERMINISTIC_DIM = 384


class EmbedderInfo(FrozenModel):
    """What produced the vectors: `mode` (deterministic, real, or custom for any other Embedder),
    `identity`, `dim`, `cache` (the cache file, or None), and for real mode the model name, its
    local path, both prefixes and the weights digest."""

    mode: Literal["deterministic", "real", "custom"]
    identity: str
    dim: int
    cache: str | None = None
    model: str | None = None
    path: str | None = None
    query_prefix: str | None = None
    passage_prefix: str | None = None
    weights_sha256: str | None = None


def make_embedder(
    mode: str = "deterministic",
    *,
    model: str | None = None,
    cache_path: str | Path | None = None,
    use_cache: bool = True,
    progress: bool | None = None,
) -> Embedder:
    """The embedder for `mode` ("deterministic" or "real").

    Real mode: `model` is a sentence-transformers name or local path (None = the packaged
    all-MiniLM-L6-v2); vectors are cached on disk in `cache_path` (None = the default cache file)
    unless `use_cache` is False. The deterministic mode is never cached (hashing is cheaper than a
    cache lookup). `progress`: see `evalkit.progress.progress_enabled`. Raises UsageError for an
    unknown mode or a model given in deterministic mode, and EmbedderError when the model or the
    cache cannot be opened.
    """
    if mode == "deterministic":
        if model is not None:
            raise UsageError(f"model {model!r} needs mode 'real'; the deterministic mode uses no model")
        return HashingEmbedder(DETERMINISTIC_DIM)
    if mode == "real":
        embedder = SentenceTransformerEmbedder(model, progress=progress)
        return CachedEmbedder(embedder, EmbeddingCache(cache_path)) if use_cache else embedder
    raise UsageError(f"unknown embedder mode {mode!r}; valid modes: deterministic, real")


def embedder_provenance(embedder: Embedder) -> EmbedderInfo:
    """Describe `embedder` (unwrapping a CachedEmbedder, whose file becomes `cache`)."""
    cache_path = None
    if isinstance(embedder, CachedEmbedder):
        cache_path = str(embedder.cache.path)
        embedder = embedder.inner
    info: dict[str, Any] = {"identity": embedder.identity, "dim": embedder.dim, "cache": cache_path}
    if isinstance(embedder, SentenceTransformerEmbedder):
        return EmbedderInfo(mode="real", **{**info, **embedder.provenance()})
    if isinstance(embedder, HashingEmbedder):
        return EmbedderInfo(mode="deterministic", **info)
    return EmbedderInfo(mode="custom", **info)
