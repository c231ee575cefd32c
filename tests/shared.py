"""Paths, report comparisons, the in-process CLI runner and hypothesis strategies that several test
modules use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT / "datasets"
NOTEBOOKS = ROOT / "notebooks"
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
    """The saved report at `path` as `comparable` leaves it, without the system's name and mode
    too: an in-process run and the same system reached over HTTP or MCP (named by URL or command;
    embedding by itself, so of mode `system`) must agree on this."""
    return comparable(json.loads(path.read_text(encoding="utf-8")), "system", "mode")


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


def run_and_record(run_argv: list[str], *record: str) -> int:
    """`evalkit run RUN_ARGV` (exit 0 or 1: regressions against an entry being replaced are why
    one records again), then `evalkit baseline record RECORD...` over the report it wrote (its
    `--out`, else the project's default): the exit code of the recording (or of a run that
    could not run)."""
    from evalkit.cli import main

    code = main(["run", *run_argv])
    if code not in (0, 1):
        return code
    report = [run_argv[run_argv.index("--out") + 1]] if "--out" in run_argv else []
    return main(["baseline", "record", *report, *record])


def cli_record(
    capsys: pytest.CaptureFixture[str], *argv: str, record: tuple[str, ...] = ()
) -> tuple[int, str, str]:
    """`cli(capsys, *argv)` (an `evalkit run ...` that writes `--out`), then `evalkit baseline
    record REPORT *record` over its report: (the recording's exit code, or the run's when it
    could not run; both stdouts; both stderrs)."""
    code, out, err = cli(capsys, *argv)
    if code not in (0, 1):
        return code, out, err
    report = list(argv)[list(argv).index("--out") + 1]
    code, more, more_err = cli(capsys, "baseline", "record", report, *record)
    return code, out + more, err + more_err


FTS_SYNTAX = st.sampled_from(
    ['"', '""', "NEAR(", "NEAR/2", "NEAR/3", "*", "-", "^", "AND", "OR", "NOT", "(", ")", "((", ")(",
     ":", "+", "[", "]", "\\", "{", "}"]
)  # fmt: skip
"""Pieces of FTS5 query syntax, to mix into hostile query text."""
