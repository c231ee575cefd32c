"""`evalkit mutants`: run the suite once per catalogued mutation and print what caught each."""

from __future__ import annotations

import argparse
import time

from evalkit.cli.args import add_dataset_args
from evalkit.cli.exit_codes import EXIT_OK, EXIT_REGRESSIONS
from evalkit.mutations import CAUGHT_BY_MESSAGES, MUTATIONS, MutantsResult, run_mutants


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `evalkit mutants`."""
    mutants = commands.add_parser(
        "mutants",
        help="prove the gate catches real search bugs: run the suite once per injected fault",
        description="Run the deterministic scenario suite once per catalogued mutation of the reference "
        "store (a realistic search bug) and once for a no-op control, gated on the recorded baseline. "
        "Exit 0 = every mutation was caught and the control was not, 1 = a mutation escaped or the "
        "control raised a false alarm, 2 = bad input or usage (e.g. an unknown mutation name). "
        f"Mutations: {', '.join(MUTATIONS)}.",
    )
    mutants.add_argument(
        "--mutation", action="append", metavar="NAME",
        help="run only this mutation (repeatable; default: the whole catalogue)",
    )  # fmt: skip
    add_dataset_args(mutants)
    mutants.set_defaults(handler=mutants_command)


def mutants_command(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    result = run_mutants(args.mutation, datasets=args.datasets, thresholds=args.thresholds)
    print(render_mutants(result))
    print(f"{len(result.outcomes)} suite run(s) in {time.perf_counter() - started:.1f} s")
    return EXIT_OK if result.ok else EXIT_REGRESSIONS


def render_mutants(result: MutantsResult) -> str:
    """The console table: one line per mutation (caught yes/no, regression count, verdict), then
    the first regression messages that caught it, indented; a closing verdict line."""
    names = [
        f"{o.mutation.name} (control)" if o.mutation.control else o.mutation.name for o in result.outcomes
    ]
    width = max(len("mutation"), *(len(name) for name in names))
    lines = [f"{'mutation':<{width}}  caught  regressions  verdict", "-" * (width + 32)]
    for name, outcome in zip(names, result.outcomes, strict=True):
        verdict = "ok" if outcome.expected else ("FALSE ALARM" if outcome.mutation.control else "ESCAPED")
        caught = "yes" if outcome.caught else "no"
        lines.append(f"{name:<{width}}  {caught:<6}  {len(outcome.regressions):>11}  {verdict}")
        lines.extend(f"    {r.message}" for r in outcome.regressions[:CAUGHT_BY_MESSAGES])
    lines.append("-" * (width + 32))
    escaped = [o.mutation.name for o in result.outcomes if not o.expected]
    lines.append(
        "Every mutation was caught; the control raised no alarm."
        if not escaped
        else f"Not as expected: {', '.join(escaped)}"
    )
    return "\n".join(lines)
