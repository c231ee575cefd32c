"""Argument types shared by the subcommands: values are checked at parse time (exit 2)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalkit.errors import UsageError
from evalkit.harness.config import DEFAULT_TOP_K
from evalkit.harness.executors import EXECUTORS, Executor, make_executor
from evalkit.harness.project import NO_BASELINES, Project, resolve_project
from evalkit.packaged import BUILTIN_DATASETS, BUILTIN_SUITE, THRESHOLDS_NAME
from evalkit.records import MAX_TOP_K
from evalkit.suites.packs import LIST, pack_directory, pack_names, pack_summary, parse_packs, write_combined


def int_in(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected an integer from {low} to {high}, got {text!r}"
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer from {low} to {high}, got {value}")
        return value

    return parse


def unit_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {value}")
    return value


class _DeprecatedFlag(argparse.Action):
    """A flag kept for one release after its rename: it sets `dest` to `const`, as its replacement
    does, and says on stderr which flag replaces it (the run goes on)."""

    def __init__(self, option_strings: list[str], dest: str, *, const: Any, replacement: str) -> None:
        super().__init__(
            option_strings, dest, nargs=0, const=const, default=argparse.SUPPRESS,
            help=f"deprecated: use {replacement}",
        )  # fmt: skip
        self.replacement = replacement

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, *_: object) -> None:
        print(
            f"evalkit: warning: {self.option_strings[0]} is deprecated and will be removed in the next "
            f"release; use {self.replacement}",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, self.const)


def add_deprecated_flag(
    parser: argparse.ArgumentParser, flag: str, *, replacement: str, dest: str, const: Any = True
) -> None:
    """Keep `flag` working for one release as an alias of `replacement` (which sets `dest` to
    `const`), with a deprecation warning naming the replacement."""
    parser.add_argument(flag, action=_DeprecatedFlag, dest=dest, const=const, replacement=replacement)


def add_embedder_args(parser: argparse.ArgumentParser) -> None:
    """--real, --model, --cache/--no-cache and --progress, shared by `run` and `bench`."""
    parser.add_argument("--real", action="store_true", help="use a real sentence-transformers embedder")
    parser.add_argument(
        "--model", metavar="NAME_OR_PATH",
        help="with --real: sentence-transformers model (default: packaged all-MiniLM-L6-v2)",
    )  # fmt: skip
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument(
        "--cache", type=Path, metavar="PATH",
        help="with --real: embedding cache file (default: $EVALKIT_EMBED_CACHE or the user cache dir)",
    )  # fmt: skip
    cache.add_argument("--no-cache", action="store_true", help="with --real: do not use the embedding cache")
    parser.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bars"
    )


def embedder_options(args: argparse.Namespace) -> dict[str, Any]:
    """The RunConfig fields `mode`, `model`, `embedding_cache` and `use_cache` from
    `add_embedder_args` flags; UsageError when a flag that needs --real comes without it."""
    if args.model and not args.real:
        raise UsageError("--model needs --real")
    if (args.cache or args.no_cache) and not args.real:
        raise UsageError("--cache/--no-cache need --real")
    return {
        "mode": "real" if args.real else "deterministic",
        "model": args.model,
        "embedding_cache": args.cache,
        "use_cache": not args.no_cache,
    }


def add_dataset_args(parser: argparse.ArgumentParser) -> None:
    """--datasets and --thresholds, shared by `run`, `mutants`, `report` and `config`; unset flags
    are None, so the project file (evalkit.toml) or the default applies."""
    parser.add_argument(
        "--datasets", type=datasets_path, metavar="DIR",
        help="suite directory (default: `datasets` in evalkit.toml, else the built-in suite); "
        f"`{BUILTIN_KEYWORD}`: the built-in suite, asked for in so many words (a folder named so: "
        f"./{BUILTIN_KEYWORD})",
    )  # fmt: skip
    parser.add_argument(
        "--thresholds", type=thresholds_path, metavar="PATH",
        help=f"baselines file (default: `thresholds` in evalkit.toml, else <datasets>/{THRESHOLDS_NAME}); "
        f"`{NO_BASELINES}`: no baselines, metrics are not compared (a file named so: ./{NO_BASELINES})",
    )  # fmt: skip


def add_pack_arg(parser: argparse.ArgumentParser) -> None:
    """--pack NAME[,NAME…], shared by `run` and `mutants` (`evalkit.suites.packs`)."""
    parser.add_argument(
        "--pack", metavar="NAME[,NAME…]",
        help="run built-in scenario packs instead of the suite (`list`: name each pack and what it "
        "tests); several are combined into one suite under <reports>/packs/",
    )  # fmt: skip


def use_pack(args: argparse.Namespace) -> bool:
    """Resolve `--pack` in `args`: False when it lists the packs (printed here; the command then
    exits 0), else True with `args.datasets` set to the packs' suite directory (unchanged without
    --pack). UsageError with --datasets too, or for an unknown pack."""
    text = getattr(args, "pack", None)
    if text is None:
        return True
    if text == LIST:
        for name in pack_names():
            print(f"{name}: {pack_summary(name)}")
        return False
    if args.datasets is not None:
        raise UsageError("--pack and --datasets both choose the suite; give one")
    names = parse_packs(text)
    args.datasets = pack_directory(names, project_settings(args).reports / "packs")
    return True


BUILTIN_KEYWORD = BUILTIN_SUITE
"""The `--datasets` value naming the built-in suite (which runs anyway outside a project, with a
note, except in CI: `evalkit run`'s `say_no_project`); reports name that suite so too."""


def datasets_path(text: str) -> Path:
    """`--datasets`: a path, or exactly `built-in` (`BUILTIN_KEYWORD`): the built-in suite."""
    return BUILTIN_DATASETS if text == BUILTIN_KEYWORD else Path(text)


def write_pack(args: argparse.Namespace) -> None:
    """Write the combined suite of several `--pack`s (`write_combined`), once every check of the
    command has passed: a refused command leaves no pack folder behind."""
    text = getattr(args, "pack", None)
    if text is not None and text != LIST and len(names := parse_packs(text)) > 1:
        write_combined(names, Path(args.datasets))


def thresholds_path(text: str) -> Path | str:
    """`--thresholds`: a path, or exactly `none` (`NO_BASELINES`, kept as the string)."""
    return NO_BASELINES if text == NO_BASELINES else Path(text)


def add_execution_args(parser: argparse.ArgumentParser) -> None:
    """--workers, --executor and --address, shared by `run`, `bench` and `mutants`."""
    parser.add_argument(
        "--workers", type=int_in(1, 1024), default=None, metavar="N",
        help="run N units of work at once (scenarios, benchmark shards, mutations): on worker processes "
        "for an in-process system, as N scenarios in flight on threads for an HTTP or MCP system; "
        "results are identical to a serial run, with --real to within 1e-6 in similarities "
        "(default: serial; HTTP and MCP at a URL: 8 in flight; a stdio MCP server: one server "
        "process per scenario in flight, as many as CPUs, at most 8; with --executor ray: the "
        "cluster's CPUs)",
    )  # fmt: skip
    parser.add_argument(
        "--executor", choices=EXECUTORS[1:], default="processes",
        help="where the workers run: local processes (default) or Ray (pip install 'evalkit-memory[ray]')",
    )  # fmt: skip
    parser.add_argument(
        "--address", metavar="ADDRESS",
        help="with --executor ray: the cluster to connect to (e.g. auto, ray://host:10001); "
        "default: a local Ray instance",
    )  # fmt: skip


def executor_from(args: argparse.Namespace) -> Executor:
    """The executor `add_execution_args` flags name (UsageError for --address without Ray)."""
    return make_executor(args.executor, args.workers, args.address)


def add_top_k_arg(parser: argparse.ArgumentParser, applies: str = "") -> None:
    """--top-k, shared by `run`, `report`, `config` and `score` (whose help starts with `applies`);
    unset = the project file or the default."""
    parser.add_argument(
        "--top-k", type=int_in(1, MAX_TOP_K), metavar="N",
        help=f"{applies}results per query (default: `top_k` in evalkit.toml, else {DEFAULT_TOP_K})",
    )  # fmt: skip


def project_settings(args: argparse.Namespace) -> Project:
    """The project settings of a command: its flags (those it has and was given) over evalkit.toml
    or [tool.evalkit] over the defaults (see `evalkit.harness.project`)."""
    flags = {
        "datasets": getattr(args, "datasets", None),
        "thresholds": getattr(args, "thresholds", None),
        "system": getattr(args, "system", None),
        "top_k": getattr(args, "top_k", None),
        "gated": False if getattr(args, "no_gated_pass", False) else None,
        "min_relevance": getattr(args, "min_relevance", None),
        "require_baseline": getattr(args, "require_baseline", None),
    }
    return resolve_project(flags)


def add_system_arg(parser: argparse.ArgumentParser) -> None:
    """--system SPEC, shared by `run`, `bench` and `report`; unset = the project file's `system`,
    else `reference` (see `project_settings`)."""
    parser.add_argument(
        "--system", metavar="SPEC",
        help="the memory system under test: reference (default, unless `system` in evalkit.toml says "
        "otherwise), http://HOST:PORT[/PREFIX] (evalkit's HTTP contract; token from "
        "$EVALKIT_SYSTEM_TOKEN), mcp:MAPPING.toml (an MCP server), MODULE:FACTORY (a Python object) "
        "or an installed plugin's name (entry points evalkit.systems)",
    )  # fmt: skip
