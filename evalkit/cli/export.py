"""`evalkit export --trec REPORT OUTDIR`: write a saved report's ungated run and its graded qrels
as TREC files (plus the run as JSONL with every signal) for trec_eval, ranx and ir_measures,
or to score again with `evalkit score`. Exit 0 = written, 2 = an unreadable report or an id that
a TREC line cannot hold."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.api import export_trec
from evalkit.cli.exit_codes import EXIT_OK


def register(export: argparse.ArgumentParser) -> None:
    """Add `evalkit export`."""
    export.description = (
        "Write OUTDIR/run.trec ('qid Q0 docid rank score tag', score = n - rank + 1), "
        "OUTDIR/qrels.trec ('qid 0 docid grade') and OUTDIR/run.jsonl from the ungated pass of a saved "
        "report. Query ids: a query's own id, else <scenario>/<query index>."
    )
    export.add_argument("--trec", action="store_true", required=True, help="TREC format (the only one)")
    export.add_argument("report", type=Path, metavar="REPORT", help="a report JSON written by evalkit")
    export.add_argument("outdir", type=Path, metavar="OUTDIR", help="directory to write the files into")
    export.set_defaults(handler=export_command)


def export_command(args: argparse.Namespace) -> int:
    for path in export_trec(args.report, args.outdir):
        print(f"wrote {path}")
    return EXIT_OK
