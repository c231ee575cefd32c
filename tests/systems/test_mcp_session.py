"""The order of an MCP session's calls around a drop sent without waiting (`Session.send`):
pipelined with isolation strategy "namespace", in order with "tools", proven by a server that
answers one request at a time and sees how they come (`mcp/pipeline_server.py`); the failure
paths of such a drop (a failed drop and a failed scenario together, a drop nobody settled)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalkit.errors import AdapterError
from evalkit.records import Thought
from evalkit.systems.base import OpenContext
from evalkit.systems.mcp.adapter import McpSystem
from evalkit.systems.mcp.mapping import load_mapping
from tests.shared import cli

SERVER = Path(__file__).with_name("mcp") / "pipeline_server.py"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
DEADLINE = "10"  # seconds per call: a client that waits for a held drop's reply fails in 10 s, not 120

SCENARIO = """\
name: {name}
category: explicit-fact
distractors: false
thoughts:
  - {{id: {name}-port, content: "{content}"}}
queries:
  - {{query: "Which port does the {name} API listen on?", relevant: [{name}-port]}}
"""

NAMESPACE = (
    'strategy = "namespace"\nargument = "namespace"\n'
    'drop = {tool = "drop", arguments = {scenario = "{scenario}"}}'
)
TOOLS = (
    'strategy = "tools"\n'
    'drop = {tool = "drop", arguments = {namespace = "shared", scenario = "{scenario}"}}'
)  # one memory for every scenario, emptied by the drop: the next scenario's store must come after it


def _suite(folder: Path, contents: dict[str, str] | None = None) -> Path:
    """Scenarios alpha and beta (run in that order), each one thought and one query."""
    contents = {"alpha": "", "beta": ""} | (contents or {})
    data = folder / "data"
    (data / "scenarios").mkdir(parents=True)
    for name, content in contents.items():
        text = content or f"The {name} API listens on port 8443."
        (data / "scenarios" / f"{name}.yaml").write_text(SCENARIO.format(name=name, content=text))
    return data


def _mapping(folder: Path, isolation: str, **env: str) -> Path:
    """A format 2 mapping for the pipeline server with `isolation` and the server's `env`."""
    shared = "" if "namespace" in isolation.split("\n")[0] else ', namespace = "shared"'
    path = folder / "pipeline.toml"
    path.write_text(
        'version = 2\nname = "pipeline"\ncapabilities = []\n'
        f'[server]\ncommand = "{{python}}"\nargs = [{json.dumps(str(SERVER))}]\n'
        f"env = {{{', '.join(f'{k} = {json.dumps(v)}' for k, v in env.items())}}}\n"
        f"[isolation]\n{isolation}\n"
        f'[store]\ntool = "store"\nbatch = "thoughts"\narguments = {{{shared.lstrip(", ")}}}\n'
        'item = {id = "{id}", content = "{content}"}\n'
        f'[search]\ntool = "search"\narguments = {{query = "{{query}}", top_k = "{{top_k}}"{shared}}}\n'
        'hits = "hits"\nhit = {id = "id", relevance = "score"}\n'
    )
    return path


def _run(data: Path, mapping: Path):
    """The suite in `data` on the server of `mapping`, one scenario at a time (one session: what
    these tests pin is the order of one session's calls)."""
    from evalkit import run_eval
    from evalkit.harness.executors import make_executor

    system = McpSystem.from_mapping(mapping)
    try:
        return run_eval(system=system, datasets=data, thresholds=None, executor=make_executor("serial"))
    finally:
        system.close()


@pytest.fixture(autouse=True)
def _deadline(monkeypatch):
    monkeypatch.setenv("EVALKIT_SYSTEM_TIMEOUT", DEADLINE)


def test_a_namespace_drop_is_in_flight_while_the_next_scenario_calls(tmp_path):
    # the server holds the reply to alpha's drop until beta's first call comes: a client that
    # waited for that reply first would wait to its deadline. The server answers one request at
    # a time (it reads the next line only once it answered the one before): that works too.
    left = tmp_path / "left.json"
    run = _run(_suite(tmp_path), _mapping(tmp_path, NAMESPACE, HOLD="alpha", LEFT=str(left)))
    assert run.result.overall.metrics["recall"] == 1.0
    assert json.loads(left.read_text()) == []  # both scenarios' namespaces were dropped


@pytest.mark.parametrize(("isolation", "overlap"), [(NAMESPACE, True), (TOOLS, False)])
def test_only_a_namespace_drop_lets_the_next_call_go_out_before_its_reply(tmp_path, isolation, overlap):
    # before it answers a drop, the server waits 1 s for another call: one that comes is an
    # overlap (answered with an error). Pipelined (namespace) there must be one; with "tools",
    # where alpha's drop empties the memory beta stores in next, there must never be one.
    data, mapping = _suite(tmp_path), _mapping(tmp_path, isolation, EXCLUSIVE="1")
    if not overlap:
        assert _run(data, mapping).result.overall.metrics["recall"] == 1.0
        return
    with pytest.raises(
        AdapterError, match=r"overlap: 'store' came before the reply to the drop of scenario 'alpha'"
    ):
        _run(data, mapping)


def test_a_failing_pipelined_drop_is_reported_naming_its_scenario_after_the_next_calls_reply(tmp_path):
    left = tmp_path / "left.json"
    mapping = _mapping(tmp_path, NAMESPACE, HOLD="alpha", FAIL_DROP="alpha", LEFT=str(left))
    with pytest.raises(AdapterError) as caught:
        _run(_suite(tmp_path), mapping)
    message = str(caught.value)
    assert "system 'pipeline' (MCP, " in message, message
    assert "tool 'drop' (the drop after scenario 'alpha', namespace 'evalkit-" in message, message
    assert "reported an error: cannot drop namespace 'evalkit-" in message, message
    assert not getattr(caught.value, "__notes__", None)
    # beta failed with it (its store's reply came first) and was dropped: only alpha's namespace stays
    [namespace] = json.loads(left.read_text())
    assert f"namespace {namespace!r}" in message


@pytest.mark.parametrize("isolation", [NAMESPACE, TOOLS])
def test_a_scenario_failing_beside_the_previous_drops_failure_reports_both_and_is_dropped(
    tmp_path, capsys, monkeypatch, isolation
):
    # alpha's drop fails; beta's store fails too, on its own. Both are told (beta's error, alpha's
    # drop as its note), and beta's namespace is dropped all the same.
    monkeypatch.chdir(tmp_path)
    _suite(tmp_path, {"beta": "FAIL: the beta API listens on port 8443."})
    left = tmp_path / "left.json"
    mapping = _mapping(tmp_path, isolation, FAIL_DROP="alpha", LEFT=str(left))
    code, _, err = cli(  # one session, so that beta follows alpha on it
        capsys, "run", "--datasets", "data", "--thresholds", "none", "--system", f"mcp:{mapping}",
        "--workers", "1",
    )  # fmt: skip
    assert code == 2, err
    lines = err.strip().splitlines()
    assert "Traceback" not in err
    if isolation == NAMESPACE:  # pipelined: beta's store went out before alpha's drop was answered
        assert lines[-2].startswith("evalkit: error: system 'pipeline': "), err
        assert "in scenario 'beta': system 'pipeline' (MCP, " in lines[-2], err
        assert lines[-2].endswith("tool 'store' reported an error: cannot store thought 'beta-port'"), err
        assert lines[-1].startswith("evalkit: note: system 'pipeline' (MCP, "), err
        assert "tool 'drop' (the drop after scenario 'alpha', namespace 'evalkit-" in lines[-1], err
        assert "cannot drop namespace" in lines[-1], err
        assert len(json.loads(left.read_text())) == 1  # alpha's, whose drop was refused; not beta's
    else:  # in order: alpha's drop failed before beta's store was sent (the memory is shared)
        assert "evalkit: error: " in lines[-1] and "the drop after scenario 'alpha'" in lines[-1], err
        assert json.loads(left.read_text()) == []  # beta's drop, sent after the failure, emptied it


@pytest.mark.parametrize("isolation", [NAMESPACE, TOOLS])
def test_a_scenario_failing_before_its_first_call_tells_the_previous_drops_failure(tmp_path, isolation):
    # alpha's drop is pending and fails; beta fails before it calls anything (the runner's own
    # error, a Ctrl-C): its error carries alpha's as a note, and beta's drop is sent all the same
    left = tmp_path / "left.json"
    mapping = _mapping(tmp_path, isolation, FAIL_DROP="alpha", LEFT=str(left))
    system = McpSystem(load_mapping(mapping), "t")
    try:
        with system.open(OpenContext(tmp_path, "alpha")) as memory:
            memory.add_thoughts([Thought(id="a", content="a note", created_at=NOW)])
        with pytest.raises(RuntimeError) as caught, system.open(OpenContext(tmp_path, "beta")):
            raise RuntimeError("scoring failed")
        [note] = caught.value.__notes__
        assert "tool 'drop' (the drop after scenario 'alpha', namespace " in note, note
        assert "cannot drop namespace" in note, note
        left = system.call("namespaces", {})[0]["namespaces"]
    finally:
        system.close()
    if isolation == NAMESPACE:  # alpha's, whose drop was refused (beta never made its own)
        [namespace] = left
        assert f"namespace {namespace!r}" in note
    else:  # beta's drop was sent after alpha's failed one was read: it emptied the shared memory
        assert left == []


def test_a_drop_nobody_settled_is_told_at_exit_in_one_line(tmp_path):
    mapping = _mapping(tmp_path, NAMESPACE, FAIL_DROP="s")
    script = (
        "import sys\n"
        "from datetime import UTC, datetime\n"
        "from evalkit.records import Thought\n"
        "from evalkit.systems.base import OpenContext\n"
        "from evalkit.systems.mcp.adapter import McpSystem\n"
        f"system = McpSystem.from_mapping({str(mapping)!r})\n"
        f"with system.open(OpenContext(__import__('pathlib').Path({str(tmp_path)!r}), 's')) as memory:\n"
        "    now = datetime(2026, 1, 1, tzinfo=UTC)\n"
        "    memory.add_thoughts([Thought(id='a', content='a note', created_at=now)])\n"
        "print('done')\n"  # neither settle() nor close(): the drop's reply is read at exit
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "done\n", done.stderr
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("evalkit: error at exit: system 'pipeline' (MCP, "), line
    assert "tool 'drop' (the drop after scenario 's', namespace 'evalkit-" in line, line
    assert "cannot drop namespace" in line and "call its settle()" in line, line
