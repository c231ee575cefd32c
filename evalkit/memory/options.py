"""How a reference store is built and searched by default: `StoreOptions`, validated once.

These are the store's own settings (the SPEC's defaults unless chosen otherwise), recorded in a
run's provenance. Per-query search options (top_k, project, recency, gate, ...) stay arguments
of `MemoryStore.search`.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BeforeValidator

from evalkit.errors import StoreOptionError
from evalkit.memory.fts_query import DEFAULT_STOPWORD_LIST, QUERY_SYNTAX_MODES, STOPWORD_LISTS, QuerySyntax
from evalkit.validation import CheckedModel, one_of

Retrieval = Literal["hybrid", "bm25", "vector"]
RETRIEVAL_MODES: tuple[str, ...] = get_args(Retrieval)
"""Which search legs run: both fused (hybrid), BM25 only, or vectors only."""

Tokenizer = Literal["unicode61", "porter", "trigram"]
TOKENIZERS: tuple[str, ...] = get_args(Tokenizer)
"""The FTS5 tokenizer of the BM25 leg: plain `unicode61` (the SPEC), Porter stemming over it, or
`trigram` (every 3-character substring is a token: text without spaces between words, such as
Chinese or Japanese, becomes searchable, but a query term shorter than 3 characters matches
nothing)."""


class StoreOptions(CheckedModel):
    """A reference store's settings. Constructing one with a bad value raises StoreOptionError.

    `retrieval`: the legs a search runs when it does not name its own; `tokenizer`: the BM25
    leg's FTS5 tokenizer (fixed when the store file is created); `query_syntax`: what the BM25
    query builder does with FTS5 syntax characters inside a word (`delete`, the SPEC: "IL-6" →
    "IL6"; `space`: the phrase "IL 6"; see `evalkit.memory.fts_query`); `stopwords`: the name of
    the BM25 query builder's stopword list (`service`, the original service's English + Russian
    words, SPEC §5; or `nltk-english`).
    """

    error = StoreOptionError

    retrieval: Annotated[Retrieval, BeforeValidator(one_of("retrieval", RETRIEVAL_MODES))] = "hybrid"
    tokenizer: Annotated[Tokenizer, BeforeValidator(one_of("tokenizer", TOKENIZERS))] = "unicode61"
    query_syntax: Annotated[QuerySyntax, BeforeValidator(one_of("query_syntax", QUERY_SYNTAX_MODES))] = (
        "delete"
    )
    stopwords: Annotated[str, BeforeValidator(one_of("stopwords", tuple(STOPWORD_LISTS)))] = (
        DEFAULT_STOPWORD_LIST
    )


DEFAULT_STORE_OPTIONS = StoreOptions()
"""The SPEC's store."""
