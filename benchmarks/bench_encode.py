"""Benchmark the embedding cache: CachedEmbedder (cold and warm) against a bare `model.encode`.

Usage (from the repo root; needs the `real` extra):

    python benchmarks/bench_encode.py --texts 2000 --repeats 3

Texts: the first N distinct titles of a BEIR corpus.jsonl (default: the shared SciFact copy),
one sentence each. One SentenceTransformer (the packaged all-MiniLM-L6-v2, CPU) serves both
sides: the bare side calls `model.encode(texts, batch_size=64, normalize_embeddings=True)`; the
cached side is `CachedEmbedder(SentenceTransformerEmbedder(encoder=model), EmbeddingCache(file))`
— the same encode call plus the cache lookup, the write-back and the copy into place.

Each repeat runs, side by side: bare encode; cached cold (new, empty cache file); cached warm
(the cache file reopened, as the next run would, and every text looked up). Medians are printed
with the ratios cold/bare and cold/warm, and the cache's own share of the cold run (its wall
time minus the time spent inside `model.encode` in that same run, which stays meaningful on a
busy machine). One small warm-up encode runs first. Temporary cache files are removed afterwards.
This is a script, not a test: it asserts nothing and never runs in CI.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.embedders import SentenceTransformerEmbedder
from evalkit.embedders.cache import CachedEmbedder, EmbeddingCache
from evalkit.embedders.sentence_transformer import DEFAULT_MODEL, resolve_model_dir

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact" / "corpus.jsonl"
BATCH_SIZE = 64


def read_titles(corpus: Path, count: int) -> list[str]:
    """The first `count` distinct non-empty titles of a BEIR corpus.jsonl."""
    titles: dict[str, None] = {}
    with corpus.open(encoding="utf-8") as handle:
        for line in handle:
            title = json.loads(line).get("title", "").strip()
            if title:
                titles[title] = None
            if len(titles) == count:
                break
    return list(titles)


class TimedEncoder:
    """Wraps the model and adds up the seconds spent inside `encode`, so the cache's own share of
    a cold run is measured in the same run (robust to load on a shared machine)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self.seconds = 0.0

    def encode(self, inputs: list[str], /, **options: Any) -> Any:
        start = time.perf_counter()
        try:
            return self._model.encode(inputs, **options)
        finally:
            self.seconds += time.perf_counter() - start

    def get_embedding_dimension(self) -> int | None:
        return self._model.get_embedding_dimension()


def _row(label: str, seconds: float, texts: int, note: str) -> str:
    return f"  {label:<21} {seconds:8.3f} s {texts / seconds:8.0f} texts/s  {note}".rstrip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--texts", type=int, default=2000, help="number of sentences to encode")
    parser.add_argument("--repeats", type=int, default=3, help="side-by-side repetitions (medians reported)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="a BEIR corpus.jsonl")
    args = parser.parse_args(argv)
    if not args.corpus.is_file():
        print(f"corpus {args.corpus} not found; pass --corpus path/to/corpus.jsonl", file=sys.stderr)
        return 2
    texts = read_titles(args.corpus, args.texts)

    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(resolve_model_dir(None)), device="cpu", local_files_only=True)
    timed = TimedEncoder(model)
    embedder = SentenceTransformerEmbedder(
        DEFAULT_MODEL, encoder=timed, batch_size=BATCH_SIZE, progress=False
    )
    embedder.embed_passages(texts[:BATCH_SIZE])  # warm-up (first-call overhead)

    timings: dict[str, list[float]] = {"bare": [], "cold": [], "cold_overhead": [], "warm": []}
    max_diff = 0.0
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-encode-") as tmp:
        for repeat in range(args.repeats):
            path = Path(tmp) / f"cache-{repeat}.sqlite3"
            start = time.perf_counter()
            bare = model.encode(
                texts, batch_size=BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False
            )
            timings["bare"].append(time.perf_counter() - start)

            timed.seconds = 0.0
            start = time.perf_counter()
            with EmbeddingCache(path) as cache:
                cold = CachedEmbedder(embedder, cache).embed_passages(texts)
            timings["cold"].append(time.perf_counter() - start)
            timings["cold_overhead"].append(timings["cold"][-1] - timed.seconds)

            start = time.perf_counter()
            with EmbeddingCache(path) as cache:
                cached = CachedEmbedder(embedder, cache)
                warm = cached.embed_passages(texts)
            timings["warm"].append(time.perf_counter() - start)
            if cached.stats.misses:
                print(f"warning: warm pass missed {cached.stats.misses} texts", file=sys.stderr)
            max_diff = max(max_diff, float(np.abs(cold - bare).max()), float(np.abs(warm - cold).max()))
            size_mb = path.stat().st_size / 1e6

    bare_s, cold_s, overhead_s, warm_s = (statistics.median(v) for v in timings.values())
    n = len(texts)
    print(
        f"{n} texts (SciFact titles), batch size {BATCH_SIZE}, median of {args.repeats} side-by-side repeats"
    )
    print(_row("bare model.encode", bare_s, n, ""))
    print(_row("CachedEmbedder cold", cold_s, n, f"cold/bare {cold_s / bare_s:.3f}"))
    print(
        f"    of which cache work {overhead_s:8.3f} s "
        f"(open, lookup, write-back: {overhead_s / bare_s:.2%} of bare)"
    )
    print(_row("CachedEmbedder warm", warm_s, n, f"cold/warm {cold_s / warm_s:.0f}x"))
    print(f"  cache file {size_mb:.2f} MB; max |difference| between sides {max_diff:.2e}")
    print(f"  raw timings (s): {json.dumps({k: [round(v, 4) for v in vs] for k, vs in timings.items()})}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
