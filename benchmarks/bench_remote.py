"""Benchmark what a run against a remote system waits for: scenarios in flight, and the client's
CPU per search.

Usage (from the repo root; needs the `http` and `mcp` extras):

    python benchmarks/bench_remote.py                      # 3 rounds, 1,500 scenarios at 32 in flight
    python benchmarks/bench_remote.py --rounds 5 --searches 1000 --no-scale

1. Scenarios in flight (wall time). Two fixture services, each the reference store behind
   evalkit's own server in a subprocess with 50 ms added before every call on a memory (an
   `asyncio.sleep` in `Namespaces.run`: every request or tool call that touches a namespace),
   so that the figure is set by the latency, not by the machine's load: HTTP (`evalkit serve`'s
   app on uvicorn) and MCP (`evalkit serve --mcp` over stdio: one server process per scenario in
   flight, every one started before timing by a warm-up run). The built-in suite replicated to
   210 scenarios (`bench_scale.replicate`) runs through `evalkit.run_eval` with 1 and with 8 in
   flight (`make_executor("processes", N)`, which is what `--workers N` builds), alternating,
   `--rounds` times each; the median of the rounds' ratios is printed against its target (>= 6x)
   and the reports are checked identical (`tests.shared.comparable`: apart from time,
   provenance and latencies). Then the suite replicated to 1,500 scenarios runs once with 32 in
   flight: its wall time, scenarios per second, and its speedup over 1 in flight projected from
   the 210-scenario serial runs' time per scenario.
2. The client's CPU per search (process CPU time of this process, every thread included: the
   servers run in subprocesses). The reference store served without the delay; one namespace
   seeded with the built-in suite's first scenario; `--searches` single searches (cycling through
   its queries, ungated and gated) through evalkit's adapter (`memory.search`, one request or
   tool call each: what the adapter adds, not the runner's scoring) against the same searches
   sent bare: over HTTP `httpx.Client.post` of the body evalkit sent to the same server, the
   reply's body read; over MCP the SDK's `ClientSession.call_tool` with the arguments evalkit
   sent, to a server of its own (`stdio_client`), with the SDK's default check of structured
   output against the tool's outputSchema and without it (evalkit's adapter turns that check
   off and checks every result itself; the target is judged against the cheaper bare call).
   The HTTP server's own CPU per search (its process's utime + stime from /proc) is printed
   beside it. Evalkit and bare alternate within each of `--rounds` rounds; medians of the rounds.

Targets (issue 37) are printed beside the figures. This is a script, not a test: it asserts
nothing and never runs in CI; its servers and temporary files are removed at the end, even on
error or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# this tree's evalkit, here and in every server started (not an installed one: a venv's editable
# install may point at another tree), bench_scale's replicate, tests.shared's comparable
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

from evalkit.systems.base import OpenContext, SearchOptions  # noqa: E402

DATASETS = ROOT / "datasets"
REFERENCE_MAPPING = DATASETS / "mcp" / "reference.toml"
DELAY = 0.05
"""Seconds the fixture services add before every call on a memory."""

IN_FLIGHT_TARGET = 6.0
"""8 in flight against 1: at least this much faster (wall)."""

CPU_TARGET = 1.5
"""The adapter's client CPU per search: at most this many times a bare call's."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --------------------------------------------------------------------------- the fixture servers


def delayed_namespaces(delay: float) -> None:
    """Every call on a memory of this process's servers waits `delay` seconds first (without
    blocking the event loop: requests in flight wait together)."""
    from evalkit.systems.namespaces import Namespaces

    original = Namespaces.run

    async def run(self: Any, fn: Callable[..., Any], *args: Any) -> Any:
        await asyncio.sleep(delay)
        return await original(self, fn, *args)

    Namespaces.run = run  # type: ignore[method-assign]


def serve_http(port: int, delay: float) -> None:
    """`evalkit serve` on 127.0.0.1:`port`, `delay` added to every call."""
    from evalkit import ReferenceSystem
    from evalkit.systems.http import server as http_server

    if delay:
        delayed_namespaces(delay)
    http_server.serve(ReferenceSystem(), host="127.0.0.1", port=port)


def serve_mcp(delay: float) -> None:
    """`evalkit serve --mcp` over stdio, `delay` added to every call."""
    from evalkit import ReferenceSystem
    from evalkit.systems.mcp.server import serve_stdio

    if delay:
        delayed_namespaces(delay)
    serve_stdio(ReferenceSystem())


@dataclass
class HttpServer:
    url: str
    process: subprocess.Popen[bytes]

    def cpu_seconds(self) -> float:
        """The server process's user + system CPU seconds so far (/proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def http_server(delay: float) -> Iterator[HttpServer]:
    """A fixture HTTP server in a subprocess until the block ends."""
    import httpx

    port = free_port()
    argv = [sys.executable, __file__, "--serve-http", str(port), str(delay)]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/info")
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the fixture HTTP server did not start") from None
                time.sleep(0.2)
        yield HttpServer(url, process)
    finally:
        process.terminate()
        process.communicate(timeout=30)


def mcp_mapping(folder: Path, delay: float) -> Path:
    """The reference mapping with its server this script's `--serve-mcp DELAY`."""
    text = REFERENCE_MAPPING.read_text(encoding="utf-8")
    args = json.dumps([str(Path(__file__).resolve()), "--serve-mcp", str(delay)])
    replaced = text.replace('args = ["-m", "evalkit", "serve", "--mcp"]', f"args = {args}")
    if replaced == text:
        raise SystemExit(f"{REFERENCE_MAPPING}: its server args changed; update bench_remote.mcp_mapping")
    path = folder / "delayed.toml"
    path.write_text(replaced, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- 1. scenarios in flight


@dataclass
class InFlight:
    """Wall seconds of the 210-scenario runs at 1 and 8 in flight (per round), of the 1,500-scenario
    run at 32 (None when skipped), whether every report equalled the first serial one, the CPU
    milliseconds per scenario of this process (every thread) at 1 and 8 in flight and of the
    server (HTTP: one process; None for MCP's many), and the load average before and after."""

    scenarios: int
    serial: list[float]
    eight: list[float]
    large: tuple[int, float] | None
    identical: bool
    client_ms: dict[int, list[float]]
    server_ms: dict[int, list[float]]
    load: tuple[float, float]


def replicated(work: Path, scenarios: int) -> Path:
    """The built-in suite copied to about `scenarios` scenarios under `work` (`bench_scale`)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_scale import replicate

    per_copy = len(list((DATASETS / "scenarios").glob("*.yaml")))
    out = work / f"suite-{scenarios}"
    replicate(DATASETS, max(1, scenarios // per_copy), out)
    return out


def in_flight(
    system: Any, suite: Path, large: Path | None, rounds: int, server: HttpServer | None = None
) -> InFlight:
    """The runs of part 1 on `system` (already started; `server`: its process, for its CPU)."""
    from evalkit import run_eval
    from evalkit.harness.executors import make_executor
    from tests.shared import comparable

    executors = {n: make_executor("processes", n) for n in (1, 8, 32)}

    def timed(data: Path, workers: int) -> tuple[float, dict[str, Any]]:
        started = time.perf_counter()
        run = run_eval(
            datasets=data, system=system, thresholds=None, executor=executors[workers], progress=False
        )
        wall = time.perf_counter() - started
        return wall, comparable(json.loads(run.result.model_dump_json()))

    timed(suite, 8)  # warm-up: imports, connections, an MCP server per slot
    count = len(list((suite / "scenarios").glob("*.yaml")))
    serial, eight, reports = [], [], []
    client_ms: dict[int, list[float]] = {1: [], 8: []}
    server_ms: dict[int, list[float]] = {1: [], 8: []}
    load = os.getloadavg()[0]
    for round_number in range(rounds):
        print(f"  round {round_number + 1} of {rounds}", file=sys.stderr, flush=True)
        for workers in (1, 8) if round_number % 2 == 0 else (8, 1):
            cpu, served = time.process_time(), server.cpu_seconds() if server else 0.0
            wall, report = timed(suite, workers)
            client_ms[workers].append((time.process_time() - cpu) / count * 1000)
            if server is not None:
                server_ms[workers].append((server.cpu_seconds() - served) / count * 1000)
            (serial if workers == 1 else eight).append(wall)
            reports.append(report)
    identical = all(report == reports[0] for report in reports)
    big = None
    if large is not None:
        timed(suite, 32)  # every slot's server started before timing
        wall, _ = timed(large, 32)
        big = (len(list((large / "scenarios").glob("*.yaml"))), wall)
    return InFlight(count, serial, eight, big, identical, client_ms, server_ms, (load, os.getloadavg()[0]))


# --------------------------------------------------------------------------- 2. CPU per search


def first_scenario_searches() -> tuple[Any, list[Any], list[Any], list[tuple[str, dict[str, Any]]]]:
    """The built-in suite's first scenario: (scenario, seeded thoughts, edges, searches), each
    query once ungated and once with the default gate."""
    from evalkit.scenarios import load_suite
    from evalkit.scenarios.seeding import seed_edges, seed_thoughts

    suite = load_suite(DATASETS)
    scenario = suite.scenarios[0]
    now = datetime.now(UTC).replace(microsecond=0)
    asked = [
        (query.query, dict(top_k=query.top_k or 5, project=query.project, min_relevance=gate,
                           recency_weight=0.0, recency_half_life_days=30.0, now=now))
        for query in scenario.queries
        for gate in (0.0, None)
    ]  # fmt: skip
    return scenario, seed_thoughts(scenario, suite.distractors, now), seed_edges(scenario), asked


def cpu_per_call(calls: int, one: Callable[[int], Any]) -> float:
    """Microseconds of this process's CPU per call of `one(i)`, over `calls` calls."""
    started = time.process_time()
    for i in range(calls):
        one(i)
    return (time.process_time() - started) / calls * 1e6


@dataclass
class CpuFigures:
    """Median microseconds of client CPU per search per variant, and the server's (HTTP only)."""

    client: dict[str, float]
    server: dict[str, float]


def http_cpu(searches: int, rounds: int) -> CpuFigures:
    """Client CPU per search: evalkit's HTTP adapter against bare httpx, on one server."""
    import httpx

    from evalkit.systems.base import NO_WORKDIR
    from evalkit.systems.http.client import HttpSystem

    _, thoughts, edges, asked = first_scenario_searches()
    with http_server(0.0) as server, ExitStack() as stack:
        system = HttpSystem(server.url, batch=False)
        stack.callback(system.close)
        sent: list[tuple[str, str, bytes | None]] = []
        original = system.call

        def recording(method: str, path: str, shape: Any, body: Any = None, **options: Any) -> Any:
            sent.append((method, path, None if body is None else body.model_dump_json().encode()))
            return original(method, path, shape, body, **options)

        system.call = recording  # type: ignore[method-assign]
        memory = stack.enter_context(system.open(OpenContext(NO_WORKDIR, "bench")))
        memory.add_thoughts(thoughts)
        memory.add_edges(edges)
        for query, options in asked:
            memory.search(query, SearchOptions(**options))
        del system.call  # the class's method again
        seed = next(body for method, path, body in sent if method == "POST" and path == "/namespaces")
        bodies = [body for method, path, body in sent if path.endswith("/search")]
        client = stack.enter_context(httpx.Client(base_url=server.url))
        headers = {"content-type": "application/json"}
        namespace = client.post("/namespaces", content=seed, headers=headers).json()["namespace"]

        def bare(i: int) -> Any:
            return client.post(f"/namespaces/{namespace}/search", content=bodies[i % len(bodies)],
                               headers=headers).content  # fmt: skip

        def adapter(i: int) -> Any:
            query, options = asked[i % len(asked)]
            return memory.search(query, SearchOptions(**options))

        client_cpu: dict[str, list[float]] = {"evalkit": [], "bare httpx": []}
        server_cpu: dict[str, list[float]] = {"evalkit": [], "bare httpx": []}
        for one in (adapter, bare):  # warm-up
            cpu_per_call(50, one)
        for round_number in range(rounds):
            pairs = [("evalkit", adapter), ("bare httpx", bare)]
            for name, one in pairs if round_number % 2 == 0 else pairs[::-1]:
                before = server.cpu_seconds()
                client_cpu[name].append(cpu_per_call(searches, one))
                server_cpu[name].append((server.cpu_seconds() - before) / searches * 1e6)
    return CpuFigures(
        {k: statistics.median(v) for k, v in client_cpu.items()},
        {k: statistics.median(v) for k, v in server_cpu.items()},
    )


class _Recording:
    """An MCP session that records each call's tool and arguments (then makes the call)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def call(self, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> Any:
        self.calls.append((tool, copy.deepcopy(arguments)))
        return self.session.call(tool, arguments, timeout=timeout)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


def mcp_cpu(searches: int, rounds: int, work: Path) -> CpuFigures:
    """Client CPU per search: evalkit's MCP adapter against bare SDK calls to a server of their own."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from evalkit.systems.mcp.adapter import McpSystem

    _, thoughts, edges, asked = first_scenario_searches()
    with ExitStack() as stack:
        system = McpSystem.from_mapping(REFERENCE_MAPPING)
        stack.callback(system.close)
        memory = stack.enter_context(system.open(OpenContext(work, "bench")))
        recording = _Recording(memory._session)
        memory._session = recording  # type: ignore[assignment]
        memory.add_thoughts(thoughts)
        memory.add_edges(edges)
        for query, options in asked:
            memory.search(query, SearchOptions(**options))
        memory._session = recording.session
        store = next(call for call in recording.calls if call[0] == "store_thoughts")
        search_calls = [call for call in recording.calls if call[0] == "search"]

        params = StdioServerParameters(
            command=sys.executable, args=["-m", "evalkit", "serve", "--mcp"],
            env=dict(os.environ),  # this tree's evalkit on PYTHONPATH (see ROOT)
        )  # fmt: skip

        def adapter_calls(count: int) -> None:
            for i in range(count):
                query, options = asked[i % len(asked)]
                memory.search(query, SearchOptions(**options))

        async def trust(name: str, result: Any) -> None:
            return None

        async def compare() -> dict[str, list[float]]:
            """Every round, in one task (the SDK's task groups are left where they were entered);
            the adapter's calls block this loop, which has nothing to do meanwhile."""
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()  # what the SDK reads the outputSchemas from
                await session.call_tool(*store)
                checking = session.validate_tool_result

                async def bare(count: int, check: bool) -> None:
                    session.validate_tool_result = checking if check else trust  # type: ignore[method-assign]
                    for i in range(count):
                        await session.call_tool(*search_calls[i % len(search_calls)])

                variants = {
                    "evalkit": None, "bare SDK, its check": True, "bare SDK, no check": False,
                }  # fmt: skip

                async def one(name: str, count: int) -> float:
                    started = time.process_time()
                    check = variants[name]
                    if check is None:
                        adapter_calls(count)
                    else:
                        await bare(count, check)
                    return (time.process_time() - started) / count * 1e6

                for name in variants:  # warm-up
                    await one(name, 50)
                cpu: dict[str, list[float]] = {name: [] for name in variants}
                for round_number in range(rounds):
                    names = list(variants)
                    for name in names if round_number % 2 == 0 else names[::-1]:
                        cpu[name].append(await one(name, searches))
                return cpu

        client_cpu = asyncio.run(compare())
    return CpuFigures({k: statistics.median(v) for k, v in client_cpu.items()}, {})


# --------------------------------------------------------------------------- the report


def met(value: float, target: float, at_least: bool) -> str:
    ok = value >= target if at_least else value <= target
    return "met" if ok else "MISSED"


def print_in_flight(name: str, figures: InFlight) -> None:
    serial, eight = statistics.median(figures.serial), statistics.median(figures.eight)
    ratios = [s / e for s, e in zip(figures.serial, figures.eight, strict=True)]
    ratio = statistics.median(ratios)
    print(
        f"{name:<5} {figures.scenarios} scenarios: 1 in flight {serial:7.2f} s, 8 in flight "
        f"{eight:6.2f} s -> {ratio:5.2f}x faster (rounds {min(ratios):.2f}-{max(ratios):.2f})   "
        f"target >= {IN_FLIGHT_TARGET:g}x: {met(ratio, IN_FLIGHT_TARGET, True)}; reports identical: "
        f"{'yes' if figures.identical else 'NO'}"
    )
    cpu = " / ".join(f"{statistics.median(figures.client_ms[n]):.1f}" for n in (1, 8))
    served = ""
    if all(figures.server_ms.values()):
        served = ", the server's " + " / ".join(
            f"{statistics.median(figures.server_ms[n]):.1f}" for n in (1, 8)
        )
    print(
        f"{'':<5} CPU ms per scenario at 1 / 8 in flight: this process's {cpu}{served}; "
        f"load average {figures.load[0]:.1f} before, {figures.load[1]:.1f} after"
    )
    if figures.large is not None:
        count, wall = figures.large
        projected = serial / figures.scenarios * count
        print(
            f"{name:<5} {count} scenarios, 32 in flight: {wall:7.2f} s ({count / wall:6.1f} scenarios/s; "
            f"1 in flight would take about {projected:6.1f} s: {projected / wall:5.1f}x)   target: report"
        )


def print_cpu(label: str, figures: CpuFigures, bare: str) -> None:
    ours = figures.client["evalkit"]
    ratio = ours / figures.client[bare]
    others = ", ".join(f"{name} {value:6.1f} us" for name, value in figures.client.items())
    print(f"{label}: {others}")
    server = ""
    if figures.server:
        server = f"; server CPU per search {figures.server['evalkit']:.1f} us"
    print(
        f"{label.split('(')[0].strip()} CPU per search, evalkit / {bare}: {ratio:4.2f}x   "
        f"target <= {CPU_TARGET:g}x: {met(ratio, CPU_TARGET, False)}{server}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of each comparison")
    parser.add_argument("--scenarios", type=int, default=210, help="the in-flight suite's size (x15)")
    parser.add_argument("--scale", type=int, default=1500, help="the 32-in-flight suite's size")
    parser.add_argument("--no-scale", action="store_true", help="skip the 32-in-flight run")
    parser.add_argument("--searches", type=int, default=2000, help="searches per round of the CPU figures")
    parser.add_argument("--parts", default="flight,cpu", help="what to run: flight, cpu or both (default)")
    parser.add_argument("--serve-http", nargs=2, metavar=("PORT", "DELAY"), help=argparse.SUPPRESS)
    parser.add_argument("--serve-mcp", metavar="DELAY", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_http:
        serve_http(int(args.serve_http[0]), float(args.serve_http[1]))
        return 0
    if args.serve_mcp is not None:
        serve_mcp(float(args.serve_mcp))
        return 0
    from evalkit.systems.http.client import HttpSystem
    from evalkit.systems.mcp.adapter import McpSystem

    parts = set(args.parts.split(","))
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_scale import compile_tree

    compile_tree(ROOT)  # the workers and servers this script starts compile no source
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-remote-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        if "flight" in parts:
            suite = replicated(work, args.scenarios)
            large = None if args.no_scale else replicated(work, args.scale)
            print("1. scenarios in flight, fixture services adding 50 ms to every call", file=sys.stderr)
            server = stack.enter_context(http_server(DELAY))
            http_system = HttpSystem(server.url)
            stack.callback(http_system.close)
            http_flight = in_flight(http_system, suite, large, args.rounds, server)
            mcp_system = McpSystem.from_mapping(mcp_mapping(work, DELAY))
            stack.callback(mcp_system.close)
            mcp_flight = in_flight(mcp_system, suite, large, args.rounds)
            mcp_system.close()
        if "cpu" in parts:
            print("2. client CPU per search", file=sys.stderr)
            http_figures = http_cpu(args.searches, args.rounds)
            mcp_figures = mcp_cpu(args.searches, args.rounds, work)
    print(f"\nremote systems, medians of {args.rounds} alternating rounds")
    if "flight" in parts:
        print("scenarios in flight (wall), fixture services adding 50 ms before every call on a memory")
        print_in_flight("HTTP", http_flight)
        print_in_flight("MCP", mcp_flight)
    if "cpu" in parts:
        print(f"client CPU per search, {args.searches} single searches a round (process CPU time, not wall)")
        print_cpu("HTTP (evalkit serve)     ", http_figures, "bare httpx")
        print_cpu("MCP  (evalkit serve --mcp)", mcp_figures, "bare SDK, no check")
    return 0


if __name__ == "__main__":
    sys.exit(main())
