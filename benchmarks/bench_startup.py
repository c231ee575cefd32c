"""Benchmark what a user waits for before evalkit does anything: start-up CPU against yardsticks.

Usage (from the repo root):

    python benchmarks/bench_startup.py                     # 7 rounds, this working tree
    python benchmarks/bench_startup.py --rounds 9 --baseline 88e2e7d

Figures, each the median over `--rounds` rounds of CPU seconds (user + sys of the finished child
process, `resource.getrusage(RUSAGE_CHILDREN)`): CPU rather than wall time, because on a shared
machine wall time measures the neighbours. Every round runs every command once, in turn, so a
drift of the machine's speed reaches all of them alike; a ratio is taken within each round (the
command against its yardstick of the same round) and its median printed beside its target
(issue 37):

- `evalkit --version` and `evalkit lint` (the built-in suite) against `python -c pass`: ≤ 3×;
- `evalkit run` of the built-in suite (deterministic, console table, verdict, JSON report; no
  history) against `python -c "import pandas"`: ≤ 1.5×.

`--baseline COMMIT` also runs the same evalkit commands on that commit (extracted with
`git archive` into a temporary directory and imported through PYTHONPATH, its own built-in suite),
in the same rounds, and prints its figures in a second column. Every evalkit command runs as
`python -m evalkit` from an empty temporary directory (no project file applies), this tree's
through PYTHONPATH too, so both versions start the same way, and each tree's bytecode is written
first (`bench_scale.compile_tree`: no measured run compiles a source, as none does once a package
is installed). Wall-clock medians are printed for reference.

This is a script, not a test: it asserts nothing and never runs in CI. The temporary directory
is removed afterwards, even on error or Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import compile_tree  # noqa: E402


@dataclass(frozen=True)
class Command:
    """One measured command: its label, its arguments, and the tree it imports evalkit from (None:
    a plain interpreter, the yardsticks)."""

    label: str
    args: tuple[str, ...]
    tree: Path | None = None


@dataclass(frozen=True)
class Ratio:
    """A figure to judge: `command` against `yardstick`, with the issue's target."""

    command: str
    yardstick: str
    target: float


PASS, PANDAS = "python -c pass", 'python -c "import pandas"'
VERSION, LINT, RUN = "evalkit --version", "evalkit lint", "evalkit run"
RATIOS = (Ratio(VERSION, PASS, 3.0), Ratio(LINT, PASS, 3.0), Ratio(RUN, PANDAS, 1.5))


def evalkit_commands(tree: Path, out: Path) -> list[Command]:
    """The evalkit commands of one tree (`out`: the run's report path)."""
    module = ("-m", "evalkit")
    return [
        Command(VERSION, (*module, "--version"), tree),
        Command(LINT, (*module, "lint"), tree),
        Command(RUN, (*module, "run", "--history", "none", "--out", str(out)), tree),
    ]


def measure(command: Command, cwd: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of `command` in `cwd`; its output is discarded."""
    env = dict(os.environ)
    if command.tree is not None:
        env["PYTHONPATH"] = str(command.tree)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, *command.args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def extract(commit: str, into: Path) -> Path:
    """The tree of `commit` written into `into` (`git archive`), returned."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit], capture_output=True, check=True
    ).stdout
    into.mkdir()
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds (default 7)")
    parser.add_argument("--baseline", metavar="COMMIT", help="also measure this commit's evalkit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-startup-") as tmp:
        work = Path(tmp)
        cwd = work / "cwd"
        cwd.mkdir()
        trees = {"this tree": ROOT}
        if args.baseline:
            trees[args.baseline] = extract(args.baseline, work / "baseline")
        for tree in trees.values():
            compile_tree(tree)
        yardsticks = [Command(PASS, ("-c", "pass")), Command(PANDAS, ("-c", "import pandas"))]
        per_tree = {
            name: evalkit_commands(tree, work / f"report-{i}.json")
            for i, (name, tree) in enumerate(trees.items())
        }
        cpu: dict[tuple[str, str], list[float]] = {}
        wall: dict[tuple[str, str], list[float]] = {}
        for round_number in range(args.rounds):
            print(f"round {round_number + 1} of {args.rounds}", file=sys.stderr)
            for command in yardsticks:  # measured once a round, the yardstick of every tree
                seconds, elapsed = measure(command, cwd)
                for name in trees:
                    cpu.setdefault((name, command.label), []).append(seconds)
                    wall.setdefault((name, command.label), []).append(elapsed)
            for row in zip(*per_tree.values(), strict=True):  # each command, tree after tree
                for name, command in zip(per_tree, row, strict=True):
                    seconds, elapsed = measure(command, cwd)
                    cpu.setdefault((name, command.label), []).append(seconds)
                    wall.setdefault((name, command.label), []).append(elapsed)
        report(trees, cpu, wall, args.rounds)
    return 0


def report(
    trees: dict[str, Path],
    cpu: dict[tuple[str, str], list[float]],
    wall: dict[tuple[str, str], list[float]],
    rounds: int,
) -> None:
    """Print the medians per command and tree, then each ratio beside its target."""
    names = list(trees)
    labels = [PASS, PANDAS, VERSION, LINT, RUN]
    width = max(len(label) for label in labels)
    print(f"\nCPU seconds (user + sys), median of {rounds} alternating rounds; wall in brackets")
    print(f"{'command':<{width}}  " + "  ".join(f"{n:>22}" for n in names))
    for label in labels:
        cells = [
            f"{statistics.median(cpu[(n, label)]):8.3f} [{statistics.median(wall[(n, label)]):7.3f}]"
            for n in names
        ]
        print(f"{label:<{width}}  " + "  ".join(f"{c:>22}" for c in cells))
    print("\nratio (median of the rounds' ratios) against its target")
    for ratio in RATIOS:
        cells = []
        for n in names:
            pairs = zip(cpu[(n, ratio.command)], cpu[(n, ratio.yardstick)], strict=True)
            value = statistics.median(a / b for a, b in pairs if b > 0)
            verdict = "met" if value <= ratio.target else "missed"
            cells.append(f"{value:5.2f}x ({verdict})")
        print(
            f"{ratio.command} / {ratio.yardstick}".ljust(width + len(PANDAS) + 3)
            + "  ".join(f"{c:>16}" for c in cells)
            + f"   target <= {ratio.target:g}x"
        )
    if len(names) > 1:
        print(f"columns: {', '.join(names)}")


if __name__ == "__main__":
    sys.exit(main())
