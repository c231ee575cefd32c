"""`evalkit history`: the runs appended to a history file, one line each (evalkit.harness.history)."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.cli.exit_codes import EXIT_OK
from evalkit.harness.history import HISTORY_FILE
from evalkit.views.console import render_history
from evalkit.views.history import history_table, load_history


def register(history: argparse.ArgumentParser) -> None:
    """Add `evalkit history`."""
    history.description = (
        "Print one line per run of the history file (oldest first): time, system, mode, "
        "top_k, commit, regressions and the overall ungated recall, precision, MRR and hit rate. "
        "Exit 0, or 2 when the file is damaged (it is left as it is)."
    )
    history.add_argument(
        "--history", type=Path, default=Path("reports") / HISTORY_FILE, metavar="PATH",
        help=f"the history file (default reports/{HISTORY_FILE})",
    )  # fmt: skip
    history.set_defaults(handler=history_command)


def history_command(args: argparse.Namespace) -> int:
    print(render_history(history_table(load_history(args.history)), args.history))
    return EXIT_OK
