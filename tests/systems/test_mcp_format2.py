"""Mapping format 2 (templates, isolation strategies and their verification, inputSchema checks,
batch search), `evalkit mcp inspect`, and the presets against their real servers."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalkit.errors import AdapterError
from evalkit.records import Thought
from evalkit.systems.mcp_adapter import McpSystem
from evalkit.systems.mcp_mapping import load_mapping, mapping_source, preset_names
from evalkit.systems.mcp_templates import render
from tests.shared import DATASETS, cli

LEAKY = Path(__file__).with_name("mcp") / "leaky_server.py"
NOW = datetime(2026, 1, 1, tzinfo=UTC)

SCENARIO = """\
name: {name}
category: explicit-fact
distractors: false
thoughts:
  - {{id: {name}-port, content: The {name} API listens on port 8443.}}
  - {{id: {name}-logs, content: The {name} logs are written to /var/log/{name}.}}
queries:
  - {{query: "{query}", relevant: [{name}-port]}}
"""


def _suite(folder: Path, queries: dict[str, str]) -> Path:
    """A suite of one scenario per (name, query) in `folder`/data."""
    data = folder / "data"
    (data / "scenarios").mkdir(parents=True)
    for name, query in queries.items():
        (data / "scenarios" / f"{name}.yaml").write_text(SCENARIO.format(name=name, query=query))
    return data


def _leaky(folder: Path, isolation: str, **extra: str) -> Path:
    """A format 2 mapping for the leaky fixture server, with `isolation` as the [isolation] table."""
    path = folder / "leaky.toml"
    search = extra.get("search", '{query = "{query}", top_k = "{top_k}"}')
    path.write_text(
        'version = 2\nname = "leaky"\ncapabilities = []\n'
        f'[server]\ncommand = "{{python}}"\nargs = [{json.dumps(str(LEAKY))}]\n'
        f"[isolation]\n{isolation}\n"
        '[store]\ntool = "store"\nbatch = "thoughts"\nitem = {id = "{id}", content = "{content}"}\n'
        f'[search]\ntool = "search"\narguments = {search}\n'
        'hits = "hits"\nhit = {id = "id", relevance = "score"}\n'
    )
    return path


# --- templates ------------------------------------------------------------------------------------


def test_templates_keep_types_fill_nested_values_and_leave_nulls_out():
    values = {"id": "a", "top_k": 5, "project": None, "seeded_ids": ["a", "b"], "now": NOW}
    template = {
        "name": "{id}", "k": "{top_k}", "project": "{project}", "ids": "{seeded_ids}",
        "nested": {"list": ["{id}", "{project}", "note {id} at {now}"], "const": 3},
        "braces": "{{literal}} {top_k}",
    }  # fmt: skip
    assert render(template, values) == {
        "name": "a", "k": 5, "ids": ["a", "b"],
        "nested": {"list": ["a", "note a at 2026-01-01T00:00:00+00:00"], "const": 3},
        "braces": "{literal} 5",
    }  # fmt: skip
    assert render({"project": "{project}"}, values, send_null=True) == {"project": None}
    assert render({"query_id": "{query_id}"}, values, send_null=True) == {}  # not given: never sent


@pytest.mark.parametrize(
    ("isolation", "search", "needles"),
    [
        ('strategy = "namespace"', None, ["isolation.strategy 'namespace' needs isolation.argument"]),
        ('strategy = "tools"', None, ["isolation.strategy 'tools' needs isolation.reset or isolation.drop"]),
        ('strategy = "none"', '{query = "{query}", k = "{topk}"}',
         ["search.arguments: unknown placeholder(s) {topk}", "known: {query}, {top_k}"]),
        ('strategy = "none"', '{q = "{id}"}', ["search.arguments must send {query}"]),
    ],
)  # fmt: skip
def test_format_2_mistakes_name_the_place_and_the_known_names(tmp_path, isolation, search, needles):
    path = _leaky(tmp_path, isolation, **({"search": search} if search else {}))
    with pytest.raises(AdapterError) as caught:
        load_mapping(path)
    for needle in needles:
        assert needle in str(caught.value), caught.value
    assert str(path) in str(caught.value)


def test_a_server_placeholder_per_scenario_needs_one_process_per_scenario(tmp_path):
    path = _leaky(tmp_path, 'strategy = "none"')
    path.write_text(path.read_text().replace("[isolation]", 'env = {DB = "{workdir}/db"}\n[isolation]'))
    with pytest.raises(AdapterError, match=r"server: \{workdir\} needs isolation.strategy = 'process'"):
        load_mapping(path)


# --- inputSchema checks ------------------------------------------------------------------------------


def test_every_mapped_argument_is_checked_against_the_tools_input_schema(tmp_path):
    path = _leaky(
        tmp_path,
        'strategy = "namespace"\nargument = "tenant"',
        search='{text = "{query}", top_k = "{top_k}"}',
    )
    with pytest.raises(AdapterError) as caught:
        McpSystem.from_mapping(path)
    message = str(caught.value)
    for needle in [
        "tool 'store' has no argument 'tenant' (isolation.argument), sent by store; its inputSchema's "
        "properties: namespace (required), thoughts (required)",
        "tool 'search' has no argument 'text', sent by search",
        "tool 'search' requires argument 'query', which search does not send; its inputSchema's "
        "properties: namespace (required), query (required), top_k",
        "tool 'store' requires argument 'namespace', which store does not send",
    ]:
        assert needle in message, message


def test_batch_items_are_checked_against_the_item_schema(tmp_path):
    path = _leaky(tmp_path, 'strategy = "namespace"\nargument = "namespace"')
    path.write_text(
        path.read_text().replace('item = {id = "{id}", content = "{content}"}', 'item = {id = "{id}"}')
    )
    with pytest.raises(AdapterError, match=r"tool 'store' requires argument 'content', which store items"):
        McpSystem.from_mapping(path)


# --- isolation -----------------------------------------------------------------------------------------


def test_a_server_ignoring_the_namespace_argument_is_reported_not_isolated(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _suite(tmp_path, {"alpha": "Which port does the alpha API listen on?",
                      "beta": "Which port does the beta API listen on?"})  # fmt: skip
    mapping = _leaky(tmp_path, 'strategy = "namespace"\nargument = "namespace"\ndrop = {tool = "drop"}')
    code, _, err = cli(
        capsys, "run", "--datasets", "data", "--thresholds", "none", "--system", f"mcp:{mapping}"
    )
    assert code == 2, err
    assert "Traceback" not in err
    assert (
        "system 'leaky' (MCP, " in err
        and "is not isolated: thought 'alpha-port', seeded in scenario "
        "'alpha', was returned in scenario 'beta' (isolation: namespace argument 'namespace' with "
        "reset/drop tool 'drop')"
        in err
    ), err


def test_shared_copies_left_by_other_scenarios_are_reported_not_isolated(tmp_path):
    system = McpSystem(load_mapping(_leaky(tmp_path, 'strategy = "namespace"\nargument = "namespace"')), "t")
    try:
        shared = [Thought(id="shared", content="The shared distractor about ports.")]
        with system.open(tmp_path, scenario="one") as memory:
            memory.add_thoughts(shared)
        with system.open(tmp_path, scenario="two") as memory:
            memory.add_thoughts(shared)
            expected = (
                r"thought 'shared' was returned 2 times in scenario 'two' "
                r"\(seeded also in scenario 'one'; isolation: namespace argument"
            )
            with pytest.raises(AdapterError, match=expected):
                memory.search("ports", top_k=5, now=NOW)
    finally:
        system.close()


@pytest.mark.parametrize(
    "isolation",
    [
        'strategy = "tools"\n'
        'drop = {tool = "forget", arguments = {ids = "{seeded_ids}", namespace = "{namespace}"}}',
        'strategy = "process"',
    ],
)  # fmt: skip
def test_deleting_the_seeded_ids_or_a_process_per_scenario_isolates_the_leaky_server(
    tmp_path, capsys, monkeypatch, isolation
):
    monkeypatch.chdir(tmp_path)
    _suite(tmp_path, {"alpha": "Which port does the alpha API listen on?",
                      "beta": "Which port does the beta API listen on?"})  # fmt: skip
    mapping = _leaky(tmp_path, isolation)
    # its tools require a namespace argument: a constant (the isolation is elsewhere)
    text = mapping.read_text().replace("item = {id", 'arguments = {namespace = "all"}\nitem = {id')
    mapping.write_text(text.replace('{query = "{query}"', '{namespace = "all", query = "{query}"'))
    code, _, err = cli(
        capsys, "run", "--datasets", "data", "--thresholds", "none", "--system", f"mcp:{mapping}",
        "--out", "report.json",
    )  # fmt: skip
    assert code == 0, err
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["overall"]["metrics"]["hit_rate"] == 1.0


# --- batch search ----------------------------------------------------------------------------------------


def test_a_batch_search_tool_answers_a_scenario_in_one_call(tmp_path, monkeypatch):
    from evalkit.systems import mcp_session

    calls: list[str] = []
    original = mcp_session.Session.call

    def counted(self, tool, arguments, timeout=None):
        calls.append(tool)
        return original(self, tool, arguments, timeout)

    monkeypatch.setattr(mcp_session.Session, "call", counted)
    from evalkit import run_eval

    system = McpSystem.from_mapping(DATASETS / "mcp" / "reference.toml")
    try:
        run = run_eval(system=system, datasets=DATASETS, scenarios=["explicit-fact"], thresholds=None)
    finally:
        system.close()
    assert calls == ["store_thoughts", "add_edges", "search_batch", "drop_namespace"] or calls == [
        "store_thoughts", "search_batch", "drop_namespace",
    ], calls  # fmt: skip
    assert run.result.overall.metrics["recall"] == 1.0


# --- presets against their real servers ---------------------------------------------------------------------


def test_the_presets_are_named_and_an_unknown_one_lists_them():
    assert preset_names() == ["mcp-kb-sqlite", "mcp-memory-service", "reference", "server-memory"]
    assert mapping_source("server-memory").name == "server-memory.toml"
    assert mapping_source("reference") == DATASETS / "mcp" / "reference.toml"
    with pytest.raises(
        AdapterError,
        match=r"no MCP preset 'nope'.*presets: mcp-kb-sqlite, mcp-memory-service, reference, server",
    ):
        mapping_source("nope")


def test_server_memory_runs_the_builtin_suite_and_names_what_is_not_applicable(tmp_path, capsys):
    out = tmp_path / "report.json"
    code, stdout, err = cli(capsys, "run", "--system", "mcp:server-memory", "--out", str(out))
    assert code == 1, err  # a real finding: its substring search finds no whole question
    report = json.loads(out.read_text())
    assert report["system"] == "server-memory"
    assert report["overall"]["metrics"]["recall"] == 0.0
    skipped = {s["name"] for s in report["scenarios"] if s["status"] == "not_applicable"}
    assert skipped == {
        "contradiction-flagged", "contradiction", "explicit-fact-gated", "no-match", "project-scope-global",
        "project-scope", "recency-gentle", "recency", "supersession-history", "supersession",
    }  # fmt: skip
    assert "Not applicable (10 scenarios" in stdout
    assert "needs projects" in stdout


def test_server_memory_finds_a_query_that_is_a_substring(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _suite(
        tmp_path, {"alpha": "alpha API listens on port", "beta": "Which port does the beta API listen on?"}
    )
    _, _, err = cli(
        capsys, "run", "--datasets", "data", "--thresholds", "none", "--system", "mcp:server-memory",
        "--out", "report.json",
    )  # fmt: skip
    report = json.loads((tmp_path / "report.json").read_text())
    hits = {s["name"]: s["metrics"]["metrics"]["hit_rate"] for s in report["scenarios"]}
    assert hits == {"alpha": 1.0, "beta": 0.0}, (hits, err)


def test_a_missing_npm_package_says_how_to_install_it(tmp_path):
    path = tmp_path / "m.toml"
    text = (DATASETS.parent / "evalkit" / "systems" / "mcp_presets" / "server-memory.toml").read_text()
    path.write_text(text.replace("@modelcontextprotocol/server-memory", "@evalkit-test/absent-server"))
    with pytest.raises(AdapterError, match=r"needs the npm package @evalkit-test/absent-server, which is not "
                       r"installed \(looked in .*\); install it with: make setup"):  # fmt: skip
        McpSystem.from_mapping(path)


def test_mcp_kb_sqlite_ranks_keyword_queries_and_reports_its_fts5_syntax_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _suite(tmp_path, {"alpha": "alpha API port", "beta": "beta logs"})
    code, _, err = cli(
        capsys, "run", "--datasets", "data", "--thresholds", "none", "--system", "mcp:mcp-kb-sqlite",
        "--out", "report.json",
    )  # fmt: skip
    report = json.loads((tmp_path / "report.json").read_text())
    hits = {s["name"]: s["metrics"]["metrics"]["hit_rate"] for s in report["scenarios"]}
    assert hits == {"alpha": 1.0, "beta": 0.0}, (hits, err)  # beta's query finds its logs, not its port
    code, _, err = cli(capsys, "run", "--thresholds", "none", "--system", "mcp:mcp-kb-sqlite")
    assert code == 2, err
    assert "tool 'search' reported an error in its result" in err
    assert 'Search failed: OperationalError: fts5: syntax error near "?"' in err


# --- evalkit mcp inspect ------------------------------------------------------------------------------------


def test_inspect_lists_the_tools_and_drafts_a_mapping_that_loads(tmp_path, capsys):
    draft = tmp_path / "draft.toml"
    code, out, err = cli(capsys, "mcp", "inspect", "--out", str(draft), "--", sys.executable, str(LEAKY))
    assert code == 0, err
    assert "tool store: Store thoughts (the namespace is accepted and ignored)." in out
    assert '"required": [' in out
    text = draft.read_text()
    assert 'strategy = "namespace"\nargument = "namespace"' in text
    assert 'item = {id = "{id}", content = "{content}"}' in text
    assert 'arguments = {query = "{query}", top_k = "{top_k}"}' in text
    # the draft is a starting point: with its hit path filled in, it is a valid mapping
    draft.write_text(text.replace('hits = "TODO"', 'hits = "hits"'))
    assert load_mapping(draft).search.tool == "search"


def test_inspect_of_a_server_that_cannot_start_is_one_line(capsys):
    code, _, err = cli(capsys, "mcp", "inspect", "--", "/nonexistent/server")
    assert code == 2 and "cannot start or reach the MCP server" in err and "Traceback" not in err


def test_inspect_reads_a_streamable_http_server_by_its_url(tmp_path, capsys):
    from evalkit import ReferenceSystem, run_eval
    from evalkit.systems.mcp_server import create_server
    from tests.servers import serving

    with serving(create_server(ReferenceSystem()).streamable_http_app()) as url:
        code, out, err = cli(capsys, "mcp", "inspect", f"{url}/mcp", "--out", str(tmp_path / "draft.toml"))
        assert code == 0, err
        # for evalkit's own server the draft, as printed, is a working mapping
        system = McpSystem.from_mapping(tmp_path / "draft.toml")
        try:
            run = run_eval(system=system, datasets=DATASETS, scenarios=["explicit-fact"], thresholds=None)
        finally:
            system.close()
    assert run.result.overall.metrics == {"recall": 1.0, "precision": 0.2, "mrr": 0.9, "hit_rate": 1.0}
    assert "tool search_batch: Several searches of a namespace in one call" in out
    assert f'url = "{url}/mcp"' in out
    assert 'strategy = "namespace"\nargument = "namespace"' in out
    assert 'tool = "store_thoughts"\nbatch = "thoughts"' in out


def test_a_captured_stderr_is_quoted_when_the_server_fails(tmp_path):
    path = _leaky(tmp_path, 'strategy = "none"')
    crash = "import sys; sys.stderr.write('boom: no config file'); sys.exit(3)"
    path.write_text(
        path.read_text().replace(
            f"args = [{json.dumps(str(LEAKY))}]", f'args = ["-c", {json.dumps(crash)}]\nstderr = "capture"'
        )
    )
    with pytest.raises(AdapterError, match=r"cannot start or reach the MCP server .*its stderr ended with: "
                       r"'boom: no config file'"):  # fmt: skip
        McpSystem.from_mapping(path)


def test_a_namespace_argument_server_memory_does_not_take_is_refused_at_start(tmp_path):
    # zod would drop the unknown key silently, and every scenario would share one memory
    text = (DATASETS.parent / "evalkit" / "systems" / "mcp_presets" / "server-memory.toml").read_text()
    path = tmp_path / "m.toml"
    path.write_text(
        text.replace('strategy = "process"', 'strategy = "namespace"\nargument = "namespace"').replace(
            'env = {MEMORY_FILE_PATH = "{workdir}/memory.jsonl"}',
            f'env = {{MEMORY_FILE_PATH = "{tmp_path}/m.jsonl"}}',
        )
    )
    with pytest.raises(AdapterError) as caught:
        McpSystem.from_mapping(path)
    assert (
        "tool 'search_nodes' has no argument 'namespace' (isolation.argument), sent by search; its "
        "inputSchema's properties: query (required)" in str(caught.value)
    ), caught.value
