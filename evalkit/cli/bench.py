"""`evalkit bench beir|locomo|longmemeval PATH`: run a public benchmark, print its metrics, write the report.

The report JSON is the one `evalkit run` writes (`evalkit.load_run` and the notebooks read
it). The console shows what was loaded, one metric row per scenario plus the overall row (a
LoCoMo scenario is one conversation, a LongMemEval one a question), for LoCoMo and LongMemEval
the per-category (question type) table, and with --gated-pass the
ungated-vs-gated comparison. Exit 0 = the run finished, 2 = bad input or usage.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalkit.api import run_beir, run_locomo, run_longmemeval
from evalkit.cli.args import (
    add_embedder_args,
    add_execution_args,
    add_system_arg,
    embedder_options,
    executor_from,
    project_settings,
)
from evalkit.cli.exit_codes import EXIT_OK, EXIT_REGRESSIONS
from evalkit.errors import UsageError
from evalkit.files import check_writable
from evalkit.memory import RETRIEVAL_MODES, TOKENIZERS
from evalkit.memory.fts_query import QUERY_SYNTAX_MODES
from evalkit.records import MAX_TOP_K
from evalkit.suites.benchmarks import (
    BEIR_METRICS,
    DEFAULT_BEIR_KS,
    DEFAULT_LOCOMO_KS,
    DEFAULT_LONGMEMEVAL_KS,
    LOCOMO_METRICS,
    LONGMEMEVAL_METRICS,
    check_ks,
)
from evalkit.suites.locomo import LOCOMO_CATEGORIES, STANDARD_CATEGORIES
from evalkit.suites.longmemeval import GRANULARITIES
from evalkit.views.console import render_benchmark
from evalkit.views.frames import EvalRun, question_category_frame


def parse_ks(text: str) -> tuple[int, ...]:
    """`--k` value: comma-separated cutoffs such as "10,100" (see `evalkit.suites.benchmarks.check_ks`)."""
    try:
        return check_ks(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers from 1 to {MAX_TOP_K} such as 10,100, got {text!r}"
        ) from None
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_categories(text: str) -> tuple[str, ...]:
    """`--categories` value: comma-separated LoCoMo category numbers such as "1,2,3,4"."""
    parts = [part.strip() for part in text.split(",")]
    unknown = [part for part in parts if part not in LOCOMO_CATEGORIES]
    if unknown:
        valid = ", ".join(f"{c} {name}" for c, name in LOCOMO_CATEGORIES.items())
        raise argparse.ArgumentTypeError(f"unknown LoCoMo categories {unknown} in {text!r}; valid: {valid}")
    return tuple(dict.fromkeys(parts))


def register(bench: argparse.ArgumentParser) -> None:
    """Add `evalkit bench` with its `beir`, `locomo` and `longmemeval` subcommands."""
    bench.description = (
        "Import a public benchmark, run it through the harness on the reference store "
        "(or --system SPEC; ungated; --gated-pass adds the report-only gated pass) and write the same report "
        "JSON as `evalkit run`. Exit 0 = the run finished, 2 = bad input or usage."
    )
    datasets = bench.add_subparsers(
        dest="benchmark",
        required=True,
        metavar="BENCHMARK",
        help="the benchmark's format: beir, locomo or longmemeval",
    )
    beir = datasets.add_parser(
        "beir",
        allow_abbrev=False,
        help="a BEIR directory (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), e.g. SciFact",
        description=f"Metrics: {', '.join(BEIR_METRICS)} at every k, plus the harness metrics over top_k "
        "= the largest k.",
    )
    beir.add_argument("path", type=Path, metavar="PATH", help="the BEIR dataset directory")
    beir.add_argument("--split", default="test", help="qrels split (qrels/<split>.tsv; default test)")
    _common(beir, DEFAULT_BEIR_KS, "bench-beir")
    beir.set_defaults(handler=beir_command)
    locomo = datasets.add_parser(
        "locomo",
        allow_abbrev=False,
        help="the LoCoMo file (locomo10.json), turn-level retrieval per conversation",
        description=f"Metrics: {', '.join(LOCOMO_METRICS)} at every k, plus the harness metrics over "
        "top_k = the largest k, and a per-category table. Each conversation is its own store.",
    )
    locomo.add_argument("path", type=Path, metavar="PATH", help="the LoCoMo JSON file")
    locomo.add_argument(
        "--categories", type=parse_categories, default=STANDARD_CATEGORIES, metavar="LIST",
        help="question categories to evaluate (default 1,2,3,4: "
        + ", ".join(f"{c} {LOCOMO_CATEGORIES[c]}" for c in STANDARD_CATEGORIES) + "; 5 adversarial)",
    )  # fmt: skip
    _common(locomo, DEFAULT_LOCOMO_KS, "bench-locomo")
    locomo.set_defaults(handler=locomo_command)
    longmemeval = datasets.add_parser(
        "longmemeval",
        allow_abbrev=False,
        help="a LongMemEval file (oracle, S or M), one store per question",
        description=f"Metrics: {', '.join(LONGMEMEVAL_METRICS)} at every k, plus the harness metrics over "
        "top_k = the largest k, and a per-question-type table. Abstention questions (_abs) are reported "
        "as measure-only scenarios, not in the aggregates.",
    )
    longmemeval.add_argument("path", type=Path, metavar="PATH", help="the LongMemEval JSON file")
    longmemeval.add_argument(
        "--granularity", choices=GRANULARITIES, default="session",
        help="one memory row per session (its user turns) or per user turn (default session)",
    )  # fmt: skip
    _common(longmemeval, DEFAULT_LONGMEMEVAL_KS, "bench-longmemeval")
    longmemeval.set_defaults(handler=longmemeval_command)


def _common(parser: argparse.ArgumentParser, ks: tuple[int, ...], stem: str) -> None:
    parser.add_argument(
        "--retrieval", choices=RETRIEVAL_MODES, default="bm25", help="search legs (default bm25)"
    )
    parser.add_argument(
        "--k", type=parse_ks, default=ks, metavar="LIST",
        help=f"metric cutoffs, comma-separated (default {','.join(map(str, ks))}); top_k = the largest",
    )  # fmt: skip
    parser.add_argument(
        "--tokenizer", choices=TOKENIZERS, default="unicode61",
        help="FTS5 tokenizer of the BM25 leg (default unicode61; porter adds Porter stemming)",
    )  # fmt: skip
    parser.add_argument(
        "--query-syntax", choices=QUERY_SYNTAX_MODES, default="delete",
        help="FTS5 syntax characters inside a query word: delete them (the SPEC: IL-6 -> IL6) or "
        "treat them as a space (IL-6 -> the phrase 'IL 6'); default delete",
    )  # fmt: skip
    parser.add_argument(
        "--out", type=Path, default=Path(f"reports/{stem}.json"), metavar="PATH",
        help=f"JSON report path (default reports/{stem}.json)",
    )  # fmt: skip
    parser.add_argument(
        "--gated-pass", action="store_true",
        help="add the report-only pass under the service's relevance gate",
    )  # fmt: skip
    add_embedder_args(parser)
    add_execution_args(parser)
    add_system_arg(parser)


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The run options shared by `run_beir` and `run_locomo`, after the usage checks."""
    return {
        "retrieval": args.retrieval,
        "ks": args.k,
        "tokenizer": args.tokenizer,
        "query_syntax": args.query_syntax,
        "gated": args.gated_pass,
        "progress": args.progress,
        "executor": executor_from(args),
        "system": project_settings(args).config.system,
        **embedder_options(args),
    }


CATEGORY_TABLES: dict[str, tuple[tuple[str, ...], str]] = {
    "locomo": (("recall", "success"), "LoCoMo category"),
    "longmemeval": (LONGMEMEVAL_METRICS, "question type"),
}
"""Benchmarks printed with a per-category table: its metric families (at every k) and its title."""


def beir_command(args: argparse.Namespace) -> int:
    check_writable(args.out)
    return finish_benchmark(run_beir(args.path, args.split, **_options(args)), args.out, "beir", args.k)


def locomo_command(args: argparse.Namespace) -> int:
    check_writable(args.out)
    run = run_locomo(args.path, args.categories, **_options(args))
    return finish_benchmark(run, args.out, "locomo", args.k)


def longmemeval_command(args: argparse.Namespace) -> int:
    check_writable(args.out)
    run = run_longmemeval(args.path, args.granularity, **_options(args))
    return finish_benchmark(run, args.out, "longmemeval", args.k)


def finish_benchmark(run: EvalRun, out: Path, benchmark: str, ks: Sequence[int]) -> int:
    """Save the report, print the summary (with the per-category table of `CATEGORY_TABLES`
    at the cutoffs `ks`); exit 0 (1 only if an imported query failed an assertion)."""
    run.save(out)
    categories, label = None, ""
    if benchmark in CATEGORY_TABLES:
        families, label = CATEGORY_TABLES[benchmark]
        categories = question_category_frame(run, [f"{family}@{k}" for family in families for k in ks])
    print(render_benchmark(run, categories, label))
    print(f"report: {out}")
    return EXIT_OK if run.ok else EXIT_REGRESSIONS
