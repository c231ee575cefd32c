"""`evalkit notebooks DIR [--force]`: copy the report notebooks where JupyterLab can open them
(evalkit.scaffold.copy_notebooks)."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.cli.exit_codes import EXIT_OK
from evalkit.scaffold import copy_notebooks


def register(notebooks: argparse.ArgumentParser) -> None:
    """Add `evalkit notebooks`."""
    notebooks.description = (
        "Copy the report notebooks (eval_report, scenario_drilldown, compare_runs, traces) "
        "into DIR, as packaged: their defaults run the built-in suite and write under reports/ of the "
        "project DIR lies in (the folder of evalkit.toml), else of DIR. "
        "Open them with `jupyter lab DIR` (pip install 'evalkit-memory[lab]'). `evalkit init` also "
        "puts them into a project's notebooks/ folder, set to that project's suite. An existing file "
        "is never overwritten without --force (exit 2 naming it)."
    )
    notebooks.add_argument(
        "directory", type=Path, metavar="DIR", help="where to copy them (created if missing)"
    )
    notebooks.add_argument("--force", action="store_true", help="overwrite notebooks that already exist")
    notebooks.set_defaults(handler=notebooks_command)


def notebooks_command(args: argparse.Namespace) -> int:
    written = copy_notebooks(args.directory, force=args.force)
    print("\n".join(f"wrote {path}" for path in written))
    print(f"next: jupyter lab {args.directory}")
    return EXIT_OK
