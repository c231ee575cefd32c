"""The reference memory store (SQLite + FTS5 + sqlite-vec) and its search pipeline."""

from evalkit.memory.connect import connect
from evalkit.memory.fts_query import (
    DEFAULT_STOPWORD_LIST,
    STOPWORD_LISTS,
    STOPWORDS,
    build_fts_query,
    fts_terms,
)
from evalkit.memory.pipeline import DEFAULT_PIPELINE, RRF_K, Candidate, RowFilter, SearchPipeline
from evalkit.memory.store import (
    CONTRADICTION_MODES,
    DEFAULT_MIN_RELEVANCE,
    RETRIEVAL_MODES,
    SUPERSESSION_MODES,
    VECTOR_FLOOR,
    MemoryStore,
)

__all__ = [
    "CONTRADICTION_MODES",
    "DEFAULT_MIN_RELEVANCE",
    "DEFAULT_PIPELINE",
    "DEFAULT_STOPWORD_LIST",
    "RETRIEVAL_MODES",
    "RRF_K",
    "STOPWORDS",
    "STOPWORD_LISTS",
    "SUPERSESSION_MODES",
    "VECTOR_FLOOR",
    "Candidate",
    "MemoryStore",
    "RowFilter",
    "SearchPipeline",
    "build_fts_query",
    "connect",
    "fts_terms",
]
