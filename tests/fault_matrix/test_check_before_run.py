"""Check before run: input that can be refused up front is refused before anything runs or is
written (exit 2, nothing new on disk), every problem at once, each naming its option.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import sys

import pytest

from tests.fault_matrix.common import FAKE_MCP, assert_refused, cli, snapshot


@pytest.mark.parametrize(
    ("parameters", "needles"),
    [
        (["-p", "top_k", "0"], ["-p top_k: expected an integer from 1 to 1000, got 0"]),
        (
            ["-p", "report_json", "missing.json"],
            ["-p report_json missing.json: not a readable evalkit report"],
        ),
        (
            ["-p", "report_json", "truncated.json"],
            ["-p report_json truncated.json: not a readable", "is not JSON"],
        ),
        (
            ["-p", "top_k", "0", "-p", "embedder", "fast", "-p", "report_json", "missing.json"],
            ["-p top_k: ", "-p embedder: unknown embedder 'fast'", "-p report_json missing.json"],
        ),
    ],
)
def test_report_refuses_bad_parameters_and_reports_before_the_notebook_runs(ws, capsys, parameters, needles):
    """`eval_report.failed.html` and `.failed.ipynb` were written beside the previous HTML."""
    (ws / "truncated.json").write_text('{"mode": "determ')
    before = snapshot(ws)
    code, _, err = cli(capsys, "report", "--out-dir", "reports", *parameters)
    assert_refused(code, err, *needles, "nothing was run or written")
    assert snapshot(ws) == before


def test_a_refused_multi_pack_run_leaves_no_pack_folder(ws, capsys):
    """`--pack A,B` wrote `reports/packs/A+B/` before any usage or output check."""
    before = snapshot(ws)
    code, _, err = cli(capsys, "run", "--pack", "deletion-ghosts,event-time", "--accept-unstable")
    assert_refused(code, err, "--accept-unstable")
    assert snapshot(ws) == before


def test_mcp_inspect_out_a_folder_fails_before_the_server_starts(ws, capsys):
    """It said "[Errno 21] Is a directory" after starting the server and printing the draft."""
    pidfile = ws / "server.pid"
    code, out, err = cli(
        capsys, "mcp", "inspect", "--out", "reports", "--", sys.executable, str(FAKE_MCP), "ok", str(pidfile)
    )
    assert_refused(code, err, "--out reports is a folder; give a file path")
    assert out == "" and not pidfile.exists()


def test_report_names_every_bad_parameter_at_once(ws, capsys):
    """An unknown `-p` name stopped at the first problem, without "did you mean"; the other
    parameters' problems came one run later."""
    before = snapshot(ws)
    code, _, err = cli(
        capsys, "report", "--out-dir", "reports",
        "-p", "topk", "3", "-p", "top_k", "0", "-p", "fail_on_regression", "maybe",
        "-p", "report_json", "missing.json",
    )  # fmt: skip
    assert_refused(
        code,
        err,
        "4 problems; nothing was run or written",
        "  - eval_report.ipynb does not declare parameter 'topk' (did you mean 'top_k'?)",
        "  - parameter 'fail_on_regression' of eval_report.ipynb expects bool, got 'maybe'",
        "  - -p top_k: ",
        "  - -p report_json missing.json: not a readable evalkit report",
    )
    assert snapshot(ws) == before
