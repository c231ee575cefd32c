"""Systems and executors named on the command line, and messages that must carry a fix:
a `--system MODULE:FACTORY` that cannot be imported or whose factory raises, a Ray address where
nothing listens, a local Ray instance beside a cluster Ray remembers, a boolean top_k, an MCP
mapping that is not TOML or has several problems, `compare` of unrelated runs and `compare
--pass gated` / `sweep` of an ungated run.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import pytest

from evalkit import run_eval
from evalkit.errors import UsageError
from evalkit.harness.executors import RayExecutor
from tests.fault_matrix.common import assert_refused, cli, run_args
from tests.shared import DATASETS

# --- case 12: --system MODULE:FACTORY ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "needles"),
    [
        ("def broken(:\n", ["module 'badsys' has a syntax error", "badsys.py, line 1", "fix the module"]),
        ("raise RuntimeError('no config')\n", ["importing module 'badsys' raised RuntimeError: no config"]),
        ("def factory():\n    raise ValueError('needs an API key')\n",
         ["calling factory() raised ValueError: needs an API key", "fix the factory"]),
        ("class Factory:\n    def __init__(self, url):\n        pass\n",
         ["calling Factory() raised TypeError", "called without arguments"]),
    ],
)  # fmt: skip
def test_a_system_module_or_factory_that_fails_is_exit_2(ws, capsys, monkeypatch, source, needles):
    (ws / "badsys.py").write_text(source)
    monkeypatch.syspath_prepend(str(ws))
    name = "Factory" if "class Factory" in source else "factory"
    try:
        code, _, err = cli(capsys, *run_args("--system", f"badsys:{name}"))
    finally:
        sys.modules.pop("badsys", None)
    assert_refused(code, err, "system 'badsys:", *needles)


# --- case 13: Ray -----------------------------------------------------------------------------------


def test_a_ray_address_where_nothing_listens_is_exit_2_at_once(ws, capsys):
    """Ray retried for minutes (still running after 165 s)."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    started = time.monotonic()
    code, _, err = cli(capsys, *run_args("--executor", f"ray:127.0.0.1:{port}"))
    assert_refused(code, err, f"nothing answers at the Ray address 127.0.0.1:{port}", "ray start --head")
    assert time.monotonic() - started < 30


def test_a_local_ray_instance_ignores_the_cluster_ray_remembers(tmp_path, monkeypatch):
    """With Ray's `ray_current_cluster` file (or RAY_ADDRESS) naming a cluster, `ray.init(num_cpus=…)`
    raised "When connecting to an existing cluster, num_cpus and num_gpus must not be provided"."""
    import ray

    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")  # what a remembered cluster looks like to Ray
    assert not ray.is_initialized()
    try:
        executor = RayExecutor(workers=1)
        assert list(executor.map(abs, [-1, -2])) == [1, 2]
        assert len(ray.nodes()) == 1  # a new instance of this process, not the remembered cluster
    finally:
        ray.shutdown()


# --- case 15 and 16: values and messages --------------------------------------------------------------


def test_a_boolean_top_k_is_refused():
    with pytest.raises(UsageError, match=r"top_k: expected an integer, got the boolean True"):
        run_eval(top_k=True, thresholds=None)


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("name = [unclosed\n", ["cannot be read as TOML", "fix the file", "MCP mapping example"]),
        (
            'name = "x"\ncapabilities = []\n[server]\ncommand = "x"\n'
            '[store]\ntool = "s"\narguments = {bogus = "b"}\n'
            '[search]\ntool = "q"\narguments = {top_k = "k"}\nhit = {score = "s"}\n',
            ["store.arguments: unknown evalkit name(s) bogus", "search.hit: unknown evalkit name(s) score",
             "search.hit must map id", "search.arguments must map query", "store needs arguments.id"],
        ),
    ],
)  # fmt: skip
def test_an_mcp_mapping_reports_every_problem_with_a_fix(ws, capsys, text, needles):
    (ws / "m.toml").write_text(text)
    code, _, err = cli(capsys, *run_args("--system", "mcp:m.toml"))
    assert_refused(code, err, "MCP mapping file m.toml", *needles)


@pytest.fixture
def two_runs(ws: Path, capsys) -> tuple[Path, Path]:
    """An ungated run of the tiny scenario and a run of another scenario file."""
    code, _, err = cli(capsys, *run_args("--out", "reports/a.json", "--thresholds", "none.json"))
    assert code == 0, err
    other = (ws / "data" / "scenarios" / "tiny.yaml").read_text().replace("name: tiny", "name: other")
    (ws / "data" / "scenarios" / "tiny.yaml").write_text(other)
    code, _, err = cli(capsys, *run_args("--out", "reports/b.json", "--thresholds", "none.json"))
    assert code == 0, err
    return ws / "reports" / "a.json", ws / "reports" / "b.json"


def test_compare_of_runs_without_a_common_query_names_both_files(capsys, two_runs):
    a, b = two_runs
    code, _, err = cli(capsys, "compare", str(a), str(b))
    assert_refused(code, err, f"runs {a} and {b} share no query", "compare two runs of the same suite")


def test_compare_gated_and_sweep_of_an_ungated_run_say_how_to_fix_it(capsys, two_runs):
    a, _ = two_runs
    code, _, err = cli(capsys, "compare", "--pass", "gated", str(a), str(a))
    assert_refused(
        code, err, "has no gated pass to compare", "re-run it without --gated-pass off", "(--pass ungated)"
    )
    code, _, err = cli(capsys, "sweep", str(a))
    assert_refused(code, err, "the run has no gated pass", "re-run it without --gated-pass off")


def test_an_mcp_mapping_with_a_missing_key_and_misspelt_names_reports_all_at_once(ws, capsys):
    """Only `capabilities: required key … is missing` was reported: the checks of placeholders
    and names ran only on an otherwise valid file. Now every section valid on its own is checked
    too, with "did you mean"."""
    text = (DATASETS / "mcp" / "reference.toml").read_text()
    text = text.replace("\ncapabilities = [", "\n# capabilities = [")
    text = text.replace('top_k = "{top_k}"', 'top_k = "{topk}"').replace(
        'similarity = "similarity"', 'similarty = "s"'
    )
    (ws / "m.toml").write_text(text)
    code, _, err = cli(capsys, *run_args("--system", "mcp:m.toml"))
    assert_refused(
        code,
        err,
        "MCP mapping file m.toml: 3 problems; fix the file",
        "  - capabilities: required key 'capabilities' is missing",
        "  - search.arguments: unknown placeholder(s) {topk} (did you mean {top_k}?)",
        "  - search.hit: unknown evalkit name(s) similarty (did you mean similarity?)",
    )


def test_a_strategy_choice_of_a_mapping_says_did_you_mean(ws, capsys):
    text = (
        (DATASETS / "mcp" / "reference.toml")
        .read_text()
        .replace('strategy = "namespace"', 'strategy = "namespce"')
    )
    (ws / "m.toml").write_text(text)
    code, _, err = cli(capsys, *run_args("--system", "mcp:m.toml"))
    assert_refused(code, err, "isolation.strategy: Input should be", "(did you mean 'namespace'?)")
