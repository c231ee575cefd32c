"""Paths, report comparisons, the in-process CLI runner and hypothesis strategies that several test
modules use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT / "evalkit" / "data" / "datasets"
NOTEBOOKS = ROOT / "evalkit" / "data" / "notebooks"
FIXTURES = ROOT / "tests" / "fixtures"
BEIR_TINY = FIXTURES / "beir_tiny"
LOCOMO_TINY = FIXTURES / "locomo_tiny.json"
SHARED_DATA = ROOT.parent / "shared" / "data"
"""The shared real data beside the repository (present in CI, maybe absent in a user's clone)."""
SCIFACT = SHARED_DATA / "scifact"
LOCOMO = SHARED_DATA / "locomo" / "locomo10.json"

RUN_SPECIFIC = ("generated_at", "provenance", "latency")
"""Report keys that differ between two runs of the same thing: the timestamp, the provenance
(host, versions, timings of the environment) and the wall-clock search latencies."""


def comparable(report: dict[str, Any], *also: str) -> dict[str, Any]:
    """A report's JSON without its `RUN_SPECIFIC` keys and the keys `also` (e.g. "system" to
    compare one system reached two ways): two runs that must agree, compare this. KeyError when
    one of those keys is missing — every report has them."""
    left = dict(report)
    for key in (*RUN_SPECIFIC, *also):
        left.pop(key)
    return left


def comparable_file(path: Path) -> dict[str, Any]:
    """The saved report at `path` as `comparable` leaves it, without the system's name too: an
    in-process run and the same system reached over HTTP or MCP (named by URL or command) must
    agree on this."""
    return comparable(json.loads(path.read_text(encoding="utf-8")), "system")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`evalkit.cli.main(argv)` in process: (exit code, stdout, stderr); an argparse usage error's
    SystemExit is returned as its code."""
    from evalkit.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


FTS_SYNTAX = st.sampled_from(
    ['"', '""', "NEAR(", "NEAR/2", "NEAR/3", "*", "-", "^", "AND", "OR", "NOT", "(", ")", "((", ")(",
     ":", "+", "[", "]", "\\", "{", "}"]
)  # fmt: skip
"""Pieces of FTS5 query syntax, to mix into hostile query text."""
