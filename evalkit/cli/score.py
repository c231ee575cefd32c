"""`evalkit score --run FILE`: score rankings produced elsewhere (a TREC or JSONL run file)
against the built-in suite or a benchmark, with the same report, baseline check and console summary.

The run is replayed through the one evaluation path (`evalkit.benchmarks.score_run`). Query ids are stable
query ids: a benchmark query's own id, `<scenario>/<query index>` for the built-in suite. Exit
0 = no regressions, 1 = regressions (built-in suite: assertions and metric thresholds;
benchmarks: assertions only), 2 = bad input (a malformed run file, unknown query or document
ids) or usage. With `--suite`, the suite is linted on load and a weak one gets the same one-line
warning as `evalkit run` (`evalkit.cli.lint.warn_on_load`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.api import score_run
from evalkit.cli.args import add_dataset_args, add_top_k_arg, project_settings
from evalkit.cli.bench import finish_benchmark, parse_categories, parse_ks
from evalkit.cli.exit_codes import EXIT_OK, EXIT_REGRESSIONS
from evalkit.cli.lint import warn_on_load
from evalkit.errors import UsageError
from evalkit.suites.benchmarks import (
    DEFAULT_BEIR_KS,
    DEFAULT_LOCOMO_KS,
    DEFAULT_LONGMEMEVAL_KS,
    BenchSet,
    beir_set,
    locomo_set,
    longmemeval_set,
)
from evalkit.suites.locomo import STANDARD_CATEGORIES
from evalkit.suites.longmemeval import GRANULARITIES
from evalkit.suites.runfiles import RUN_FORMATS
from evalkit.views.console import render_run


def register(score: argparse.ArgumentParser) -> None:
    """Add `evalkit score`."""
    score.description = (
        "Replay the rankings of a run file (TREC 'qid Q0 docid rank score tag' or JSONL "
        '{"query_id", "results"}) as the system under test and write the same report JSON as `evalkit '
        "run`/`bench`. Exit 0 = no regressions, 1 = regressions, 2 = bad input or usage."
    )
    score.add_argument("--run", type=Path, required=True, metavar="FILE", help="the run file")
    score.add_argument(
        "--format", choices=RUN_FORMATS, metavar="FORMAT",
        help="trec or jsonl (default: jsonl for .jsonl/.json files, trec otherwise)",
    )  # fmt: skip
    against = score.add_mutually_exclusive_group(required=True)
    against.add_argument(
        "--suite", choices=("builtin",),
        help="the scenario suite in --datasets (default: the project's, else the built-in suite), "
        "checked against its thresholds as `evalkit run` is",
    )  # fmt: skip
    against.add_argument("--beir", type=Path, metavar="DIR", help="a BEIR directory")
    against.add_argument("--locomo", type=Path, metavar="FILE", help="a LoCoMo file")
    against.add_argument("--longmemeval", type=Path, metavar="FILE", help="a LongMemEval file")
    score.add_argument("--split", default="test", help="with --beir: qrels split (default test)")
    score.add_argument(
        "--categories", type=parse_categories, default=STANDARD_CATEGORIES, metavar="LIST",
        help="with --locomo: question categories (default 1,2,3,4)",
    )  # fmt: skip
    score.add_argument(
        "--granularity", choices=GRANULARITIES, default="session",
        help="with --longmemeval: session or turn ids (default session)",
    )  # fmt: skip
    score.add_argument(
        "--k", type=parse_ks, metavar="LIST",
        help="with a benchmark: metric cutoffs (default: the benchmark's, as in `evalkit bench`)",
    )  # fmt: skip
    add_top_k_arg(score, "with --suite: ")
    add_dataset_args(score)
    score.add_argument(
        "--out", type=Path, default=Path("reports/score.json"), metavar="PATH",
        help="JSON report path (default reports/score.json)",
    )  # fmt: skip
    score.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bars"
    )
    score.set_defaults(handler=score_command)


def score_command(args: argparse.Namespace) -> int:
    bench, name = _benchmark(args)
    if bench is None:
        if args.k is not None:
            raise UsageError("--k applies to benchmarks; with --suite use --top-k")
        project = project_settings(args)
        warn_on_load(project.datasets, project.config.top_k)
        run = score_run(
            args.run,
            format=args.format,
            datasets=project.datasets,
            config=project.config,
            progress=args.progress,
        )
        run.save(args.out)
        print(render_run(run))
        print(f"report: {args.out}")
        return EXIT_OK if run.ok else EXIT_REGRESSIONS
    run = score_run(args.run, bench, format=args.format, progress=args.progress)
    return finish_benchmark(
        run, args.out, name, sorted({spec.k for spec in bench.metrics if spec.k is not None})
    )


def _benchmark(args: argparse.Namespace) -> tuple[BenchSet | None, str]:
    """The benchmark the run is scored against (None: the built-in suite) and its name."""
    if args.beir is not None:
        return beir_set(args.beir, args.split, args.k or DEFAULT_BEIR_KS, args.progress), "beir"
    if args.locomo is not None:
        return locomo_set(args.locomo, args.categories, args.k or DEFAULT_LOCOMO_KS, args.progress), "locomo"
    if args.longmemeval is not None:
        ks = args.k or DEFAULT_LONGMEMEVAL_KS
        return longmemeval_set(args.longmemeval, args.granularity, ks, args.progress), "longmemeval"
    return None, "builtin"
