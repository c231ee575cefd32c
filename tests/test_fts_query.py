"""The BM25 query builder (SPEC §1.3 step 3): user text in, a safe FTS5 MATCH expression out."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from evalkit.memory import STOPWORDS, StoreOptions, build_fts_query, fts_terms
from evalkit.records import Thought
from evalkit.sqlite import Connection, connect
from evalkit.systems.reference import ReferenceSystem
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


def test_stopword_list_is_lower_case_function_words() -> None:
    assert {"the", "and", "or", "not", "what", "is"} <= STOPWORDS
    assert all(w == w.lower() for w in STOPWORDS)
    assert not {"port", "server", "database"} & STOPWORDS


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
        assert all(not t or t.lower() in STOPWORDS for t in terms)
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
        with ReferenceSystem(options=StoreOptions(retrieval="bm25", query_syntax=syntax)).open(
            workdir
        ) as memory:
            memory.add_thoughts([Thought(id="il6", content="IL-6 levels rise after exercise")])
            response = memory.search(
                "IL-6", top_k=5, project=None, min_relevance=0.0, recency_weight=0.0,
                recency_half_life_days=30.0, now=datetime(2026, 1, 1, tzinfo=UTC),
            )  # fmt: skip
            assert response.ids == expected, syntax
