"""Benchmark what users wait for, every figure beside its target, in one run (issue 37).

Usage (from the repo root):

    python benchmarks/bench_waits.py                       # everything, as `make bench` runs it
    python benchmarks/bench_waits.py --quick               # fewer rounds, 150 scenarios vs the old commit

Runs, one after another, as subprocesses of this interpreter:
- `bench_startup.py`: `evalkit --version` and `evalkit lint` CPU against `python -c pass`,
  `evalkit run` of the built-in suite against `python -c "import pandas"`;
- `bench_remote.py`: scenarios in flight against fixture HTTP and MCP services adding 50 ms to
  every call (8 against 1 in flight, 32 in flight on 1,500 scenarios), and the client's CPU per
  search against bare httpx and bare MCP SDK calls;
- `bench_scale.py`: the built-in suite replicated to 15, 150 and 1,500 scenarios against commit
  2a49230, serial and with workers.
Each prints its own table; then every line holding a target is printed again, together, so the
figures stand side by side. Each script's docstring says how it measures. This is a script, not a
test: it asserts nothing and never runs in CI.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(script: str, *args: str) -> str:
    """`script ARGS`'s standard output (its progress goes to stderr as it runs), echoed."""
    print(f"\n=== {script} {' '.join(args)}".rstrip(), flush=True)
    done = subprocess.run(
        [sys.executable, str(HERE / script), *args], stdout=subprocess.PIPE, text=True, check=False
    )
    print(done.stdout, end="", flush=True)
    if done.returncode != 0:
        print(f"{script} exited {done.returncode}", flush=True)
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer rounds and a smaller scale run")
    args = parser.parse_args()
    quick = args.quick
    outputs = [
        run("bench_startup.py", *(["--rounds", "3"] if quick else [])),
        run("bench_remote.py", *(["--rounds", "1", "--searches", "500", "--no-scale"] if quick else [])),
        run("bench_scale.py", *(["--sizes", "150", "--repeats", "1"] if quick else [])),
    ]
    print("\n=== side by side: every figure with a target")
    for output in outputs:
        for line in output.splitlines():
            if "target" in line and not line.rstrip().endswith("target"):
                print(line.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
