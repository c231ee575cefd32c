"""Overhead of the HTTP and MCP adapters against in-process, on the built-in suite (deterministic).

Usage (from the repo root; needs the `http` and `mcp` extras):

    python benchmarks/bench_systems.py

Every system is the reference store, reached another way; each is a `Contender` in `CONTENDERS`
(add one there: a name, a function that starts what it needs and returns the system, and its
target). The servers start once, before timing, each in a subprocess on a free loopback port
(or stdio). Each round runs every contender back to back (both passes, 88 searches, seeding
included) in this process through `evalkit.run_eval`, each round starting with the next
contender (so that a burst of load on a shared machine does not always hit the same one); the
figures are medians over `--repeats` rounds of
- the whole run's wall time (seeding + searches + scoring);
- its ratio to the in-process run of the same round (a burst of load, or the machine's slower
  minutes, slow both runs of a round alike: the ratio of medians of separate runs is noisier),
  checked against the contender's target (`--` when it has none), with the lowest and highest
  round's ratio and in how many rounds the target was met;
- the search latency p50 and p95 recorded in the run (the adapter's round trip included; a
  batched search is credited its share of the batch's round trip).
The reports' metrics are checked to be identical.

Then the bare round trip: a FastAPI app that answers one POST with a search reply of the suite
(the same JSON evalkit serve sends, held in memory: no store, no validation), served by uvicorn
with its defaults in a subprocess and called `--calls` times over one httpx connection with the
JSON of a search request. Its p50 is the floor any HTTP adapter pays per search. The same loop
then times `--calls` single searches (one request each, no batch) of the suite's first scenario
in-process and over HTTP; their p50 difference, the HTTP per-search overhead, is checked to stay
within `PER_SEARCH_TARGET` bare round trips. The runs' own per-search p50s are printed beside it
(with the batch endpoint a search's share of its batch). This is a script, not a test: it exits
1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

import evalkit
from evalkit.systems.base import OpenContext, SearchOptions

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT / "datasets"

PER_SEARCH_TARGET = 1.5
"""The most the HTTP adapter's per-search overhead over in-process may be, in bare round trips."""


@dataclass(frozen=True)
class Contender:
    """One way of reaching the reference store: `start(stack)` starts what it needs (servers,
    clients; their cleanup registered on `stack`) and returns the system to run (None =
    in-process); `target` is the most its run may take, as a multiple of in-process."""

    name: str
    start: Callable[[ExitStack], evalkit.MemorySystem | None]
    target: float | None = None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(stack: ExitStack, argv: list[str], url: str, what: str) -> None:
    """Run `argv` (a server) in a subprocess until `stack` closes; return once `url` answers."""
    server = subprocess.Popen(argv, stderr=subprocess.PIPE)  # stderr read only when it fails

    def stop() -> None:
        server.terminate()  # evalkit serve says "evalkit: terminated (SIGTERM)" on stderr: not shown
        server.communicate(timeout=30)

    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url)
            stack.callback(stop)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                errors = server.communicate()[1].decode(errors="replace")[-2000:]
                raise RuntimeError(f"{what} did not start:\n{errors}") from None
            time.sleep(0.2)


def evalkit_serve(stack: ExitStack) -> str:
    """`evalkit serve` on a free loopback port (started once per script run); its URL."""
    if not hasattr(evalkit_serve, "url"):
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        start_server(
            stack,
            [sys.executable, "-m", "evalkit", "serve", "--port", str(port)],
            f"{url}/info",
            "evalkit serve",
        )
        evalkit_serve.url = url  # type: ignore[attr-defined]
    return str(evalkit_serve.url)  # type: ignore[attr-defined]


def http_system(*, batch: bool) -> Callable[[ExitStack], evalkit.MemorySystem]:
    def start(stack: ExitStack) -> evalkit.MemorySystem:
        from evalkit.systems.http.client import HttpSystem

        system = HttpSystem(evalkit_serve(stack), batch=batch)
        stack.callback(system.close)
        return system

    return start


def mcp_system(stack: ExitStack) -> evalkit.MemorySystem:
    from evalkit.systems.mcp.adapter import McpSystem

    system = McpSystem.from_mapping(DATASETS / "mcp" / "reference.toml")
    stack.callback(system.close)
    return system


CONTENDERS: list[Contender] = [
    Contender("in-process", lambda stack: None),
    Contender("http", http_system(batch=True), target=1.5),
    Contender("http (one search per request)", http_system(batch=False)),
    Contender("mcp", mcp_system, target=2.0),
]
"""What the script compares, in this order; the first is the in-process base."""


def timed(system: evalkit.MemorySystem | None) -> tuple[float, evalkit.EvalRun]:
    started = time.perf_counter()
    run = evalkit.run_eval(datasets=DATASETS, system=system, thresholds=None)
    return time.perf_counter() - started, run


def sample_search(tmp: Path) -> tuple[bytes, bytes]:
    """The JSON of a search request of the built-in suite and of the reply the reference store
    gives it (the largest reply of the suite's first scenario), as evalkit sends them."""
    from evalkit.scenarios import load_suite
    from evalkit.scenarios.seeding import seed_edges, seed_thoughts
    from evalkit.systems.http.wire import SearchIn, search_json

    suite = load_suite(DATASETS)
    scenario = suite.scenarios[0]
    now = datetime.now(UTC).replace(microsecond=0)
    best: tuple[int, bytes, bytes] = (-1, b"", b"")
    with evalkit.ReferenceSystem().open(OpenContext(tmp)) as memory:
        memory.add_thoughts(seed_thoughts(scenario, suite.distractors, now))
        memory.add_edges(seed_edges(scenario))
        for query in scenario.queries:
            request = SearchIn(query=query.query, top_k=query.top_k or 5, min_relevance=0.0, now=now)
            options = request.model_dump()
            reply = search_json(memory.search(options.pop("query"), SearchOptions(**options)))
            if len(reply) > best[0]:
                best = (len(reply), request.model_dump_json().encode(), reply)
    return best[1], best[2]


def search_loop(system: evalkit.MemorySystem, calls: int, tmp: Path) -> list[float]:
    """Milliseconds of each of `calls` single searches (after 20 warm-up ones) of a fresh memory
    of `system` seeded with the suite's first scenario, cycling through its queries, each once
    ungated and once with the default gate (the same work as the run's searches of that
    scenario, timed the same way as the bare round trip)."""
    from bench_remote import first_scenario_searches  # the same searches as the CPU-per-search figure

    _, thoughts, edges, asked = first_scenario_searches()
    times = []
    with system.open(OpenContext(tmp)) as memory:
        memory.add_thoughts(thoughts)
        memory.add_edges(edges)
        for i in range(calls + 20):
            query, options = asked[i % len(asked)]
            started = time.perf_counter()
            memory.search(query, SearchOptions(**options))
            if i >= 20:
                times.append((time.perf_counter() - started) * 1000.0)
    return times


def bare_app(reply_file: str) -> Any:
    """The bare FastAPI app: `POST /search` parses its JSON body and answers the held reply."""
    from fastapi import FastAPI

    reply = json.loads(Path(reply_file).read_text())
    app = FastAPI()

    @app.post("/search")
    async def search(body: dict[str, Any]) -> dict[str, Any]:
        return reply

    @app.get("/")
    async def ready() -> dict[str, bool]:
        return {"ready": True}

    return app


def bare_round_trip(calls: int, stack: ExitStack, tmp: Path) -> list[float]:
    """Milliseconds of each of `calls` round trips to the bare app (after 20 warm-up calls)."""
    request, reply = sample_search(tmp)
    reply_file = tmp / "reply.json"
    reply_file.write_bytes(reply)
    port = free_port()
    argv = [sys.executable, __file__, "--bare-server", str(port), str(reply_file)]
    start_server(stack, argv, f"http://127.0.0.1:{port}/", "the bare FastAPI server")
    times = []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        headers = {"content-type": "application/json"}
        for i in range(calls + 20):
            started = time.perf_counter()
            json.loads(client.post("/search", content=request, headers=headers).content)
            if i >= 20:
                times.append((time.perf_counter() - started) * 1000.0)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=15, help="rounds (each runs every contender once)")
    parser.add_argument("--calls", type=int, default=500, help="round trips of the bare measurement")
    parser.add_argument("--bare-server", nargs=2, metavar=("PORT", "REPLY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_server:
        import uvicorn

        uvicorn.run(
            bare_app(args.bare_server[1]),
            host="127.0.0.1",
            port=int(args.bare_server[0]),
            log_level="warning",
        )
        return 0
    import tempfile

    names = [c.name for c in CONTENDERS]
    seconds: dict[str, list[float]] = {name: [] for name in names}
    p50: dict[str, list[float]] = {name: [] for name in names}
    p95: dict[str, list[float]] = {name: [] for name in names}
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        systems = {c.name: c.start(stack) for c in CONTENDERS}
        for system in systems.values():
            timed(system)  # warm-up: imports, first store, connections
        for round_ in range(args.repeats):
            overall = {}
            order = names[round_ % len(names) :] + names[: round_ % len(names)]  # no contender always first
            for name in order:
                wall, run = timed(systems[name])
                latency = run.result.latency
                assert latency is not None and latency.overall is not None
                seconds[name].append(wall)
                p50[name].append(latency.overall.p50_ms)
                p95[name].append(latency.overall.p95_ms)
                overall[name] = run.result.overall
            assert all(value == overall[names[0]] for value in overall.values()), "metrics differ"
        bare = bare_round_trip(args.calls, stack, Path(tmp))
        from evalkit.systems.http.client import HttpSystem

        single = HttpSystem(evalkit_serve(stack), batch=False)
        stack.callback(single.close)
        local_loop = search_loop(evalkit.ReferenceSystem(), args.calls, Path(tmp))
        http_loop = search_loop(single, args.calls, Path(tmp))
    base_p50 = statistics.median(p50[names[0]])
    missed = []
    print(f"built-in suite, deterministic, both passes; medians of {args.repeats} rounds")
    print(
        f"{'system':<31} {'run s':>7} {'ratio':>6} {'rounds':>11} {'target':>7} {'met':>7} "
        f"{'p50 ms':>8} {'p95 ms':>8}"
    )
    for contender in CONTENDERS:
        name = contender.name
        wall, mid, high = (statistics.median(v[name]) for v in (seconds, p50, p95))
        ratios = [run / base for run, base in zip(seconds[name], seconds[names[0]], strict=True)]
        ratio = statistics.median(ratios)
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
        target, met = "--", "--"
        if contender.target is not None:
            target = f"<={contender.target:g}"
            met = f"{sum(r <= contender.target for r in ratios)}/{len(ratios)}"
            if ratio > contender.target:
                missed.append(f"{name}: {ratio:.2f}x in-process (median round), over {contender.target:g}x")
        figures = f"{wall:>7.2f} {ratio:>6.2f} {spread:>11} {target:>7} {met:>7} {mid:>8.2f} {high:>8.2f}"
        print(f"{name:<31} {figures}")
    bare_p50 = statistics.median(bare)
    print(
        f"bare FastAPI + httpx round trip (uvicorn defaults, {args.calls} calls): "
        f"p50 {bare_p50:.2f} ms, p95 {statistics.quantiles(bare, n=20)[-1]:.2f} ms"
    )
    local_p50, http_p50 = statistics.median(local_loop), statistics.median(http_loop)
    overhead = http_p50 - local_p50
    print(
        f"single searches ({args.calls} calls, one request each): in-process p50 {local_p50:.2f} ms, "
        f"HTTP p50 {http_p50:.2f} ms; overhead {overhead:.2f} ms = {overhead / bare_p50:.2f} bare round "
        f"trips (target <= {PER_SEARCH_TARGET:g})"
    )
    if overhead > PER_SEARCH_TARGET * bare_p50:
        missed.append(
            f"per-search overhead {overhead / bare_p50:.2f} bare round trips, over {PER_SEARCH_TARGET:g}"
        )
    batched = statistics.median(p50["http"]) - base_p50
    print(
        f"in the runs (p50 per search): http {batched:.2f} ms over in-process = "
        f"{batched / bare_p50:.2f} bare round trips with the batch endpoint; "
        f"{statistics.median(p50['http (one search per request)']) - base_p50:.2f} ms without"
    )
    for line in missed:
        print(f"target missed: {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
