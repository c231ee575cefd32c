"""Build the embedder a run asks for, and describe it for reports.

Modes: `deterministic` (the hashing embedder, dim 384, never cached: it is cheaper than a cache
lookup) and `real` (a sentence-transformers model, cached on disk unless `use_cache` is False).
"""

from __future__ import annotations

import threading
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


class RunEmbedder:
    """A run's embedder, built by `make_embedder` with these settings on the first call and the
    same object on every later call of this process (thread-safe). A pickled copy (a worker
    process's) carries an embedder already built, else builds its own on its first call. What a
    system's `OpenContext.embedder` gives."""

    def __init__(
        self,
        mode: str = "deterministic",
        *,
        model: str | None = None,
        cache_path: str | Path | None = None,
        use_cache: bool = True,
    ) -> None:
        self._settings: dict[str, Any] = {
            "mode": mode, "model": model, "cache_path": cache_path, "use_cache": use_cache,
        }  # fmt: skip
        self._built: Embedder | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Embedder:
        with self._lock:
            if self._built is None:
                self._built = make_embedder(**self._settings)
            return self._built

    def __getstate__(self) -> dict[str, Any]:
        return {"_settings": self._settings, "_built": self._built}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock())


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
