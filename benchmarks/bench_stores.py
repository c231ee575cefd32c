"""The built-in suite on each built-in vector store beside the reference store, in one run.

Usage (from the repo root; needs the `chroma`, `qdrant`, `lancedb` and `pgvector` extras):

    python benchmarks/bench_stores.py [--repeats 3] [--real]

Rows: the reference store on the whole suite; the reference store on only the scenarios a store
can be judged on (its capabilities: a project filter and global thoughts), so that its means
average the same queries as the store rows; then `chroma`, `lancedb`, `pgvector` (a private
PostgreSQL from `pgserver`, started before timing) and `qdrant` (local mode). Every run is the
ungated pass only (the stores have no relevance gate, so they get no gated pass). Columns:
overall recall, precision, MRR and hit rate at the run's top_k, the number of not-applicable
scenarios, and the median over `--repeats` rounds of the search latency p50 recorded in the run.
Each system's metrics are checked to be the same on every round. This is a script, not a test.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable

import evalkit
from evalkit.embedders import Embedder
from evalkit.embedders.factory import make_embedder
from evalkit.harness.config import DEFAULT_DATASETS
from evalkit.scenarios import load_suite
from evalkit.scenarios.requirements import required_capabilities
from evalkit.systems.resolve import resolve_system
from evalkit.systems.stores import STORES
from evalkit.systems.stores.common import STORE_CAPABILITIES, StoreSystem


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--real", action="store_true", help="MiniLM instead of the hashing embedder")
    args = parser.parse_args()
    mode = "real" if args.real else "deterministic"
    embedder: Callable[[], Embedder] = lambda: make_embedder(mode)  # noqa: E731
    stores = {name: resolve_system(name, evalkit.ReferenceSystem, embedder) for name in sorted(STORES)}
    judged = [
        s.name
        for s in load_suite(DEFAULT_DATASETS).scenarios
        if required_capabilities(s) <= STORE_CAPABILITIES
    ]
    runs: list[tuple[str, evalkit.MemorySystem | str, list[str] | None]] = [
        ("reference", "reference", None),
        ("reference (the stores' scenarios)", "reference", judged),
        *((name, system, None) for name, system in stores.items()),
    ]
    results: dict[str, tuple[dict[str, float], int]] = {}
    p50: dict[str, list[float]] = {label: [] for label, _, _ in runs}
    try:
        for system in stores.values():
            if isinstance(system, StoreSystem) and system.name == "pgvector":
                system.url()  # type: ignore[attr-defined]  # the private server starts before timing
        for _ in range(args.repeats):
            for label, system, scenarios in runs:
                run = evalkit.run_eval(
                    system=system, scenarios=scenarios, thresholds=None, mode=mode, gated=False
                )
                latency = run.result.latency
                assert latency is not None and latency.overall is not None
                seen = (dict(run.result.overall.metrics), len(run.result.not_applicable))
                if results.setdefault(label, seen) != seen:
                    raise SystemExit(f"{label}: the metrics differ between rounds")
                p50[label].append(latency.overall.p50_ms)
    finally:
        for system in stores.values():
            system.close()  # type: ignore[attr-defined]
    print(f"built-in suite, {mode} mode, ungated pass; search p50 = median of {args.repeats} rounds")
    print("| system | recall | precision | MRR | hit rate | not applicable | search p50 (ms) |")
    print("|---|---|---|---|---|---|---|")
    for label, _, _ in runs:
        metrics, not_applicable = results[label]
        print(
            f"| {label} | {metrics['recall']:.3f} | {metrics['precision']:.3f} | {metrics['mrr']:.3f} | "
            f"{metrics['hit_rate']:.3f} | {not_applicable} | {statistics.median(p50[label]):.2f} |"
        )


if __name__ == "__main__":
    main()
