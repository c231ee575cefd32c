"""`evalkit mutants`: run the suite once per catalogued mutation and print what caught each."""

from __future__ import annotations

import argparse
import time

from evalkit.api import detect_mutations
from evalkit.cli.args import (
    add_dataset_args,
    add_execution_args,
    add_pack_arg,
    executor_from,
    project_settings,
    use_pack,
    write_pack,
)
from evalkit.cli.exit_codes import EXIT_OK, EXIT_REGRESSIONS
from evalkit.cli.lint import warn_on_load
from evalkit.scenarios import load_suite
from evalkit.suites.mutations import MUTATIONS, PACK_MUTATIONS
from evalkit.suites.packs import parse_packs
from evalkit.views.console import render_detection
from evalkit.wording import counted


def register(mutants: argparse.ArgumentParser) -> None:
    """Add `evalkit mutants`."""
    mutants.description = (
        "Run the deterministic scenario suite once per catalogued mutation of the reference "
        "store (a realistic search bug) and once for a no-op control, checked against the recorded baseline. "
        "Exit 0 = every mutation was caught and the control was not, 1 = a mutation escaped or the "
        "control raised a false alarm, 2 = bad input or usage (e.g. an unknown mutation name). "
        f"Mutations: {', '.join(MUTATIONS)}; caught by the scenario packs (--pack): "
        f"{', '.join(f'{n} ({m.pack})' for n, m in PACK_MUTATIONS.items())}."
    )
    mutants.add_argument(
        "--mutation", action="append", metavar="NAME",
        help="run only this mutation (repeatable; default: the whole catalogue)",
    )  # fmt: skip
    add_dataset_args(mutants)
    add_pack_arg(mutants)
    add_execution_args(mutants)
    mutants.set_defaults(handler=mutants_command)


def mutants_command(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    if not use_pack(args):
        return EXIT_OK
    project = project_settings(args)
    write_pack(args)
    warn_on_load(project.datasets, project.config.top_k)
    detection = detect_mutations(
        load_suite(project.datasets),
        project.config,
        args.mutation,
        executor=executor_from(args),
        packs=parse_packs(args.pack) if args.pack else (),
    )
    print(render_detection(detection))
    elapsed = time.perf_counter() - started
    print(f"{counted(len(detection.outcomes), 'mutant suite run')} and 1 unmutated one in {elapsed:.1f} s")
    return EXIT_OK if detection.ok else EXIT_REGRESSIONS
