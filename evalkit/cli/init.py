"""`evalkit init [DIR] [--force]`: scaffold an evaluation project (see evalkit.scaffold)."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.cli.exit_codes import EXIT_OK
from evalkit.packaged import evalkit_version
from evalkit.scaffold import init_project


def register(init: argparse.ArgumentParser) -> None:
    """Add `evalkit init`."""
    init.description = (
        "Write evalkit.toml, suite.yaml, scenarios/example.yaml, thresholds.json, the CI "
        "workflows in .github/workflows/, EVALKIT.md (a README snippet) and the report notebooks "
        "(notebooks/, set to this suite) into DIR; `evalkit run` inside it works at once. An existing "
        "file is never overwritten without --force (exit 2 naming it)."
    )
    init.add_argument(
        "directory", nargs="?", default=Path("."), type=Path, metavar="DIR",
        help="the project folder (default: the current folder; created if missing)",
    )  # fmt: skip
    init.add_argument("--force", action="store_true", help="overwrite files that already exist")
    init.set_defaults(handler=init_command)


def init_command(args: argparse.Namespace) -> int:
    version = evalkit_version()
    written = init_project(args.directory, None if version == "unknown" else version, force=args.force)
    print("\n".join(f"wrote {path}" for path in written))
    print(
        f"next: cd {args.directory} && evalkit run, then record a baseline with "
        "`evalkit baseline record` (it reads the run's report) and commit thresholds.json (see EVALKIT.md)"
    )
    return EXIT_OK
