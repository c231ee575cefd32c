"""The deterministic hashing embedder (SPEC §3.1): FNV-1a-32, token rules, vector layout."""

from __future__ import annotations

import math
import re
import struct
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


def reference_fnv1a_32_utf16(text: str) -> int:
    """FNV-1a 32 over the UTF-16 code units of `text`, as JavaScript's `charCodeAt` reads them."""
    data = text.encode("utf-16-le", "surrogatepass")
    h = 2166136261
    for (unit,) in struct.iter_unpack("<H", data):
        h = ((h ^ unit) * 16777619) % 2**32
    return h


def _slot_and_sign(token: str, dim: int) -> tuple[int, float]:
    sign = 1.0 if reference_fnv1a_32(b"sign:" + token.encode("ascii")) % 2 == 0 else -1.0
    return reference_fnv1a_32(token.encode("ascii")) % dim, sign


def _tokens(text: str) -> Counter[str]:
    return Counter(t for t in re.findall(r"[a-z0-9]+", text.lower()) if len(t) > 2)


def reference_embedding(text: str, dim: int) -> np.ndarray:
    """SPEC §3.1 with the arithmetic of SPEC §5, one slot at a time, as the original service's
    Float32Array does it: tokens in order of first appearance, each slot rounded to float32
    after every addition, the norm summed in float64 in slot order, each slot divided in float64
    and rounded to float32."""
    vec = np.zeros(dim, dtype=np.float32)
    for token, count in _tokens(text).items():
        slot, sign = _slot_and_sign(token, dim)
        vec[slot] = np.float32(float(vec[slot]) + sign * (1.0 + math.log(count)))
    total = 0.0
    for value in vec:
        total += float(value) * float(value)
    norm = math.sqrt(total)
    if norm == 0.0:
        return vec
    return np.array([np.float32(float(value) / norm) for value in vec], dtype=np.float32)


def float64_embedding(text: str, dim: int) -> np.ndarray:
    """The same algorithm summed and normalised in float64, rounded to float32 once at the end:
    what evalkit computed before SPEC §5, kept to show where the two differ."""
    vec = np.zeros(dim)
    for token, count in _tokens(text).items():
        slot, sign = _slot_and_sign(token, dim)
        vec[slot] += sign * (1.0 + math.log(count))
    norm = np.linalg.norm(vec)
    return (vec / norm if norm > 0 else vec).astype(np.float32)


def bits(vec: np.ndarray) -> dict[int, int]:
    """The non-zero slots of a float32 vector as {slot: IEEE-754 bit pattern}."""
    return {int(i): int(vec[i : i + 1].view(np.uint32)[0]) for i in np.flatnonzero(vec)}


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


@pytest.mark.parametrize(
    ("text", "units", "expected"),
    [
        ("😀", [0xD83D, 0xDE00], 0xCB31C4B8),  # U+1F600
        ("𝔘", [0xD835, 0xDD18], 0x92DD59D8),  # U+1D518
        ("a𝔘b", [0x61, 0xD835, 0xDD18, 0x62], 0x1A362481),
        ("\ud800", [0xD800], 0x0481D51F),  # a lone surrogate is one unit
    ],
)
def test_fnv1a_32_hashes_a_character_outside_the_bmp_as_its_two_utf16_units(
    text: str, units: list[int], expected: int
) -> None:
    assert list(struct.unpack(f"<{len(units)}H", text.encode("utf-16-le", "surrogatepass"))) == units
    assert fnv1a_32(text) == reference_fnv1a_32_utf16(text) == expected


def test_fnv1a_32_outside_the_bmp_differs_from_hashing_code_points() -> None:
    # Hashing the code point 0x1D518 as one value (what evalkit did before SPEC §5) gives another hash.
    h = 2166136261
    h = ((h ^ 0x1D518) * 16777619) % 2**32
    assert h == 0x1E19B3E7
    assert fnv1a_32("𝔘") != h


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_fnv1a_32_matches_utf16_reference_for_any_text(text: str) -> None:
    assert fnv1a_32(text) == reference_fnv1a_32_utf16(text)


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


def test_remembered_vectors_are_handed_out_as_new_writable_arrays() -> None:
    """Vectors come from a cache shared by every embedder: a caller changing its array changes
    neither the cache nor what the next caller gets."""
    emb = HashingEmbedder(dim=16)
    texts = ["the deploy port is 8080", "the deploy port is 8080", "lunch at noon"]
    first = emb.embed_passages(texts)
    expected = np.array([reference_embedding(t, 16) for t in texts], dtype=np.float32)
    first[:] = 7.0
    query = emb.embed_query("lunch at noon")
    query[:] = 7.0
    np.testing.assert_array_equal(emb.embed_passages(texts), expected)
    np.testing.assert_array_equal(HashingEmbedder(dim=16).embed_query("lunch at noon"), expected[2])


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
def test_embedding_matches_reference_bit_for_bit_is_finite_and_unit_or_zero(text: str, dim: int) -> None:
    vec = HashingEmbedder(dim=dim).embed_query(text)
    assert vec.dtype == np.float32
    assert vec.shape == (dim,)
    assert np.all(np.isfinite(vec))
    norm = float(np.linalg.norm(vec))
    assert norm == pytest.approx(1.0, abs=1e-5) or norm == 0.0
    np.testing.assert_array_equal(vec, reference_embedding(text, dim))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=200), max_size=8), st.sampled_from([1, 7, 384]))
def test_passages_embed_bit_for_bit_like_single_queries(texts: list[str], dim: int) -> None:
    emb = HashingEmbedder(dim=dim)
    expected = np.array([reference_embedding(t, dim) for t in texts], dtype=np.float32).reshape(-1, dim)
    np.testing.assert_array_equal(emb.embed_passages(texts), expected)


# ---------------------------------------------------------------- float32 arithmetic (SPEC §5)


def test_slot_is_rounded_to_float32_before_the_norm() -> None:
    # A built-in query: "the" (3 times) adds 1 + ln 3 = 2.09861228866811 to slot 28, which is not
    # a float32. Rounded first (2.0986123085021973) it gives slot 28 one bit more than in float64.
    text = "Which cluster holds the index of the service the Search team owns?"
    small, large = 0x3E915FAF, 0x3F188AA6  # ±0.2839331328868866, ±0.5958656072616577
    sign = 0x80000000
    expected = {
        12: sign | small, 28: sign | large, 98: sign | small, 100: sign | small, 164: sign | small,
        169: small, 205: small, 273: small, 299: small,
    }  # fmt: skip
    assert bits(reference_embedding(text, 384)) == expected
    assert bits(HashingEmbedder().embed_query(text)) == expected
    assert bits(float64_embedding(text, 384))[28] == (sign | large) - 1


def test_colliding_tokens_accumulate_in_float32() -> None:
    # "cell" (13 times) and "stroke" share slot 181 with the same sign: float32(float32(1 + ln 13)
    # + 1) = 4.564949035644531, while the float64 sum rounds to 4.5649495124816895. The vector
    # differs in slot 174 ("memory"): 0xBE5B1F3B instead of 0xBE5B1F3A.
    text = " ".join(["cell"] * 13 + ["stroke", "memory"])
    assert (fnv1a_32("cell") % 384, fnv1a_32("stroke") % 384, fnv1a_32("memory") % 384) == (181, 181, 174)
    expected = {174: 0xBE5B1F3B, 181: 0x3F7A11F8}
    assert bits(reference_embedding(text, 384)) == expected
    assert bits(HashingEmbedder().embed_query(text)) == expected
    assert bits(float64_embedding(text, 384)) == {174: 0xBE5B1F3A, 181: 0x3F7A11F8}


def test_cancelling_tokens_leave_the_float32_rounding_error() -> None:
    # dim 7: "beta" (+) and "lambda" (-) share slot 4, each twice. float32(1 + ln 2) - (1 + ln 2)
    # is 1.9046542121259336e-09, not 0 as in float64: alone it normalises to 1.0; next to
    # "gamma" (slot 2, -1) it stays 1.9046542e-09 (0x3102E308).
    assert (fnv1a_32("beta") % 7, fnv1a_32("lambda") % 7, fnv1a_32("gamma") % 7) == (4, 4, 2)
    emb = HashingEmbedder(dim=7)
    assert bits(emb.embed_query("beta beta lambda lambda")) == {4: 0x3F800000}
    assert bits(reference_embedding("beta beta lambda lambda", 7)) == {4: 0x3F800000}
    assert bits(float64_embedding("beta beta lambda lambda", 7)) == {}
    assert bits(emb.embed_query("beta beta lambda lambda gamma")) == {2: 0xBF800000, 4: 0x3102E308}
    assert float(np.float32(1.0 + math.log(2))) - (1.0 + math.log(2)) == 1.9046542121259336e-09


@given(st.text())
def test_at_an_even_dim_the_sign_is_fixed_by_the_slots_parity(token: str) -> None:
    # FNV-1a's low bit is the offset's (1) XOR the low bits of every unit, and those of "sign:"
    # XOR to 1: the sign hash is even exactly when FNV-1a(token) is odd. So at dim 384 a token in
    # an odd slot counts +1, in an even slot -1, and tokens sharing a slot never cancel (the
    # cancellation above needs an odd dim).
    assert (fnv1a_32("sign:" + token) % 2 == 0) == (fnv1a_32(token) % 384 % 2 == 1)
