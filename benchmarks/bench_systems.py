"""Overhead of the HTTP and MCP adapters against in-process, on the built-in suite (deterministic).

Usage (from the repo root; needs the `http` and `mcp` extras):

    python benchmarks/bench_systems.py --repeats 5

Three systems, all the reference store: in-process (`reference`), over HTTP (`evalkit serve` in a
subprocess on a free loopback port) and over MCP (`evalkit serve --mcp`, stdio, through
`datasets/mcp/reference.toml`). The servers start once, before timing. Each round runs the three
back to back (both passes, 88 searches, seeding included) in this process through
`evalkit.run_eval`; the figures are medians over `--repeats` rounds of
- the whole run's wall time (seeding + searches + scoring) and its ratio to in-process;
- the search latency p50 and p95 recorded in the run (the adapter's round trip included).
The reports' metrics are checked to be identical. This is a script, not a test.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

import evalkit

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT / "datasets"


def start_http_server() -> tuple[subprocess.Popen[bytes], str]:
    """`evalkit serve` on a free loopback port; returns the process and its URL once it answers."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(  # its stderr is read only when it fails (it logs warnings only)
        [sys.executable, "-m", "evalkit", "serve", "--port", str(port)], stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{url}/info")
            return server, url
        except httpx.TransportError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                errors = server.communicate()[1].decode(errors="replace")[-2000:]
                raise RuntimeError(f"evalkit serve did not start:\n{errors}") from None
            time.sleep(0.2)


def timed(system: evalkit.MemorySystem | None) -> tuple[float, evalkit.EvalRun]:
    started = time.perf_counter()
    run = evalkit.run_eval(datasets=DATASETS, system=system, thresholds=None)
    return time.perf_counter() - started, run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from evalkit.systems.http_client import HttpSystem
    from evalkit.systems.mcp_adapter import McpSystem

    server, url = start_http_server()
    mcp = McpSystem.from_mapping(DATASETS / "mcp" / "reference.toml")
    systems: dict[str, evalkit.MemorySystem | None] = {
        "in-process": None,
        "http": HttpSystem(url),
        "mcp": mcp,
    }
    seconds: dict[str, list[float]] = {name: [] for name in systems}
    p50: dict[str, list[float]] = {name: [] for name in systems}
    p95: dict[str, list[float]] = {name: [] for name in systems}
    try:
        timed(None)  # warm-up: imports, first store
        for _ in range(args.repeats):
            overall = {}
            for name, system in systems.items():
                wall, run = timed(system)
                latency = run.result.latency
                assert latency is not None and latency.overall is not None
                seconds[name].append(wall)
                p50[name].append(latency.overall.p50_ms)
                p95[name].append(latency.overall.p95_ms)
                overall[name] = run.result.overall
            assert overall["http"] == overall["in-process"] == overall["mcp"], "metrics differ"
    finally:
        mcp.close()
        server.terminate()  # it says "evalkit: terminated (SIGTERM)" on its stderr: not shown
        server.communicate(timeout=30)
    base = statistics.median(seconds["in-process"])
    base_p50 = statistics.median(p50["in-process"])
    print(f"built-in suite, deterministic, both passes; medians of {args.repeats} rounds")
    print(f"{'system':<11} {'run s':>7} {'ratio':>6} {'p50 ms':>8} {'p95 ms':>8} {'p50 ratio':>10}")
    for name in systems:
        wall, mid, high = (statistics.median(v[name]) for v in (seconds, p50, p95))
        print(f"{name:<11} {wall:>7.2f} {wall / base:>6.2f} {mid:>8.2f} {high:>8.2f} {mid / base_p50:>10.2f}")


if __name__ == "__main__":
    main()
