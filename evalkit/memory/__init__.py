"""The reference memory store (SQLite + FTS5 + sqlite-vec) and its search pipeline."""

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
