"""Turn arbitrary user text into a safe FTS5 MATCH expression (SPEC §1.3 step 3).

Rules: split on whitespace; strip surrounding double quotes; delete the characters
`" * : ( ) ^ + - [ ] \\`; drop empty pieces and stopwords (compared lower-cased); quote each
survivor and join with ` OR `. Nothing left → None, and the BM25 leg returns nothing (a
stopword-only query never matches everything). Because every term is a double-quoted FTS5
string with all double quotes removed, no user text can produce FTS5 syntax: operators such as
AND/OR/NOT/NEAR become plain quoted terms. Two more kinds of character are deleted (beyond the
SPEC's list): NUL, because FTS5 reads its query as a C string and a NUL would end it mid-term
("unterminated string"); and lone UTF-16 surrogates (U+D800–U+DFFF), which cannot be encoded as
UTF-8 and so cannot be sent to SQLite at all (no stored text can contain them either).
"""

from __future__ import annotations

import re
from typing import Literal, get_args

_SYNTAX = re.compile(r'["*:()^+\-\[\]\\]')
_UNSENDABLE = re.compile(r"[\x00\ud800-\udfff]")

QuerySyntax = Literal["delete", "space"]
QUERY_SYNTAX_MODES: tuple[str, ...] = get_args(QuerySyntax)
"""What happens to FTS5 syntax characters inside a piece: `delete` (the SPEC: "IL-6" → "IL6")
or `space` ("IL-6" → the phrase "IL 6", which matches the indexed tokens `il 6`). Both are safe:
every term is still one quoted FTS5 string with no double quote in it."""

STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves
    """.split()  # noqa: SIM905 - a word list reads better as text than as 127 quoted literals
)
"""A curated English stopword list (NLTK-style function words, no content words)."""


def fts_terms(text: str, stopwords: frozenset[str] = STOPWORDS, syntax: str = "delete") -> list[str]:
    """The terms the BM25 leg searches for, in query order (duplicates kept); `syntax` is one of
    QUERY_SYNTAX_MODES."""
    replacement = {"delete": "", "space": " "}[syntax]
    terms = []
    for piece in text.split():
        term = " ".join(_SYNTAX.sub(replacement, _UNSENDABLE.sub("", piece.strip('"'))).split())
        if term and term.lower() not in stopwords:
            terms.append(term)
    return terms


def build_fts_query(text: str, stopwords: frozenset[str] = STOPWORDS, syntax: str = "delete") -> str | None:
    """The FTS5 MATCH expression for `text`, or None when no term survives."""
    terms = fts_terms(text, stopwords, syntax)
    if not terms:
        return None
    return " OR ".join(f'"{term}"' for term in terms)
