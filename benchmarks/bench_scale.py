"""Benchmark how a scenario suite's run time grows with its size, against an older commit.

Usage (from the repo root):

    python benchmarks/bench_scale.py                       # 15, 150 and 1,500 scenarios vs 2a49230
    python benchmarks/bench_scale.py --sizes 15,150 --workers 2 --baseline 2a49230

The built-in suite of the `--baseline` commit (its `datasets/`, or `evalkit/data/datasets/` for
the commits that kept the data inside the package; both versions read it: later scenario fields such as
`distractors_created_at` are unknown to an old loader) is copied N / 15
times into a temporary directory, every copy of a scenario renamed (`temporal` →
`temporal-r0003`), with the shared distractors as they are. For
each size, in one sitting, three commands run as subprocesses on the same data:

- `baseline`: `python -m evalkit run` of the commit `--baseline` (extracted with `git archive`
  into the temporary directory, imported through PYTHONPATH);
- `this`: the same command with this working tree's evalkit, serial;
- `workers`: this working tree with `--workers N` (process executor).

Each command is `evalkit run --datasets DIR --thresholds <missing file> --out FILE` (both passes,
no baseline check); the flags exist in both versions. The three commands run in turn, `--repeats`
rounds (default 3; the order reversed every other round), each tree compiled first
(`compile_tree`): a table shows each command's fastest run, and a speedup is the median of the
rounds' ratios (the two commands of the same round), so that a drift of the machine's speed
between rounds (this virtual machine's CPU time moves by a third within minutes) reaches both
alike. A version's *fixed cost*
is its run of a one-scenario suite (the first scenario file and the distractors: interpreter start,
imports, loading, report writing), measured just before; the *per-scenario cost* at N scenarios is
(run time − fixed cost) / (N − 1). At 15 scenarios it is a difference of two close numbers (the
scenarios take a small part of the run), so expect it to be the noisiest figure. Wall-clock seconds
and CPU seconds (user + sys of the command and its worker processes) are both printed: on a shared
machine, CPU time is the steadier figure. The largest size's speedups over the baseline (wall),
serial and with workers, are printed beside the target (`SERIAL_TARGET`). The serial and
`--workers` reports of this tree are compared, apart from `generated_at`, `provenance` and
`latency`, and the script says whether they are identical (the baseline's numbers differ on
purpose: the fidelity fixes since).

Then, for each size, the YAML files of the replicated suite are parsed in this process (file
texts already in memory) by each strict YAML loader of this tree
(`evalkit.scenarios.parsing.YAML_LOADERS`: libyaml's events when PyYAML has them, and pure
Python), best of three, to show what the libyaml loader saves.

This is a script, not a test: it asserts nothing and never runs in CI. The temporary directory
is removed afterwards, even on error or Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the YAML timing imports this tree's evalkit

from evalkit.scenarios import parsing  # noqa: E402


@dataclass(frozen=True)
class Timing:
    """Wall-clock and CPU seconds (user + sys, worker processes included) of one command."""

    wall: float
    cpu: float


def replicate(source: Path, copies: int, out: Path) -> int:
    """Write the suite in `source` `copies` times into `out` (scenarios renamed, distractors
    shared); returns the number of scenario files written."""
    (out / "scenarios").mkdir(parents=True)
    shutil.copy(source / "distractors.yaml", out / "distractors.yaml")
    files = sorted((source / "scenarios").glob("*.yaml"))
    for path in files:
        text = path.read_text(encoding="utf-8")
        for i in range(copies):
            renamed = re.sub(r"^name: (\S+)", rf"name: \1-r{i:04d}", text, count=1, flags=re.MULTILINE)
            (out / "scenarios" / f"{path.stem}-r{i:04d}.yaml").write_text(renamed, encoding="utf-8")
    return len(files) * copies


DATASET_FOLDERS = ("datasets", "evalkit/data/datasets")
"""Where a commit keeps its built-in suite: top level, except for the commits that kept it inside
the package (b067572 up to the move back to the top level)."""


def one_scenario(source: Path, out: Path) -> Path:
    """A suite of the first scenario file in `source` with its distractors, written to `out`."""
    (out / "scenarios").mkdir(parents=True)
    shutil.copy(source / "distractors.yaml", out / "distractors.yaml")
    first = sorted((source / "scenarios").glob("*.yaml"))[0]
    shutil.copy(first, out / "scenarios" / first.name)
    return out


def extract(commit: str, out: Path) -> tuple[Path, Path]:
    """The `evalkit` package of `commit` (and its top-level `datasets/`, when it has one),
    extracted into `out`: (the directory for PYTHONPATH, the commit's built-in suite)."""
    out.mkdir(parents=True)
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "--name-only", "-d", commit, "datasets"],
        check=True, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "evalkit", *listed], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    suite = next((out / folder for folder in DATASET_FOLDERS if (out / folder / "scenarios").is_dir()), None)
    if suite is None:
        raise SystemExit(f"{commit} has no built-in suite in {' or '.join(DATASET_FOLDERS)}")
    return out, suite


def compile_tree(tree: Path) -> None:
    """Write the bytecode of `tree`'s evalkit package, as installing a package does, so that no
    measured run compiles sources: with PYTHONDONTWRITEBYTECODE set, in a fresh clone or in an
    extracted commit, every run would otherwise compile every module it imports."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(tree / "evalkit")],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def timed(source: Path, args: list[str], cwd: Path) -> Timing:
    """Run `python -m evalkit ARGS` with `source` first on PYTHONPATH; exit 0 or 1 is a finished run."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{source}: evalkit {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu)


def in_rounds(
    repeats: int, commands: dict[str, tuple[Path, list[str]]], cwd: Path
) -> dict[str, list[Timing]]:
    """`timed` runs of every command (name → (source, args)), one of each per round, `repeats`
    rounds, the order reversed every other round; each command's runs in round order."""
    runs: dict[str, list[Timing]] = {name: [] for name in commands}
    for round_number in range(repeats):
        names = list(commands) if round_number % 2 == 0 else list(commands)[::-1]
        for name in names:
            source, args = commands[name]
            runs[name].append(timed(source, args, cwd))
    return runs


def fastest(runs: list[Timing]) -> Timing:
    """The run with the least wall time: the least disturbed by other work on a shared machine."""
    return min(runs, key=lambda t: t.wall)


def speedup(slow: list[Timing], fast: list[Timing]) -> float:
    """The median over the rounds of `slow`'s wall time over `fast`'s in the same round."""
    return statistics.median(s.wall / f.wall for s, f in zip(slow, fast, strict=True))


@contextmanager
def yaml_loader(loader: type) -> Iterator[None]:
    """Scenario files are read with `loader` inside the block."""
    used = parsing.YAML_LOADER
    parsing.YAML_LOADER = loader
    try:
        yield
    finally:
        parsing.YAML_LOADER = used


def parse_times(data: Path) -> dict[str, Timing]:
    """Best of three wall and CPU seconds to parse every YAML file under `data` (texts read
    first), per strict YAML loader, by loader class name."""
    texts = [path.read_text(encoding="utf-8") for path in sorted(data.rglob("*.yaml"))]
    times = {}
    for loader in parsing.YAML_LOADERS:
        runs = []
        with yaml_loader(loader):
            for _ in range(3):
                wall, cpu = time.perf_counter(), time.process_time()
                for text in texts:
                    parsing.parse_text(text, ".yaml")
                runs.append(Timing(time.perf_counter() - wall, time.process_time() - cpu))
        times[loader.__name__] = min(runs, key=lambda t: t.cpu)
    return times


def comparable(report: Path) -> dict[str, Any]:
    """A report without what differs between two runs of the same data: the time, the provenance
    and the search latencies."""
    data = json.loads(report.read_text(encoding="utf-8"))
    for key in ("generated_at", "provenance", "latency"):
        data.pop(key, None)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="15,150,1500", help="scenario counts, multiples of 15")
    parser.add_argument("--baseline", default="2a49230", help="the commit to compare with")
    parser.add_argument("--workers", type=int, default=2, help="workers of the parallel run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each command; the fastest counts")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-scale-") as tmp:
        work = Path(tmp)
        old, suite = extract(args.baseline, work / "baseline")
        per_copy = len(list((suite / "scenarios").glob("*.yaml")))
        versions = {"baseline": old, "this": ROOT, "workers": ROOT}
        for tree in (old, ROOT):
            compile_tree(tree)
        single = one_scenario(suite, work / "suite-1")
        rows = []
        parse_rows: list[tuple[int, dict[str, Timing]]] = []
        for size in sizes:
            data = work / f"suite-{size}"
            count = replicate(suite, max(1, size // per_copy), data)
            common = ["run", "--datasets", str(data), "--thresholds", str(work / "none.json")]
            extra = {"baseline": [], "this": [], "workers": ["--workers", str(args.workers)]}
            one = ["run", "--datasets", str(single), "--thresholds", str(work / "none.json")]
            fixed_runs = in_rounds(
                args.repeats,
                {
                    name: (path, [*one, "--out", str(work / "one.json"), *extra[name]])
                    for name, path in versions.items()
                },
                work,
            )
            runs = in_rounds(
                args.repeats,
                {
                    name: (path, [*common, "--out", str(work / f"{name}-{size}.json"), *extra[name]])
                    for name, path in versions.items()
                },
                work,
            )
            times = {name: fastest(r) for name, r in runs.items()}
            fixed = {name: fastest(r) for name, r in fixed_runs.items()}
            ratios = {
                "serial": speedup(runs["baseline"], runs["this"]),
                "workers": speedup(runs["baseline"], runs["workers"]),
                "x workers": speedup(runs["this"], runs["workers"]),
            }
            same = comparable(work / f"this-{size}.json") == comparable(work / f"workers-{size}.json")
            rows.append((count, times, fixed, same, ratios))
            parse_rows.append((count, parse_times(data)))
            shutil.rmtree(data)
            print(f"... {count} scenarios done", file=sys.stderr, flush=True)
    _print(rows, args.baseline, args.workers)
    _print_parsing(parse_rows)


SERIAL_TARGET = 4.0
"""The largest suite, this tree serial against the baseline commit: at least this much faster (issue 37)."""

Row = tuple[int, dict[str, Timing], dict[str, Timing], bool, dict[str, float]]
"""(scenarios, fastest run per version, fixed cost (a one-scenario run) per version, serial and
workers reports identical, speedups (median of the rounds' wall ratios): "serial" and "workers"
over the baseline, "x workers" of workers over serial)."""


def per_scenario(row: Row, name: str) -> Timing:
    """(run − fixed cost) / (scenarios − 1) of version `name`, in milliseconds."""
    count, times, fixed, _, _ = row
    return Timing(
        (times[name].wall - fixed[name].wall) / (count - 1) * 1000,
        (times[name].cpu - fixed[name].cpu) / (count - 1) * 1000,
    )


def _print(rows: list[Row], commit: str, workers: int) -> None:
    print(
        f"evalkit run on the replicated built-in suite: {commit} vs this tree (serial, --workers {workers})"
    )
    print(
        "seconds and ms as wall / CPU, fastest run; speedups: median of the rounds' wall ratios; "
        "ms/sc = (run - one-scenario run) / (scenarios - 1)"
    )
    print(
        f"{'scenarios':>9}  {commit + ' s':>15}  {'this s':>13}  {'workers s':>13}  {'speedup':>8}  "
        f"{'x workers':>9}  {commit + ' ms/sc':>15}  {'this ms/sc':>13}  {'serial=workers':>14}"
    )
    for row in rows:
        count, t, _, same, ratios = row
        old, new, par = t["baseline"], t["this"], t["workers"]
        cost = {name: per_scenario(row, name) for name in ("baseline", "this")}
        print(
            f"{count:>9}  {old.wall:>7.2f}/{old.cpu:<7.2f}  {new.wall:>6.2f}/{new.cpu:<6.2f}  "
            f"{par.wall:>6.2f}/{par.cpu:<6.2f}  {ratios['serial']:>7.2f}x  {ratios['x workers']:>8.2f}x  "
            + "  ".join(
                f"{f'{c.wall:.1f}/{c.cpu:.1f}':>{w}}" for c, w in ((cost["baseline"], 15), (cost["this"], 13))
            )
            + f"  {'yes' if same else 'NO':>14}"
        )
    count, _, _, _, ratios = rows[-1]
    serial, parallel = ratios["serial"], ratios["workers"]
    verdict = "met" if serial >= SERIAL_TARGET else "MISSED"
    print(
        f"{count} scenarios against {commit} (wall): serial {serial:.2f}x faster   "
        f"target >= {SERIAL_TARGET:g}x: {verdict}; with --workers {workers} {parallel:.2f}x   target: report"
    )
    for name in ("baseline", "this"):
        first, last = per_scenario(rows[0], name), per_scenario(rows[-1], name)
        print(
            f"per-scenario cost of {name}, {rows[0][0]} -> {rows[-1][0]} scenarios: "
            f"x{last.wall / first.wall:.2f} wall, x{last.cpu / first.cpu:.2f} CPU"
        )


def _print_parsing(rows: list[tuple[int, dict[str, Timing]]]) -> None:
    names = list(rows[0][1])
    print("\nparsing the replicated suite's YAML files in one process (best of 3), seconds as wall / CPU")
    print(f"{'scenarios':>9}  " + "  ".join(f"{name:>20}" for name in names) + f"  {'CPU ratio':>9}")
    for count, times in rows:
        cells = "  ".join(f"{f'{times[n].wall:.3f}/{times[n].cpu:.3f}':>20}" for n in names)
        ratio = times[names[-1]].cpu / times[names[0]].cpu
        print(f"{count:>9}  {cells}  {ratio:>8.1f}x")


if __name__ == "__main__":
    main()
