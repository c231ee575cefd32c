"""Turn arbitrary user text into a safe FTS5 MATCH expression (SPEC §1.3 step 3).

Rules: split on whitespace; strip surrounding double quotes; delete the characters
`" * : ( ) ^ + - [ ] \\`; drop empty pieces and stopwords (compared after lower-casing and
folding `ё` to `е`, SPEC §5); quote each survivor and join with ` OR `. Nothing left → None, and
the BM25 leg returns nothing (a stopword-only query never matches everything, in English or
Russian). Because every term is a double-quoted FTS5 string with all double quotes removed, no
user text can produce FTS5 syntax: operators such as AND/OR/NOT/NEAR become plain quoted terms.
Two more kinds of character are deleted (beyond the SPEC's list): NUL, because FTS5 reads its
query as a C string and a NUL would end it mid-term ("unterminated string"); and lone UTF-16
surrogates (U+D800–U+DFFF), which cannot be encoded as UTF-8 and so cannot be sent to SQLite at
all (no stored text can contain them either).

A query keeps at most `MAX_FTS_TERMS` terms (the first ones; beyond the SPEC, which sets no
bound): FTS5's cost grows faster than the number of OR-ed terms (16,000 terms took 5 s, 128,000
terms 35 s, a million did not finish in 10 minutes), so one huge query could hold a store, and
a server, for minutes. Real queries are far below the bound (the longest BEIR queries, ArguAna's
whole arguments, have a few hundred words), so their expression is exactly the SPEC's.

The default stopword list is the original service's (`SERVICE_STOPWORDS`); `STOPWORD_LISTS`
names the lists a store may select instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, get_args

_SYNTAX = re.compile(r'["*:()^+\-\[\]\\]')
_UNSENDABLE = re.compile(r"[\x00\ud800-\udfff]")

QuerySyntax = Literal["delete", "space"]
QUERY_SYNTAX_MODES: tuple[str, ...] = get_args(QuerySyntax)
"""What happens to FTS5 syntax characters inside a piece: `delete` (the SPEC: "IL-6" → "IL6")
or `space` ("IL-6" → the phrase "IL 6", which matches the indexed tokens `il 6`). Both are safe:
every term is still one quoted FTS5 string with no double quote in it."""


MAX_FTS_TERMS = 4096
"""The most terms a BM25 query ORs (about 0.7 s of FTS5 work); later terms are ignored."""


def fold(word: str) -> str:
    """`word` as stopword lists compare it: lower-cased, with `ё` folded to `е` (SPEC §5)."""
    return word.lower().replace("ё", "е")


SERVICE_STOPWORDS: frozenset[str] = frozenset(
    fold(word)
    for word in """
    a an the and or not but if then else of to in on at by for with as is are was were be been being
    do does did doing have has had having i you he she it we they me him her us them my your his its
    our their this that these those what which who whom whose when where why how all any both each
    few more most other some such no nor only own same so than too very can will just should now from
    into over about up down out off again further once here there

    и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было
    вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас
    опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была
    сам чтоб без будто чего раз тоже себе под будет тогда кто этот того потому этого какой совсем ним
    здесь этом один почти мой тем чтобы нее сейчас были куда зачем всех никогда можно при наконец два
    об другой хоть после над больше тот через эти нас про всего них какая много разве три эту моя
    впрочем хорошо свою этой перед иногда лучше чуть том нельзя такой им более всегда конечно всю между
    это такое
    """.split()  # noqa: SIM905 - a word list reads better as text than as 253 quoted literals
)
"""The original service's stopwords (SPEC §5): 102 English and 151 Russian words, stored folded.
Words such as "before", "after", "during", "between", "would" and "could" are not in it."""

NLTK_ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves
    """.split()  # noqa: SIM905 - a word list reads better as text than as 126 quoted literals
)
"""evalkit's earlier list: 126 NLTK-style English function words (no Russian). Unlike the
service's list it drops "before", "after", "during", "between", "would", "could", … and keeps
"else", "us", "whose"."""

STOPWORD_LISTS: Mapping[str, frozenset[str]] = MappingProxyType(
    {"service": SERVICE_STOPWORDS, "nltk-english": NLTK_ENGLISH_STOPWORDS}
)
"""The stopword lists a store can be asked to use, by name. Every list is stored folded."""

DEFAULT_STOPWORD_LIST = "service"
"""The name of the list the store uses unless told otherwise: the original service's."""

STOPWORDS: frozenset[str] = STOPWORD_LISTS[DEFAULT_STOPWORD_LIST]
"""The default stopword list."""


def fts_terms(text: str, stopwords: frozenset[str] = STOPWORDS, syntax: str = "delete") -> list[str]:
    """The terms the BM25 leg searches for, in query order (duplicates kept, original case);
    `syntax` is one of QUERY_SYNTAX_MODES. A term is dropped when its `fold` is in `stopwords`,
    so a custom list must be stored folded (lower-case, `е` for `ё`) to match. At most
    MAX_FTS_TERMS terms, the first ones (see the module docstring)."""
    replacement = {"delete": "", "space": " "}[syntax]
    terms: list[str] = []
    for piece in text.split():
        term = " ".join(_SYNTAX.sub(replacement, _UNSENDABLE.sub("", piece.strip('"'))).split())
        if term and fold(term) not in stopwords:
            terms.append(term)
            if len(terms) == MAX_FTS_TERMS:
                break
    return terms


def build_fts_query(text: str, stopwords: frozenset[str] = STOPWORDS, syntax: str = "delete") -> str | None:
    """The FTS5 MATCH expression for `text`, or None when no term survives."""
    terms = fts_terms(text, stopwords, syntax)
    if not terms:
        return None
    return " OR ".join(f'"{term}"' for term in terms)
