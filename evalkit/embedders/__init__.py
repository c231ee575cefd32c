"""Embedders: the deterministic hashing embedder (default) and, with the `real` extra, a
sentence-transformers embedder (torch is imported only when a model is loaded).

The persistent cache (`evalkit.embedders.cache`, on the `evalkit.sqlite` driver helper) and the
factory (`evalkit.embedders.factory`) are imported from their modules.
"""

from evalkit.embedders.base import Embedder, Vectors
from evalkit.embedders.hashing import HashingEmbedder, fnv1a_32, hashing_tokens
from evalkit.embedders.sentence_transformer import SentenceTransformerEmbedder

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "Vectors",
    "fnv1a_32",
    "hashing_tokens",
]
