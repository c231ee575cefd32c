"""The MCP adapter against `evalkit serve --mcp` (a stdio subprocess), and its mapping file."""

from __future__ import annotations

import json
import re
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import AdapterError
from evalkit.systems.base import OpenContext, SearchOptions
from evalkit.systems.mcp.adapter import McpMapping, McpSystem, load_mapping
from tests.shared import DATASETS, comparable_file

MAPPING = DATASETS / "mcp" / "reference.toml"
FORMAT1 = Path(__file__).with_name("mcp") / "reference-format1.toml"


def _mapping(tmp_path, **changes):
    """The reference mapping in format 1 with top-level tables or keys replaced, written to a file."""
    data = tomllib.loads(FORMAT1.read_text())
    for dotted, value in changes.items():
        table, _, key = dotted.rpartition("__")
        (data[table] if table else data)[key] = value
    path = tmp_path / "mapping.toml"
    path.write_text(_toml(data))
    return path


def _toml(data, prefix=""):
    """Just enough TOML for the mapping: scalars, lists and one level of tables."""
    lines = [f"{k} = {json.dumps(v)}" for k, v in data.items() if not isinstance(v, dict) or prefix]
    for name, table in data.items():
        if isinstance(table, dict) and not prefix:
            lines.append(f"[{name}]")
            for k, v in table.items():
                lines.append(f"{k} = {_inline(v)}")
    return "\n".join(lines) + "\n"


def _inline(value):
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def test_builtin_suite_over_mcp_stdio_equals_the_in_process_run(tmp_path):
    # no baselines: the built-in ones are the in-process store's, and a served one is another system
    common = ["--datasets", str(DATASETS), "--thresholds", "none"]
    assert main(["run", *common, "--out", str(tmp_path / "local.json")]) == 0
    assert main(["run", *common, "--out", str(tmp_path / "mcp.json"), "--system", f"mcp:{MAPPING}"]) == 0
    assert comparable_file(tmp_path / "mcp.json") == comparable_file(tmp_path / "local.json")
    remote = json.loads((tmp_path / "mcp.json").read_text())
    assert remote["system"] == "reference-mcp"
    assert remote["provenance"]["system"]["system"] == "mcp"
    # an MCP server embeds by itself: mode `system`; the mapping declares no embedder
    assert (remote["mode"], remote["provenance"]["declaration"]["embedder"]) == ("system", "undeclared")


def test_the_reference_mappings_are_valid():
    assert load_mapping(FORMAT1).tools() == ["store_thoughts", "search", "drop_namespace", "add_edges"]
    # the edges go with the store call (edges.with_store): add_edges is not called
    assert load_mapping(MAPPING).tools() == [
        "store_thoughts", "search", "drop_namespace", "search_batch", "delete_thoughts", "update_thought",
    ]  # fmt: skip


def test_a_format_1_file_gives_the_in_process_numbers(tmp_path):
    # the same mapping as datasets/mcp/reference.toml, in format 1 (no templates, no batch)
    common = ["--datasets", str(DATASETS), "--thresholds", "none"]
    assert main(["run", *common, "--out", str(tmp_path / "local.json")]) == 0
    assert main(["run", *common, "--out", str(tmp_path / "v1.json"), "--system", f"mcp:{FORMAT1}"]) == 0
    assert comparable_file(tmp_path / "v1.json") == comparable_file(tmp_path / "local.json")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"capabilities": ["telepathy"]}, r"capabilities\[0\]"),
        ({"search__hit": {"relevance": "score"}}, r"search.hit must map id"),
        (
            {"search__arguments": {"query": "q", "limit": "top_k"}},
            r"search.arguments: unknown evalkit name\(s\) limit",
        ),
        ({"server__url": "http://127.0.0.1:1/mcp"}, r"give exactly one of command \(stdio\) or url"),
    ],
)
def test_mapping_mistakes_name_the_file_and_field(tmp_path, changes, message):
    path = _mapping(tmp_path, **changes)
    with pytest.raises(AdapterError, match=message) as caught:
        load_mapping(path)
    assert str(path) in str(caught.value)


def test_missing_mapping_file_and_bad_toml(tmp_path):
    with pytest.raises(AdapterError, match="does not exist"):
        load_mapping(tmp_path / "none.toml")
    (tmp_path / "bad.toml").write_text("name = \n")
    with pytest.raises(AdapterError, match="cannot be read as TOML"):
        load_mapping(tmp_path / "bad.toml")


def _with_search(**update) -> McpMapping:
    """The reference mapping with its [search] table changed."""
    mapping = load_mapping(MAPPING)
    return mapping.model_copy(update={"search": mapping.search.model_copy(update=update)})


def test_a_tool_the_server_lacks_is_named_with_the_tools_it_has():
    with pytest.raises(
        AdapterError, match=r"the server has no tool 'recall'; its tools: info, store_thoughts"
    ):
        McpSystem(_with_search(tool="recall"), "test")


def test_a_server_that_cannot_start_is_a_clear_error(tmp_path):
    path = _mapping(tmp_path, server__command="/nonexistent/evalkit-server")
    with pytest.raises(AdapterError, match=r"cannot start or reach the MCP server"):
        McpSystem.from_mapping(path)


def test_tool_errors_are_adapter_errors():
    system = McpSystem.from_mapping(MAPPING)
    try:
        with pytest.raises(AdapterError, match=r"(?s)tool 'search' reported an error: .*top_k"):
            system.call(
                "search", {"namespace": "n", "query": "q", "top_k": "many", "now": "2026-01-01T00:00:00Z"}
            )
    finally:
        system.close()


def test_a_hit_list_missing_at_its_path_is_an_adapter_error(tmp_path):
    system = McpSystem(_with_search(hits="results"), "test")
    try:
        with (
            system.open(OpenContext(tmp_path)) as memory,
            pytest.raises(AdapterError, match=r"no 'results' in the result"),
        ):
            memory.search(
                "q", SearchOptions(top_k=3, min_relevance=0.0, now=datetime(2026, 1, 1, tzinfo=UTC))
            )
    finally:
        system.close()


def test_streamable_http_transport_gives_the_in_process_numbers():
    from evalkit import ReferenceSystem, run_eval
    from evalkit.systems.mcp.adapter import ServerSpec
    from evalkit.systems.mcp.server import create_server
    from tests.servers import serving

    options = {"datasets": DATASETS, "scenarios": ["supersession", "project-scope"], "thresholds": None}
    local = run_eval(**options).result
    with serving(create_server(ReferenceSystem()).streamable_http_app()) as url:
        mapping = load_mapping(MAPPING).model_copy(update={"server": ServerSpec(url=f"{url}/mcp")})
        system = McpSystem(mapping, "streamable-http")
        try:
            remote = run_eval(system=system, **options).result
        finally:
            system.close()
    assert remote.scenarios == local.scenarios
    assert remote.gated == local.gated


def test_search_results_keep_non_ascii_readable_and_a_non_finite_score_is_a_tool_error_naming_it():
    """`evalkit serve --mcp` writes a search result's text as UTF-8 JSON (non-ASCII as is, a
    string that merely spells NaN unchanged), the same values as its structured output; a NaN
    or an infinite score (which JSON cannot carry) is the tool's error saying so, for `search`
    and `search_batch` alike, and the server keeps serving."""
    import math

    from evalkit.systems.mcp.adapter import ServerSpec
    from evalkit.systems.mcp.server import create_server
    from tests.servers import serving
    from tests.systems_fixtures import RewritingSystem, with_first_hit

    score: list[float] = [0.5]

    def rewrite(response):
        return with_first_hit(response, similarity=score[0]) if response.hits else response

    now = "2026-01-01T00:00:00Z"
    thoughts = [{"id": "a", "content": "café 東京 x:NaN,[Infinity"}, {"id": "b", "content": "other"}]
    search = {"query": "café", "top_k": 2, "min_relevance": 0.0, "now": now}
    with serving(create_server(RewritingSystem(rewrite)).streamable_http_app()) as url:
        mapping = load_mapping(MAPPING).model_copy(update={"server": ServerSpec(url=f"{url}/mcp")})
        system = McpSystem(mapping, "streamable-http")
        try:
            system.call("store_thoughts", {"namespace": "n", "thoughts": thoughts})
            structured, texts = system.call("search", {"namespace": "n", **search})
            assert "café 東京 x:NaN,[Infinity" in texts[0] and "\\u" not in texts[0]
            assert json.loads(texts[0]) == structured and structured["hits"][0]["similarity"] == 0.5
            batch, batch_texts = system.call("search_batch", {"namespace": "n", "searches": [search, search]})
            assert json.loads(batch_texts[0]) == batch and batch["results"] == [structured, structured]
            for score[0] in (math.nan, math.inf, -math.inf):
                for tool, arguments in [("search", search), ("search_batch", {"searches": [search]})]:
                    with pytest.raises(AdapterError) as failed:
                        system.call(tool, {"namespace": "n", **arguments})
                    assert f"Error executing tool {tool}: the result holds a NaN or an infinity" in str(
                        failed.value
                    )
            score[0] = 0.25
            assert system.call("search", {"namespace": "n", **search})[0]["hits"][0]["similarity"] == 0.25
            system.call("drop_namespace", {"namespace": "n"})
        finally:
            system.close()


def test_the_step_tools_of_a_system_without_deletion_or_update_answer_an_error_naming_the_capability():
    from evalkit import ReferenceSystem
    from evalkit.systems.capabilities import ALL_CAPABILITIES
    from evalkit.systems.mcp.adapter import ServerSpec
    from evalkit.systems.mcp.server import create_server
    from tests.servers import serving

    class NoSteps(ReferenceSystem):
        capabilities = ALL_CAPABILITIES - {"deletion", "update"}

    search = {"query": "alpha", "top_k": 2, "min_relevance": 0.0, "now": "2026-01-01T00:00:00Z"}
    with serving(create_server(NoSteps()).streamable_http_app()) as url:
        mapping = load_mapping(MAPPING).model_copy(update={"server": ServerSpec(url=f"{url}/mcp")})
        system = McpSystem(mapping, "streamable-http")
        try:
            system.call("store_thoughts", {"namespace": "n", "thoughts": [{"id": "a", "content": "alpha"}]})
            calls = {
                "delete_thoughts": ({"ids": ["a"]}, "cannot delete thoughts (capability 'deletion')"),
                "update_thought": (
                    {"id": "a", "content": "beta"},
                    "cannot update thoughts (capability 'update')",
                ),
            }
            for tool, (arguments, said) in calls.items():
                with pytest.raises(AdapterError, match=re.escape(f"this system's memory {said}")):
                    system.call(tool, {"namespace": "n", **arguments})
            hits = system.call("search", {"namespace": "n", **search})[0]["hits"]
            assert [(h["id"], h["content"]) for h in hits] == [("a", "alpha")]  # untouched
            system.call("drop_namespace", {"namespace": "n"})
        finally:
            system.close()
