"""The reference memory store (SQLite + FTS5 + sqlite-vec) and its search pipeline.

Each name is imported from its module on first use (`evalkit.lazy`): the store's options and the
FTS5 query builder load without the store itself (numpy, the SQLite extensions)."""

from typing import TYPE_CHECKING

from evalkit.lazy import lazy_names

if TYPE_CHECKING:
    from evalkit.memory.fts_query import (
        DEFAULT_STOPWORD_LIST,
        STOPWORD_LISTS,
        STOPWORDS,
        build_fts_query,
        fts_terms,
    )
    from evalkit.memory.options import DEFAULT_STORE_OPTIONS, RETRIEVAL_MODES, TOKENIZERS, StoreOptions
    from evalkit.memory.pipeline import DEFAULT_PIPELINE, RRF_K, Candidate, RowFilter, SearchPipeline
    from evalkit.memory.store import (
        CONTRADICTION_MODES,
        DEFAULT_MIN_RELEVANCE,
        IN_MEMORY,
        SUPERSESSION_MODES,
        VECTOR_FLOOR,
        MemoryStore,
    )

__getattr__ = lazy_names(
    __name__,
    {
        "evalkit.memory.fts_query": (
            "DEFAULT_STOPWORD_LIST", "STOPWORD_LISTS", "STOPWORDS", "build_fts_query", "fts_terms",
        ),
        "evalkit.memory.options": ("DEFAULT_STORE_OPTIONS", "RETRIEVAL_MODES", "TOKENIZERS", "StoreOptions"),
        "evalkit.memory.pipeline": ("DEFAULT_PIPELINE", "RRF_K", "Candidate", "RowFilter", "SearchPipeline"),
        "evalkit.memory.store": (
            "CONTRADICTION_MODES", "DEFAULT_MIN_RELEVANCE", "IN_MEMORY", "SUPERSESSION_MODES", "VECTOR_FLOOR",
            "MemoryStore",
        ),
    },
)  # fmt: skip

__all__ = [
    "CONTRADICTION_MODES",
    "DEFAULT_MIN_RELEVANCE",
    "DEFAULT_PIPELINE",
    "DEFAULT_STOPWORD_LIST",
    "DEFAULT_STORE_OPTIONS",
    "IN_MEMORY",
    "RETRIEVAL_MODES",
    "RRF_K",
    "STOPWORDS",
    "STOPWORD_LISTS",
    "SUPERSESSION_MODES",
    "TOKENIZERS",
    "VECTOR_FLOOR",
    "Candidate",
    "MemoryStore",
    "RowFilter",
    "SearchPipeline",
    "StoreOptions",
    "build_fts_query",
    "fts_terms",
]
