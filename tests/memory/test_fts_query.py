"""The BM25 query builder (SPEC §1.3 step 3): user text in, a safe FTS5 MATCH expression out."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from evalkit.memory import (
    DEFAULT_STOPWORD_LIST,
    STOPWORD_LISTS,
    STOPWORDS,
    MemoryStore,
    StoreOptions,
    build_fts_query,
    fts_terms,
)
from evalkit.memory.fts_query import NLTK_ENGLISH_STOPWORDS, SERVICE_STOPWORDS, fold
from evalkit.records import Thought
from evalkit.sqlite import Connection, connect
from evalkit.systems import OpenContext, ReferenceSystem, SearchOptions
from tests.shared import FTS_SYNTAX


def test_terms_are_quoted_and_joined_with_or() -> None:
    assert build_fts_query("deploy server port") == '"deploy" OR "server" OR "port"'


def test_stopwords_are_dropped_case_insensitively() -> None:
    assert build_fts_query("The port OF THE Server") == '"port" OR "Server"'


def test_stopword_only_query_builds_nothing() -> None:
    assert build_fts_query("what is the of and OR NOT") is None


def test_empty_and_whitespace_queries_build_nothing() -> None:
    assert build_fts_query("") is None
    assert build_fts_query(" \t\n ") is None


def test_special_characters_are_deleted_inside_terms() -> None:
    assert fts_terms('a*b:c(d)e^f+g-h[i]j\\k"l') == ["abcdefghijkl"]


def test_surrounding_double_quotes_are_stripped() -> None:
    assert build_fts_query('"exact phrase"') == '"exact" OR "phrase"'


def test_pieces_made_only_of_deleted_characters_are_dropped() -> None:
    assert build_fts_query('*** ( ) - ^ "" :') is None


def test_fts5_operators_become_plain_terms() -> None:
    assert build_fts_query("cats NEAR(dogs, 2) -mice ^start col:value") == (
        '"cats" OR "NEARdogs," OR "2" OR "mice" OR "start" OR "colvalue"'
    )


def test_terms_keep_query_order_and_duplicates() -> None:
    assert fts_terms("beta alpha beta") == ["beta", "alpha", "beta"]


def test_split_is_on_any_whitespace() -> None:
    assert fts_terms("one\ttwo\nthree\u00a0four") == ["one", "two", "three", "four"]


def test_nul_and_lone_surrogates_are_deleted() -> None:
    assert fts_terms("ab\x00c d\ud800e") == ["abc", "de"]


def test_custom_stopword_list_is_honoured() -> None:
    assert build_fts_query("the port", frozenset({"port"})) == '"the"'


def test_stopword_lists_are_stored_folded_function_words() -> None:
    for words in STOPWORD_LISTS.values():
        assert {"the", "and", "or", "not", "what", "is"} <= words
        assert all(fold(w) == w for w in words)
        assert not {"port", "server", "database"} & words


def test_default_stopwords_are_the_services_102_english_and_151_russian_words() -> None:
    assert DEFAULT_STOPWORD_LIST == "service"
    assert STOPWORDS is STOPWORD_LISTS["service"] is SERVICE_STOPWORDS
    english = {w for w in STOPWORDS if w.isascii()}
    russian = STOPWORDS - english
    assert (len(english), len(russian)) == (102, 151)
    assert all(re.fullmatch("[а-я]+", w) for w in russian)


def test_earlier_nltk_list_stays_selectable_and_differs_by_30_words() -> None:
    assert STOPWORD_LISTS["nltk-english"] is NLTK_ENGLISH_STOPWORDS
    assert len(NLTK_ENGLISH_STOPWORDS) == 126
    only_nltk = NLTK_ENGLISH_STOPWORDS - SERVICE_STOPWORDS
    assert len(only_nltk) == 27
    assert {"before", "after", "during", "between", "would", "could"} <= only_nltk
    assert {w for w in SERVICE_STOPWORDS - NLTK_ENGLISH_STOPWORDS if w.isascii()} == {"else", "us", "whose"}


def test_before_is_kept_and_whose_is_dropped() -> None:
    assert fts_terms("whose cache before deploy") == ["cache", "before", "deploy"]
    assert fts_terms("whose cache before deploy", NLTK_ENGLISH_STOPWORDS) == ["whose", "cache", "deploy"]


def test_yo_folds_to_ye_when_comparing_with_stopwords() -> None:
    # "всё", "ещё", "её" are listed as "все", "еще", "ее"; upper case folds the same way.
    assert fts_terms("всё ещё её ВСЁ Ещё") == []
    assert fold("ВСЁ") == "все"


def test_terms_that_are_not_stopwords_keep_their_spelling() -> None:
    assert fts_terms("Ёлка всё Server") == ["Ёлка", "Server"]


def test_russian_stopword_only_query_builds_nothing() -> None:
    assert build_fts_query("что это всё было") is None


@pytest.fixture(scope="module")
def fts() -> Iterator[Connection]:
    conn = connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE docs USING fts5(content)")
    conn.executemany(
        "INSERT INTO docs(content) VALUES (?)",
        [("cats and dogs",), ("NEAR the river",), ("emoji 🎉 party",), ("col value pairs",)],
    )
    yield conn
    conn.close()


_QUERY_SHAPE = re.compile(r'"[^"]+"( OR "[^"]+")*')


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(FTS_SYNTAX, st.text(max_size=12)), max_size=12).map(" ".join))
@example('"unbalanced (NEAR( cats* AND -dogs OR NOT ^x')
@example('\x00\x00 \ud83c 🎉 "" ) (')
@example("x" * 10_000)
def test_built_query_is_well_formed_and_never_an_fts5_error(fts: Connection, text: str) -> None:
    query = build_fts_query(text)
    if query is None:
        # Nothing survived: every piece was empty after deleting the special characters, or a stopword.
        terms = [re.sub(r'["*:()^+\-\[\]\\\x00\ud800-\udfff]', "", p) for p in text.split()]
        assert all(not t or fold(t) in STOPWORDS for t in terms)
        return
    assert _QUERY_SHAPE.fullmatch(query)
    rows = fts.execute("SELECT rowid FROM docs WHERE docs MATCH ?", (query,)).fetchall()
    assert {r[0] for r in rows} <= {1, 2, 3, 4}


def test_space_syntax_turns_syntax_characters_inside_a_word_into_a_phrase():
    from evalkit.memory.fts_query import build_fts_query

    assert build_fts_query("IL-6 (TNF) a:b", syntax="space") == '"IL 6" OR "TNF" OR "a b"'
    assert build_fts_query("IL-6 (TNF) a:b") == '"IL6" OR "TNF" OR "ab"'
    assert build_fts_query('-- ** "" ::', syntax="space") is None
    assert build_fts_query('x"y\x00z', syntax="space") == '"x yz"'  # quotes become spaces, NUL is deleted


def test_space_syntax_matches_hyphenated_words_the_delete_mode_misses(tmp_path):
    for syntax, expected in (("delete", []), ("space", ["il6"])):
        workdir = tmp_path / syntax
        workdir.mkdir()
        system = ReferenceSystem(options=StoreOptions(retrieval="bm25", query_syntax=syntax))
        with system.open(OpenContext(workdir)) as memory:
            memory.add_thoughts([Thought(id="il6", content="IL-6 levels rise after exercise")])
            options = SearchOptions(top_k=5, min_relevance=0.0, now=datetime(2026, 1, 1, tzinfo=UTC))
            response = memory.search("IL-6", options)
            assert response.ids == expected, syntax


def _bm25_and_hybrid_top(
    path: Path, stopwords: str, thoughts: list[tuple[str, str]], query: str, top_k: int
) -> dict[str, list[str]]:
    """{retrieval: ids} of `query` over `thoughts` in a store whose BM25 leg drops the stopword
    list named `stopwords`."""
    with MemoryStore(path, options=StoreOptions(stopwords=stopwords)) as store:
        for thought_id, content in thoughts:
            store.add_thought(thought_id, content)
        return {
            retrieval: [
                h.id for h in store.search(query, top_k=top_k, retrieval=retrieval, min_relevance=0).hits
            ]
            for retrieval in ("bm25", "hybrid")
        }


def test_russian_stopword_only_query_yields_no_bm25_rows(tmp_path):
    thoughts = [("ru", "Это всё было давно, ещё до переезда."), ("en", "The move happened long ago.")]
    query = "Это всё было ещё"
    assert _bm25_and_hybrid_top(tmp_path / "service.db", "service", thoughts, query, 5)["bm25"] == []
    # The English-only list keeps these words as terms, so the same query matches the Russian note.
    assert _bm25_and_hybrid_top(tmp_path / "nltk.db", "nltk-english", thoughts, query, 5)["bm25"] == ["ru"]


TRAFFIC_CORPUS = [
    ("gateway", "Traffic is routed through the east gateway."),
    ("warmup", "The cache is warmed at startup by a background job."),
    ("keys", "Rotate the keys before launch."),
    ("lunch", "Lunch is served at noon."),
]
"""Each query word of "traffic cache before" occurs in exactly one thought, so every match has
the same IDF and BM25 prefers the shortest matching thought ("keys", which only says "before")."""


def test_traffic_cache_before_ranks_the_before_thought_first(tmp_path):
    top = _bm25_and_hybrid_top(tmp_path / "service.db", "service", TRAFFIC_CORPUS, "traffic cache before", 2)
    assert top == {"bm25": ["keys", "gateway"], "hybrid": ["keys", "warmup"]}


def test_traffic_cache_before_differs_under_the_earlier_list(tmp_path):
    # "before" is dropped, so "keys" has no BM25 match: gone from BM25, second in hybrid (vector only).
    top = _bm25_and_hybrid_top(
        tmp_path / "nltk.db", "nltk-english", TRAFFIC_CORPUS, "traffic cache before", 2
    )
    assert top == {"bm25": ["gateway", "warmup"], "hybrid": ["warmup", "keys"]}
