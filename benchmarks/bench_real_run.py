"""Benchmark whole real-mode runs of the built-in suite, as a user runs them (one process each).

Usage (from the repo root; needs the `real` extra):

    python benchmarks/bench_real_run.py --repeats 3

Figures, each the median of `--repeats` rounds, every round running its commands back to back:
- two passes vs one pass: `evalkit run --embedder real` vs `... --gated-pass off`, both on a
  fresh, empty embedding cache (so both encode every thought; the gated pass re-asks every query
  and must find its embedding in the cache). Target: ratio <= 1.05.
- cold vs warm cache: `evalkit run --embedder real` on a fresh cache, then the same command again on
  that cache (the model is then never loaded). Target: warm >= 5x faster.
Wall-clock seconds of whole processes (interpreter start, imports, model load, run, report).
Temporary caches and reports are removed afterwards. This is a script, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed_run(cache: Path, out: Path, *extra: str) -> float:
    """Seconds for one `evalkit run --embedder real` process; raises if it fails (exit 2 or worse)."""
    argv = ["run", "--embedder=real", f"--cache={cache}", f"--out={out}", *extra]
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "evalkit", *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"evalkit run failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="rounds; medians are printed (default 3)")
    args = parser.parse_args()
    two_pass, one_pass, cold, warm = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-") as tmp:
        root = Path(tmp)
        for round_ in range(args.repeats):
            out = root / "report.json"
            one_pass.append(timed_run(root / f"one-{round_}.sqlite3", out, "--gated-pass", "off"))
            two_pass.append(timed_run(root / f"two-{round_}.sqlite3", out))
            cold.append(timed_run(root / f"warm-{round_}.sqlite3", out))
            warm.append(timed_run(root / f"warm-{round_}.sqlite3", out))
            print(
                f"round {round_ + 1}: one pass {one_pass[-1]:.2f}s, two passes {two_pass[-1]:.2f}s, "
                f"cold {cold[-1]:.2f}s, warm {warm[-1]:.2f}s",
                flush=True,
            )
    med = statistics.median
    print(
        f"two passes / one pass : {med(two_pass):.2f}s / {med(one_pass):.2f}s = "
        f"{med(two_pass) / med(one_pass):.3f} (target <= 1.05)"
    )
    print(
        f"cold / warm cache     : {med(cold):.2f}s / {med(warm):.2f}s = "
        f"{med(cold) / med(warm):.1f}x (target >= 5x)"
    )


if __name__ == "__main__":
    main()
