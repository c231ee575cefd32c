"""Benchmark the reference memory store: seeding throughput and search latency.

Usage (from the repo root):

    python benchmarks/bench_store.py --sizes 10000,100000 --queries 200

For each size, seeds that many synthetic thoughts (sentences drawn from a seeded, Zipf-weighted
vocabulary of pronounceable pseudo-words mixed with English function words) into a temporary
file-backed store, then times `MemoryStore.search` in the hybrid, bm25 and vector modes with the
harness's agent-facing options (`supersession="suppress"`, `min_relevance=0`, top_k 10, so K = 40
and the vector pool is 400). Each figure is printed next to the raw sqlite-vec KNN query
(`SELECT rowid, distance FROM thoughts_vec WHERE embedding MATCH ? AND k = ?`, k = the same pool)
on the same database, as a ratio. Search latency includes embedding the query; the raw KNN query
gets pre-computed vectors. Seeding and latency are reported by wall clock and by process CPU time
(robust to other load on a shared machine). The temporary directory is removed afterwards, even
on error or Ctrl-C.

This is a script, not a test: it asserts nothing and never runs in CI.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.embedders import HashingEmbedder
from evalkit.memory import MemoryStore
from evalkit.memory.pipeline import candidate_budget, vector_pool
from evalkit.records import Thought
from evalkit.sqlite import connect

_ONSETS = ("b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "st", "tr", "pl", "gr")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ea")
_CODAS = ("", "", "n", "r", "s", "t", "l", "m", "nd", "rk", "st")
_FUNCTION_WORDS = ("the", "a", "of", "to", "in", "and", "is", "for", "on", "with", "that", "uses", "runs")
_TOP_K = 10
_OPTIONS: dict[str, Any] = {"top_k": _TOP_K, "supersession": "suppress", "min_relevance": 0.0}


def make_vocabulary(rng: random.Random, size: int) -> list[str]:
    """`size` distinct pronounceable pseudo-words of 1 to 3 syllables."""
    words: set[str] = set()
    while len(words) < size:
        syllables = rng.randint(1, 3)
        words.add(
            "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables))
        )
    return sorted(words)


class SentenceSource:
    """Sentences of 8 to 24 words: Zipf-weighted content words with function words between them."""

    def __init__(self, seed: int, vocabulary_size: int = 20_000) -> None:
        self._rng = random.Random(seed)
        self.vocabulary = make_vocabulary(self._rng, vocabulary_size)
        self._weights = [1.0 / (rank + 1) for rank in range(len(self.vocabulary))]
        self._cumulative = list(np.cumsum(self._weights))

    def words(self, n: int) -> list[str]:
        return self._rng.choices(self.vocabulary, cum_weights=self._cumulative, k=n)

    def sentence(self) -> str:
        out = []
        for word in self.words(self._rng.randint(8, 24)):
            out.append(word)
            if self._rng.random() < 0.3:
                out.append(self._rng.choice(_FUNCTION_WORDS))
        return " ".join(out).capitalize() + "."

    def query(self) -> str:
        return " ".join(self.words(self._rng.randint(2, 6)))


def thoughts(source: SentenceSource, n: int) -> Iterator[Thought]:
    projects = ("alpha", "beta", "gamma", "default")
    for i in range(n):
        yield Thought(id=f"t{i:07d}", content=source.sentence(), project=projects[i % len(projects)])


@dataclass(frozen=True)
class Latency:
    """p50 and p95 of one timed series, in milliseconds, by wall clock and by process CPU time."""

    wall: tuple[float, float]
    cpu: tuple[float, float]

    def row(self, name: str, knn: Latency) -> str:
        """One table line: wall p50/p95, CPU p50/p95, then each divided by the raw KNN's."""
        values = (*self.wall, *self.cpu)
        ratios = [v / k for v, k in zip(values, (*knn.wall, *knn.cpu), strict=True)]
        return (
            f"{name:<8} "
            + " ".join(f"{v:>8.2f}" for v in values)
            + "   "
            + " ".join(f"{r:>7.2f}" for r in ratios)
        )


_HEADER = f"{'':<8} " + " ".join(f"{h:>8}" for h in ("wall p50", "wall p95", "cpu p50", "cpu p95")) + "   "
_HEADER += " ".join(f"{h:>7}" for h in ("÷KNN", "÷KNN", "÷KNN", "÷KNN"))


def percentiles(samples: Sequence[float]) -> tuple[float, float]:
    """(p50, p95) of `samples` (seconds) in milliseconds."""
    p50, p95 = np.percentile(np.asarray(samples) * 1000.0, [50, 95])
    return float(p50), float(p95)


def time_each(calls: Sequence[Callable[[], object]]) -> Latency:
    """Run each call once, timing it by wall clock and by this process's CPU time.

    CPU time is reported too because a shared machine inflates wall-clock figures; SQLite and
    sqlite-vec run in this thread, so CPU time covers the whole search.
    """
    wall, cpu = [], []
    for call in calls:
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        call()
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start_wall)
    return Latency(percentiles(wall), percentiles(cpu))


def _fetch_all(conn: Any, sql: str, params: tuple[object, ...]) -> list[Any]:
    return list(conn.execute(sql, params).fetchall())


def bench_size(size: int, n_queries: int, seed: int, workdir: Path) -> None:
    source = SentenceSource(seed)
    embedder = HashingEmbedder()
    path = workdir / f"store-{size}.db"
    with MemoryStore(path, embedder) as store:
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        store.add_thoughts(thoughts(source, size))
        wall, cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
        print(
            f"\n== {size:,} thoughts: seeded in {wall:.1f} s wall ({size / wall:,.0f} thoughts/s), "
            f"{cpu:.1f} s CPU ({size / cpu:,.0f} thoughts/CPU-s)"
        )

        queries = [source.query() for _ in range(n_queries)]
        pool = vector_pool(candidate_budget(_TOP_K, suppress=True, gated=False))
        raw = connect(path)
        try:
            blobs = [embedder.embed_query(q).astype("<f4").tobytes() for q in queries]
            knn_sql = "SELECT rowid, distance FROM thoughts_vec WHERE embedding MATCH ? AND k = ?"
            # Warm the page cache and the vec0 chunks once before timing anything.
            raw.execute(knn_sql, (blobs[0], pool)).fetchall()
            knn = time_each([partial(_fetch_all, raw, knn_sql, (b, pool)) for b in blobs])
        finally:
            raw.close()
        print(f"search latency over {n_queries} queries, ms; ratios = mode / raw sqlite-vec KNN (k={pool})")
        print(_HEADER)
        print(knn.row("raw KNN", knn))
        for mode in ("hybrid", "bm25", "vector"):
            searches = [partial(store.search, q, retrieval=mode, **_OPTIONS) for q in queries]
            print(time_each(searches).row(mode, knn))


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes wants comma-separated integers, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"--sizes wants positive integers, got {text!r}")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=parse_sizes, default=[10_000, 100_000], help="store sizes to seed")
    parser.add_argument("--queries", type=int, default=200, help="queries timed per mode and size")
    parser.add_argument("--seed", type=int, default=7, help="seed of the synthetic corpus and queries")
    args = parser.parse_args(argv)
    if args.queries < 1:
        parser.error("--queries must be at least 1")
    workdir = Path(tempfile.mkdtemp(prefix="evalkit-bench-"))
    try:
        for size in args.sizes:
            bench_size(size, args.queries, args.seed, workdir)
    except KeyboardInterrupt:
        print("\ninterrupted; removing temporary store", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
