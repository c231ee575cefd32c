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
from evalkit.systems.base import OpenContext, SearchOptions
from evalkit.systems.mcp.adapter import McpSystem
from evalkit.systems.mcp.mapping import load_mapping, mapping_source, preset_names
from evalkit.systems.mcp.templates import compiled, render
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


def test_a_compiled_template_renders_what_render_renders():
    values = {"id": "a", "top_k": 5, "project": None, "seeded_ids": ("a", "b"), "now": NOW, "flag": True}
    templates = [
        {"name": "{id}", "k": "{top_k}", "project": "{project}", "ids": "{seeded_ids}", "missing": "{query}"},
        {"nested": {"list": ["{id}", "{project}", "note {id} at {now}", 3, None], "const": 3.5}},
        {"braces": "{{literal}} {top_k} {flag}", "plain": "text", "empty": "", "none": "{project} x"},
        ["{id}", ["{project}"], {"a": "{id}"}],
        "{top_k}",
        7,
    ]
    for template in templates:
        for send_null in (False, True):
            assert compiled(template, send_null=send_null)(values) == render(
                template, values, send_null=send_null
            )


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


def test_edges_with_the_store_call_are_checked_against_the_store_tools_schema(tmp_path):
    path = _leaky(tmp_path, 'strategy = "namespace"\nargument = "namespace"')
    path.write_text(path.read_text() + '[edges]\nwith_store = "links"\nitem = {source = "{source}"}\n')
    # the leaky server's store takes no edges: the argument is named, with the store's properties
    with pytest.raises(
        AdapterError,
        match=r"tool 'store' has no argument 'links', sent by store; its inputSchema's properties: "
        r"namespace \(required\), thoughts \(required\)",
    ):
        McpSystem.from_mapping(path)


def test_edges_with_the_store_call_items_are_checked_against_the_edge_schema(tmp_path):
    mapping = (DATASETS / "mcp" / "reference.toml").read_text()
    path = tmp_path / "m.toml"
    path.write_text(mapping.replace('item = {source = "{source}",', 'item = {from = "{source}",'))
    with pytest.raises(AdapterError) as caught:
        McpSystem.from_mapping(path)
    assert "tool 'store_thoughts' has no argument 'from', sent by edges.with_store items (edges[])" in str(
        caught.value
    ), caught.value
    assert "tool 'store_thoughts' requires argument 'source', which edges.with_store items (edges[])" in str(
        caught.value
    )


@pytest.mark.parametrize(
    ("store", "edges", "needle"),
    [
        ('arguments = {id = "{id}", content = "{content}"}', 'with_store = "edges"\nitem = {}',
         "edges.with_store needs store.batch (one store call for all the thoughts)"),
        (None, 'with_store = "edges"\ntool = "link"\nitem = {}',
         "edges.with_store sends the edges with the store call: edges.tool cannot be given with it"),
        (None, 'with_store = "edges"', "edges.with_store needs edges.item (the template of one edge)"),
        (None, 'with_store = "thoughts"\nitem = {}', "edges.with_store 'thoughts' is already an argument"),
        (None, 'item = {}', "give edges.tool (the tool that links) or edges.with_store"),
    ],
)  # fmt: skip
def test_edges_with_the_store_call_mistakes_are_named(tmp_path, store, edges, needle):
    path = _leaky(tmp_path, 'strategy = "none"')
    text = path.read_text() + f"[edges]\n{edges}\n"
    if store is not None:
        text = text.replace('batch = "thoughts"\nitem = {id = "{id}", content = "{content}"}', store)
    path.write_text(text)
    with pytest.raises(AdapterError) as caught:
        load_mapping(path)
    assert needle in str(caught.value), caught.value


def test_edges_with_the_store_call_go_in_one_call_and_an_edges_only_add_too(tmp_path, monkeypatch):
    from evalkit import ReferenceSystem
    from evalkit.records import Edge
    from evalkit.systems.mcp import session as mcp_session

    sent: list[tuple[str, dict]] = []
    original = mcp_session.Session.call

    def counted(self, tool, arguments, timeout=None):
        sent.append((tool, arguments))
        return original(self, tool, arguments, timeout)

    monkeypatch.setattr(mcp_session.Session, "call", counted)
    thoughts = [Thought(id=i, content=f"the {i} note", created_at=NOW) for i in ("a", "b", "c")]
    hits = []
    options = dict(
        top_k=5, min_relevance=0.0, now=NOW, project=None, recency_weight=0.0, recency_half_life_days=30.0
    )
    for system in (McpSystem.from_mapping(DATASETS / "mcp" / "reference.toml"), ReferenceSystem()):
        try:
            with system.open(OpenContext(tmp_path / type(system).__name__)) as memory:
                memory.add_thoughts(thoughts[:2])
                assert sent == [] or not isinstance(system, McpSystem)  # held until the edges come
                memory.add_edges([Edge("a", "b", "replaces")])
                memory.add_thoughts(thoughts[2:])
                memory.search("note", SearchOptions(**options))  # sends the held store first
                memory.add_edges([Edge("c", "a", "replaces")])  # edges alone: a store call, no thoughts
                hits.append(
                    [(h.id, h.standing) for h in memory.search("note", SearchOptions(**options)).hits]
                )
        finally:
            getattr(system, "close", lambda: None)()
    stores = [(len(a["thoughts"]), len(a["edges"])) for tool, a in sent if tool == "store_thoughts"]
    assert stores == [(2, 1), (1, 0), (0, 1)]
    assert [t for t, _ in sent] == ["store_thoughts", "store_thoughts", "search", "store_thoughts", "search"]
    assert hits[0] == hits[1] and len(hits[0]) >= 1, hits  # what the reference store gives in-process


def test_only_a_mapping_using_the_workdir_needs_a_scratch_folder_per_scenario(tmp_path):
    shared = _leaky(tmp_path, 'strategy = "namespace"\nargument = "namespace"')
    (tmp_path / "process").mkdir()
    search = '{query = "{query}", top_k = "{top_k}", namespace = "{scenario}"}'
    per_scenario = _leaky(tmp_path / "process", 'strategy = "process"', search=search)
    per_scenario.write_text(
        per_scenario.read_text().replace(
            'batch = "thoughts"', 'batch = "thoughts"\narguments = {namespace = "x"}'
        )
    )
    sent = tmp_path / "sent.toml"
    sent.write_text(shared.read_text().replace('content = "{content}"}', 'content = "{content} {workdir}"}'))
    needs = {}
    for label, path in (("shared", shared), ("process", per_scenario), ("sent", sent)):
        system = McpSystem.from_mapping(path)
        try:
            needs[label] = system.needs_workdir
        finally:
            system.close()
    assert needs == {"shared": False, "process": True, "sent": True}


# --- drops sent without waiting ----------------------------------------------------------------------------


def _failing_drop(tmp_path: Path) -> Path:
    """The reference mapping whose drop names a namespace that does not exist (the server's error)."""
    path = tmp_path / "m.toml"
    path.write_text(
        (DATASETS / "mcp" / "reference.toml")
        .read_text()
        .replace(
            'drop = {tool = "drop_namespace"}',
            'drop = {tool = "drop_namespace", arguments = {namespace = "gone"}}',
        )
    )
    return path


@pytest.mark.parametrize("scenarios", [["explicit-fact", "supersession"], ["explicit-fact"]])
def test_a_failed_drop_sent_without_waiting_stops_the_run_naming_its_scenario(tmp_path, scenarios):
    from evalkit import run_eval

    system = McpSystem.from_mapping(_failing_drop(tmp_path))
    try:
        # with two scenarios the second one's store call raises it, with one the run's end does
        with pytest.raises(AdapterError) as caught:
            run_eval(system=system, datasets=DATASETS, scenarios=scenarios, thresholds=None)
    finally:
        system.close()
    message = str(caught.value)
    assert "tool 'drop_namespace' (the drop after scenario 'explicit-fact', namespace 'evalkit-" in message
    assert "reported an error" in message and "no namespace 'gone'" in message, message


def test_a_drop_still_pending_is_answered_by_close(tmp_path):
    system = McpSystem.from_mapping(_failing_drop(tmp_path))
    with system.open(OpenContext(tmp_path, "s")) as memory:
        memory.add_thoughts([Thought(id="a", content="a note", created_at=NOW)])
        memory.add_edges([])
    assert system.defers_drops
    with pytest.raises(AdapterError, match=r"the drop after scenario 's', namespace .*no namespace 'gone'"):
        system.close()
    system.close()  # closed: nothing pending any more


# --- isolation -----------------------------------------------------------------------------------------


def test_a_server_ignoring_the_namespace_argument_is_reported_not_isolated(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _suite(tmp_path, {"alpha": "Which port does the alpha API listen on?",
                      "beta": "Which port does the beta API listen on?"})  # fmt: skip
    mapping = _leaky(tmp_path, 'strategy = "namespace"\nargument = "namespace"\ndrop = {tool = "drop"}')
    code, _, err = cli(  # one server for both scenarios (in flight, each would get its own)
        capsys, "run", "--datasets", "data", "--thresholds", "none", "--system", f"mcp:{mapping}",
        "--workers", "1",
    )  # fmt: skip
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
        with system.open(OpenContext(tmp_path, "one")) as memory:
            memory.add_thoughts(shared)
        with system.open(OpenContext(tmp_path, "two")) as memory:
            memory.add_thoughts(shared)
            expected = (
                r"thought 'shared' was returned 2 times in scenario 'two' "
                r"\(seeded also in scenario 'one'; isolation: namespace argument"
            )
            with pytest.raises(AdapterError, match=expected):
                memory.search("ports", SearchOptions(top_k=5, now=NOW))
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
    from evalkit.systems.mcp import session as mcp_session

    calls: list[str] = []
    original = mcp_session.Session.call

    def counted(self, tool, arguments, timeout=None):
        calls.append(tool)
        return original(self, tool, arguments, timeout)

    monkeypatch.setattr(mcp_session.Session, "call", counted)
    sent = mcp_session.Session.send

    def counted_send(self, tool, arguments, what, **order):  # the drop: sent without waiting for its reply
        calls.append(tool)
        return sent(self, tool, arguments, what, **order)

    monkeypatch.setattr(mcp_session.Session, "send", counted_send)
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
    text = (DATASETS.parent / "evalkit" / "systems" / "mcp" / "presets" / "server-memory.toml").read_text()
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
    from evalkit.systems.mcp.server import create_server
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
    text = (DATASETS.parent / "evalkit" / "systems" / "mcp" / "presets" / "server-memory.toml").read_text()
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
