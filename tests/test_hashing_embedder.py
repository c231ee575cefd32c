"""The deterministic hashing embedder (SPEC §3.1): FNV-1a-32, token rules, vector layout."""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.embedders import Embedder, HashingEmbedder, fnv1a_32, hashing_tokens
from evalkit.errors import EmbedderError


def reference_fnv1a_32(data: bytes) -> int:
    """Textbook FNV-1a 32 over bytes, written independently of the implementation under test."""
    h = 2166136261
    for byte in data:
        h = ((h ^ byte) * 16777619) % 2**32
    return h


def reference_embedding(text: str, dim: int) -> np.ndarray:
    """The SPEC §3.1 algorithm spelled out with the reference hash and a findall tokenizer."""
    counts = Counter(t for t in re.findall(r"[a-z0-9]+", text.lower()) if len(t) > 2)
    vec = np.zeros(dim)
    for token, count in counts.items():
        sign = 1.0 if reference_fnv1a_32(b"sign:" + token.encode("ascii")) % 2 == 0 else -1.0
        vec[reference_fnv1a_32(token.encode("ascii")) % dim] += sign * (1.0 + math.log(count))
    norm = np.linalg.norm(vec)
    return vec / norm if norm > 0 else vec


# ---------------------------------------------------------------- FNV-1a-32


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0x811C9DC5),
        ("a", 0xE40C292C),
        ("foobar", 0xBF9CF968),
        ("alpha", 0x5D8B6DAB),
        ("sign:alpha", 0xCC8E46A2),
        ("gamma", 0xD029140A),
        ("sign:gamma", 0x076DED93),
    ],
)
def test_fnv1a_32_known_values(text: str, expected: int) -> None:
    assert fnv1a_32(text) == expected


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_fnv1a_32_matches_byte_reference_for_ascii(text: str) -> None:
    assert fnv1a_32(text) == reference_fnv1a_32(text.encode("ascii"))


def test_fnv1a_32_hashes_character_codes_not_utf8_bytes() -> None:
    # "é" is one character (code 0xE9) but two UTF-8 bytes: the SPEC hashes character codes.
    assert fnv1a_32("é") == reference_fnv1a_32(b"\xe9")
    assert fnv1a_32("é") != reference_fnv1a_32("é".encode())


# ---------------------------------------------------------------- tokens


def test_tokens_are_lowercased_alnum_runs_longer_than_two() -> None:
    text = "Hello, WORLD! a1b2 ab x_y-zed 42 007 port:8080"
    assert hashing_tokens(text) == ["hello", "world", "a1b2", "zed", "007", "port", "8080"]


def test_tokens_split_on_non_ascii_letters() -> None:
    # Lower-casing keeps "é"/"ï", which are outside [a-z0-9] and so split the word.
    assert hashing_tokens("Café naïve") == ["caf"]


def test_text_without_tokens_has_no_tokens() -> None:
    assert hashing_tokens("a an ... 42 -- ") == []


# ---------------------------------------------------------------- vectors


def test_embedding_of_hand_computed_example() -> None:
    # dim 8: alpha -> index 3, sign + (count 2); beta -> index 7, sign +; gamma -> index 2, sign -.
    vec = HashingEmbedder(dim=8).embed_query("Alpha alpha, beta; GAMMA!")
    alpha = 1.0 + math.log(2)
    norm = math.sqrt(alpha**2 + 1.0 + 1.0)
    expected = np.zeros(8)
    expected[3] = alpha / norm
    expected[7] = 1.0 / norm
    expected[2] = -1.0 / norm
    np.testing.assert_allclose(vec, expected, rtol=1e-6)


def test_negative_sign_when_sign_hash_is_odd() -> None:
    assert fnv1a_32("sign:gamma") % 2 == 1
    vec = HashingEmbedder(dim=8).embed_query("gamma")
    assert vec[fnv1a_32("gamma") % 8] == pytest.approx(-1.0)


def test_positive_sign_when_sign_hash_is_even() -> None:
    assert fnv1a_32("sign:alpha") % 2 == 0
    vec = HashingEmbedder(dim=8).embed_query("alpha")
    assert vec[fnv1a_32("alpha") % 8] == pytest.approx(1.0)


def test_repeated_token_weighs_one_plus_ln_count() -> None:
    vec = HashingEmbedder(dim=8).embed_query("alpha alpha alpha beta")
    assert vec[3] / vec[7] == pytest.approx(1.0 + math.log(3), rel=1e-6)


def test_text_without_tokens_embeds_to_zero_vector() -> None:
    vec = HashingEmbedder(dim=16).embed_query("a an 42 ?!")
    assert vec.shape == (16,)
    assert not vec.any()


def test_colliding_tokens_that_cancel_give_zero_vector_not_nan() -> None:
    # dim 1: every token lands on index 0; alpha is +1, gamma is -1, so they cancel exactly.
    vec = HashingEmbedder(dim=1).embed_query("alpha gamma")
    assert vec.tolist() == [0.0]


def test_vectors_are_float32_with_the_embedder_shape() -> None:
    emb = HashingEmbedder(dim=12)
    assert emb.dim == 12
    assert emb.embed_query("some words here").dtype == np.float32
    assert emb.embed_query("some words here").shape == (12,)
    passages = emb.embed_passages(["one thing", "another thing", ""])
    assert passages.dtype == np.float32
    assert passages.shape == (3, 12)
    assert emb.embed_passages([]).shape == (0, 12)


def test_queries_and_passages_embed_identically() -> None:
    emb = HashingEmbedder(dim=32)
    text = "The deploy server listens on port 8080"
    np.testing.assert_array_equal(emb.embed_query(text), emb.embed_passages([text])[0])


def test_default_dimension_and_identity() -> None:
    emb = HashingEmbedder()
    assert emb.dim == 384
    assert emb.identity == "hashing-fnv1a-384"
    assert HashingEmbedder(dim=8).identity == "hashing-fnv1a-8"
    assert isinstance(emb, Embedder)


@pytest.mark.parametrize("dim", [0, -3, 2.5, True])
def test_invalid_dimension_raises_embedder_error(dim: object) -> None:
    with pytest.raises(EmbedderError, match="dim must be a positive integer"):
        HashingEmbedder(dim=dim)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.sampled_from([1, 7, 64, 384]))
def test_embedding_matches_reference_is_finite_and_unit_or_zero(text: str, dim: int) -> None:
    vec = HashingEmbedder(dim=dim).embed_query(text)
    assert vec.dtype == np.float32
    assert vec.shape == (dim,)
    assert np.all(np.isfinite(vec))
    norm = float(np.linalg.norm(vec))
    assert norm == pytest.approx(1.0, abs=1e-5) or norm == 0.0
    np.testing.assert_allclose(vec, reference_embedding(text, dim), atol=1e-6)
