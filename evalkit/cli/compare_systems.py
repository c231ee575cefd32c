"""`evalkit compare-systems [SYSTEM ...] [--all] [--datasets DIR ...]`: run several systems over
one or more suites in one invocation and set them side by side (evalkit.views.systems): each
run's JSON report, one Markdown page and one HTML page in --out with a table per suite, the
tables on stdout."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from evalkit.cli.exit_codes import EXIT_OK
from evalkit.errors import UsageError
from evalkit.packaged import BUILTIN_DATASETS, BUILTIN_SUITE
from evalkit.systems.libraries import LIBRARIES
from evalkit.systems.resolve import REFERENCE_SPEC
from evalkit.systems.stores import STORES

BUILT_IN_SYSTEMS: tuple[str, ...] = (REFERENCE_SPEC, *STORES, *LIBRARIES)
"""What `--all` runs: the reference store, the built-in vector stores and memory libraries."""


def register(parser: argparse.ArgumentParser) -> None:
    """Add `evalkit compare-systems`."""
    parser.description = (
        "Run each SYSTEM (any --system spec) over each suite, serially, without baselines, and write "
        "each run's JSON report, systems.md and systems.html into --out: a table per suite, one row "
        "per system with its counted queries, recall, precision, MRR, hit rate, stale-fact rate "
        "(suites asking for behaviour metrics), the number of scenarios not applicable to it and its "
        "median search latency, the date and versions. The tables are printed too. Exit 0, or 2 when "
        "a system cannot be built or run (a missing extra is named)."
    )
    parser.add_argument(
        "systems", nargs="*", metavar="SYSTEM", help="the systems to run, as --system names them"
    )
    parser.add_argument(
        "--all", action="store_true",
        help=f"run every built-in system ({', '.join(BUILT_IN_SYSTEMS)}) after any SYSTEM given",
    )  # fmt: skip
    parser.add_argument(
        "--datasets", action="append", default=None, metavar="DIR",
        help="a suite to run (a suite folder, e.g. a pack under datasets/packs, or built-in); repeat it for "
        "several suites (default: the built-in one)",
    )  # fmt: skip
    parser.add_argument(
        "--out", type=Path, default=Path("reports/systems"), metavar="DIR",
        help="where the reports, systems.md and systems.html go (default reports/systems)",
    )  # fmt: skip
    parser.add_argument(
        "--markdown", type=Path, default=None, metavar="PATH",
        help="also write the table as a documentation page at PATH (how docs/system/compared.md is made)",
    )  # fmt: skip
    parser.set_defaults(handler=compare_systems_command)


def compare_systems_command(args: argparse.Namespace) -> int:
    from evalkit.api import run_eval
    from evalkit.files import write_atomic
    from evalkit.views.systems import systems_html, systems_markdown

    specs = list(dict.fromkeys([*args.systems, *(BUILT_IN_SYSTEMS if args.all else ())]))
    if not specs:
        raise UsageError("evalkit compare-systems: name the systems to run (SYSTEM ...), or --all")
    suites = list(dict.fromkeys(args.datasets or [BUILTIN_SUITE]))
    by_suite = {}
    for suite in suites:
        datasets = BUILTIN_DATASETS if suite == BUILTIN_SUITE else Path(suite)
        runs = []
        for spec in specs:
            run = run_eval(datasets=datasets, system=spec, thresholds=None, progress=False)
            name = spec if len(suites) == 1 else f"{Path(suite).name}-{spec}"
            run.save(args.out / f"{re.sub(r'[^A-Za-z0-9._-]+', '_', name)}.json")
            runs.append(run)
        by_suite[suite] = runs
    table = systems_markdown(by_suite)
    write_atomic(args.out / "systems.md", table)
    write_atomic(args.out / "systems.html", systems_html(by_suite))
    if args.markdown:
        write_atomic(args.markdown, PAGE + table)
    print(table, end="")
    return EXIT_OK


PAGE = """# Systems compared

Every built-in system on the built-in suite, deterministic mode (the hashing embedder), side by
side: made by one command, `evalkit compare-systems --all --markdown docs/system/compared.md`,
which also writes each run's report and an HTML page (`reports/systems/`). A system lacking a
capability has the scenarios that need it counted as not applicable, so its means cover fewer
queries; the stale-fact rate needs a suite asking for behaviour metrics (a pack such as
`datasets/packs/deletion-ghosts`).

"""
