"""Argument types shared by the subcommands: values are checked at parse time (exit 2).

The run request, the executors and the packs are imported by the helpers that use them, so a
command that only reads the project settings (`lint`, `config`) does not load them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import UsageError
from evalkit.harness.config import DEFAULT_TOP_K
from evalkit.harness.project import NO_BASELINES, Project, resolve_project
from evalkit.packaged import BUILTIN_DATASETS, BUILTIN_SUITE, THRESHOLDS_NAME
from evalkit.records import MAX_TOP_K

if TYPE_CHECKING:
    from evalkit.harness.executors import Executor


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


def add_request_flags(parser: argparse.ArgumentParser, names: Sequence[str]) -> None:
    """The flags of the `RunRequest` fields `names`, generated from their `Option`s (flag, help,
    metavar; a yes/no field gets `--flag/--no-flag`, a repeatable one is given once per value).
    An unused flag is None in the parsed args (`request_values` reads what was given); values
    are checked when the request is built (`RunRequest.checked`, exit 2)."""
    from evalkit.harness.request import RunRequest, options

    declared = options()
    for name in names:
        option = declared[name]
        flag = option.name(name, "cli")
        assert isinstance(flag, str), f"{name} has no flag"  # the spelling test holds this too
        kind = RunRequest.model_fields[name].annotation
        if kind in (bool, bool | None, "bool | None"):
            parser.add_argument(
                flag, dest=name, action=argparse.BooleanOptionalAction, default=None,
                help=option.help,
            )  # fmt: skip
        else:
            parser.add_argument(
                flag, dest=name, metavar=option.metavar, default=None,
                action="append" if option.repeat else "store", help=option.help,
            )  # fmt: skip


def request_values(args: argparse.Namespace) -> dict[str, Any]:
    """The RunRequest fields given on the command line (flags of `add_request_flags`)."""
    from evalkit.harness.request import RunRequest

    fields = RunRequest.model_fields
    return {name: value for name in fields if (value := getattr(args, name, None)) is not None}


def add_embedder_args(parser: argparse.ArgumentParser) -> None:
    """--embedder, --cache and --progress, shared by `run`, `bench` and `serve`."""
    add_request_flags(parser, ("embedder", "cache", "progress"))


def embedder_options(args: argparse.Namespace) -> dict[str, Any]:
    """The RunConfig fields `mode`, `model`, `embedding_cache` and `use_cache` from
    `add_embedder_args` flags (checked as a RunRequest: UsageError for --cache without a real
    embedder)."""
    from evalkit.harness.request import RunRequest

    request = RunRequest.checked(
        {k: v for k, v in request_values(args).items() if k in ("embedder", "cache")}, "cli"
    )
    config = request.config()
    return {k: getattr(config, k) for k in ("mode", "model", "embedding_cache", "use_cache")}


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
    add_request_flags(parser, ("pack",))


def use_pack(args: argparse.Namespace) -> bool:
    """Resolve `--pack` in `args`: False when it lists the packs (printed here; the command then
    exits 0), else True with `args.datasets` set to the packs' suite directory (unchanged without
    --pack). UsageError with --datasets too, or for an unknown pack."""
    from evalkit.suites.packs import LIST, pack_directory, parse_packs

    text = getattr(args, "pack", None)
    if text is None:
        return True
    if text == LIST:
        print_packs()
        return False
    if args.datasets is not None:
        raise UsageError("--pack and --datasets both choose the suite; give one")
    names = parse_packs(text)
    args.datasets = pack_directory(names, project_settings(args).reports / "packs")
    return True


def print_packs() -> None:
    """`--pack list`: each pack's name and what it tests, one a line."""
    from evalkit.suites.packs import pack_names, pack_summary

    for name in pack_names():
        print(f"{name}: {pack_summary(name)}")


BUILTIN_KEYWORD = BUILTIN_SUITE
"""The `--datasets` value naming the built-in suite (which runs anyway outside a project, with a
note, except in CI: `evalkit run`'s `say_no_project`); reports name that suite so too."""


def datasets_path(text: str) -> Path:
    """`--datasets`: a path, or exactly `built-in` (`BUILTIN_KEYWORD`): the built-in suite."""
    return BUILTIN_DATASETS if text == BUILTIN_KEYWORD else Path(text)


def write_pack(args: argparse.Namespace) -> None:
    """Write the combined suite of several `--pack`s (`write_combined`), once every check of the
    command has passed: a refused command leaves no pack folder behind."""
    from evalkit.suites.packs import LIST, parse_packs, write_combined

    text = getattr(args, "pack", None)
    if text is not None and text != LIST and len(names := parse_packs(text)) > 1:
        write_combined(names, Path(args.datasets))


def thresholds_path(text: str) -> Path | str:
    """`--thresholds`: a path, or exactly `none` (`NO_BASELINES`, kept as the string)."""
    return NO_BASELINES if text == NO_BASELINES else Path(text)


def add_execution_args(parser: argparse.ArgumentParser) -> None:
    """--workers and --executor, shared by `run`, `bench` and `mutants`."""
    add_request_flags(parser, ("executor", "workers"))


def executor_from(args: argparse.Namespace) -> Executor:
    """The executor `add_execution_args` flags name."""
    from evalkit.harness.executors import make_executor
    from evalkit.harness.request import RunRequest

    request = RunRequest.checked(
        {k: v for k, v in request_values(args).items() if k in ("executor", "workers")}, "cli"
    )
    return make_executor(request.executor_kind, request.workers, request.ray_address)


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
    add_request_flags(parser, ("system",))
