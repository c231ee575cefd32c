"""CLI usage and output paths: refused with exit 2 before anything runs.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fault_matrix.common import (
    assert_refused,
    cli,
    run_args,
    snapshot,
)
from tests.shared import BEIR_TINY, NOTEBOOKS

# --- CLI usage: refused before anything runs -------------------------------------------------------

USAGE: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "out-is-a-directory": (run_args("--out", "reports"), ("reports is a directory", "reports/report.json")),
    "out-is-the-thresholds-file": (
        run_args("--out", "data/thresholds.json"),
        ("is the thresholds file", "Write the report elsewhere"),
    ),
    "out-is-the-thresholds-file-spelled-otherwise": (
        run_args("--out", "data/scenarios/../thresholds.json"),
        ("is the thresholds file",),
    ),
    "out-under-a-file": (
        run_args("--out", "data/scenarios/tiny.yaml/report.json"),
        ("data/scenarios/tiny.yaml is a file",),
    ),
    "record-a-missing-report": (["baseline", "record", "nowhere.json"], ("nowhere.json",)),
    "unknown-embedder": (run_args("--embedder", "x"), ("--embedder: unknown embedder 'x'",)),
    "cache-without-real": (run_args("--cache", "c.sqlite3"), ("--cache needs a real embedder",)),
    "top-k-zero": (run_args("--top-k", "0"), ("expected an integer from 1 to 1000",)),
    "min-relevance-above-one": (run_args("--gated-pass", "2"), ("expected `off` or a gate from 0 to 1",)),
    "unknown-scenario": (run_args("--scenario", "tiyn"), ("unknown scenario 'tiyn'", "did you mean 'tiny'")),
    "missing-datasets": (
        ["run", "--datasets", "nowhere", "--gated-pass", "off"],
        ("no scenario dataset at nowhere", "directory not found"),
    ),
    "bench-beir-out-is-a-directory": (
        ["bench", "beir", str(BEIR_TINY), "--out", "reports"],
        ("reports is a directory",),
    ),
    "bench-locomo-out-is-a-directory": (
        ["bench", "locomo", "nowhere.json", "--out", "reports"],
        ("reports is a directory",),
    ),
    "report-out-dir-is-a-file": (
        [
            "report",
            "--notebook",
            str(NOTEBOOKS / "eval_report.ipynb"),
            "--out-dir",
            "data/thresholds.json",
        ],
        ("the output directory data/thresholds.json is a file", "give a directory"),
    ),
    "report-unknown-parameter": (
        ["report", "--notebook", str(NOTEBOOKS / "eval_report.ipynb"), "-p", "colour", "red"],
        ("does not declare parameter 'colour'",),
    ),
    "report-unknown-notebook": (
        ["report", "--notebook", "nope"],
        (f"no notebook {NOTEBOOKS / 'nope.ipynb'}",),
    ),
}


@pytest.mark.parametrize("case", sorted(USAGE))
def test_usage_error_exits_2_before_anything_runs(ws: Path, capsys, monkeypatch, case: str) -> None:
    import papermill

    argv, needles = USAGE[case]
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **k: pytest.fail("the notebook ran"))
    before = snapshot(ws)
    code, out, err = cli(capsys, *argv)
    assert_refused(code, err, *needles)
    assert out == ""
    assert snapshot(ws) == before


def test_read_only_report_file_is_refused_before_the_run(ws: Path, capsys) -> None:
    report = ws / "reports" / "report.json"
    report.write_text("old report")
    report.chmod(0o444)
    code, out, err = cli(capsys, *run_args())
    assert_refused(code, err, "reports/report.json is read-only")
    assert out == "" and report.read_text() == "old report"


def test_out_in_an_unwritable_folder_is_refused_before_the_run(ws: Path, capsys, monkeypatch) -> None:
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: Path(p).name != "reports" and real_access(p, mode))
    code, out, err = cli(capsys, *run_args("--out", "reports/sub/r.json"))
    assert_refused(code, err, "cannot write reports/sub/r.json: the folder reports is not writable")
    assert out == "" and list((ws / "reports").iterdir()) == []


def test_bench_beir_with_an_empty_corpus_says_so(ws: Path, capsys) -> None:
    data = ws / "beir"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text("")
    (data / "queries.jsonl").write_bytes((BEIR_TINY / "queries.jsonl").read_bytes())
    (data / "qrels" / "test.tsv").write_bytes((BEIR_TINY / "qrels" / "test.tsv").read_bytes())
    code, out, err = cli(capsys, "bench", "beir", "beir", "--out", "reports/b.json")
    assert_refused(code, err, "beir/corpus.jsonl: the corpus is empty")
    assert out == "" and not (ws / "reports" / "b.json").exists()
