"""Embedders: the deterministic hashing embedder (default) and, with the `real` extra, a
sentence-transformers embedder (torch is imported only when a model is loaded).

The persistent cache (`evalkit.embedders.cache`, on the `evalkit.sqlite` driver helper) and the
factory (`evalkit.embedders.factory`) are imported from their modules. Each name below is imported
from its module on first use (`evalkit.lazy`), so `hashing_tokens` loads without numpy.
"""

from typing import TYPE_CHECKING

from evalkit.lazy import lazy_names

if TYPE_CHECKING:
    from evalkit.embedders.base import Embedder, Vectors
    from evalkit.embedders.hashing import HashingEmbedder, fnv1a_32
    from evalkit.embedders.sentence_transformer import SentenceTransformerEmbedder
    from evalkit.embedders.tokens import hashing_tokens

__getattr__ = lazy_names(
    __name__,
    {
        "evalkit.embedders.base": ("Embedder", "Vectors"),
        "evalkit.embedders.hashing": ("HashingEmbedder", "fnv1a_32"),
        "evalkit.embedders.sentence_transformer": ("SentenceTransformerEmbedder",),
        "evalkit.embedders.tokens": ("hashing_tokens",),
    },
)

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "Vectors",
    "fnv1a_32",
    "hashing_tokens",
]
