"""Hostile and silently misread input: what was a traceback (exit 1, the regressions code) or was
read as something else is exit 2 with one line naming the file, the item and the fix.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import pytest

from tests.fault_matrix.common import assert_refused, cli, fake_mcp_mapping, run_args, snapshot
from tests.shared import FIXTURES


@pytest.mark.parametrize(
    ("toml", "needles"),
    [
        ('datasets = "data\\u0000x"\n', ["evalkit.toml: datasets: the path holds a NUL character"]),
        (
            "datasets = " + "[" * 5000 + "]" * 5000 + "\n",
            ["evalkit.toml: its arrays or tables are nested too deeply"],
        ),
        # read as top_k 1, and as booleans
        ("top_k = true\n", ["evalkit.toml: top_k: Input should be a valid integer (got True)"]),
        ('gated = "yes"\n', ["evalkit.toml: gated: Input should be a valid boolean (got 'yes')"]),
        ('gated = "off"\n', ["evalkit.toml: gated: Input should be a valid boolean (got 'off')"]),
    ],
)
def test_a_hostile_or_misread_project_file_is_refused_naming_the_key(ws, capsys, toml, needles):
    (ws / "evalkit.toml").write_text(toml)
    before = snapshot(ws)
    code, _, err = cli(capsys, *run_args())
    assert_refused(code, err, *needles)
    assert snapshot(ws) == before


def test_history_of_a_folder_is_refused_not_empty(ws, capsys):
    """It said "no runs in DIR yet" (exit 0)."""
    code, _, err = cli(capsys, "history", "--history", "reports")
    assert_refused(code, err, "history reports is a folder", "did you mean reports/history.sqlite3?")


def test_compare_refuses_a_negative_seed(ws, capsys):
    code, _, err = cli(capsys, "compare", "a.json", "b.json", "--seed", "-1")
    assert_refused(code, err, "--seed: expected an integer from 0 to 4294967295, got -1")


def test_tokenizer_with_another_system_is_refused_not_ignored(ws, capsys):
    code, _, err = cli(capsys, *run_args("--system", "chroma", "--tokenizer", "trigram"))
    assert_refused(code, err, "--tokenizer sets the reference store's FTS5 tokenizer", "system 'chroma'")


def test_a_mapping_argument_nested_5000_deep_is_refused(ws, capsys):
    mapping = fake_mcp_mapping(ws, "ok")
    deep = "[" * 5000 + "]" * 5000
    mapping.write_text(mapping.read_text().replace('top_k = "top_k"}', f'top_k = "top_k", deep = {deep}}}'))
    code, _, err = cli(capsys, *run_args("--system", f"mcp:{mapping}"))
    assert_refused(code, err, f"MCP mapping file {mapping}: its arrays or tables are nested too deeply")


SEARCH = "trace 5b8efff798038103d269b633813fc60c span eee19b7ec3c1b174"
STORE_ATTRIBUTE = '"user-preferences-store"'
RECORD_ID = '\\"id\\": \\"mem_123\\"'  # inside the JSON string of gen_ai.memory.records


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        (RECORD_ID, '\\"id\\": \\"mem_\\\\ud800\\"', f"{SEARCH}: gen_ai.memory.records[1].id holds a lone"),
        (STORE_ATTRIBUTE, '"user-\\ud800-store"', f"{SEARCH}: gen_ai.memory.store.id holds a lone"),
    ],
)
def test_a_trace_text_holding_a_lone_surrogate_is_refused_naming_the_span(ws, capsys, old, new, needle):
    """A record id (or the store id) holding a lone surrogate was a traceback (a ValidationError,
    or a UnicodeEncodeError while writing)."""
    text = (FIXTURES / "traces" / "genai_memory.jsonl").read_text()
    assert old in text
    (ws / "hostile.jsonl").write_text(text.replace(old, new, 1))
    before = snapshot(ws)
    code, _, err = cli(capsys, "import", "traces", "--out", "imported", "hostile.jsonl")
    assert_refused(code, err, f"hostile.jsonl: {needle} surrogate \\ud800", "fix the exporter")
    assert snapshot(ws) == before


def test_a_label_holding_a_lone_surrogate_is_refused_naming_the_line(ws, capsys):
    query = "5b8efff798038103d269b633813fc60c/eee19b7ec3c1b174"
    (ws / "labels.jsonl").write_text(f'{{"query_id": "{query}", "relevant": ["mem_\\ud800"]}}\n')
    traces = str(FIXTURES / "traces" / "genai_memory.jsonl")
    before = snapshot(ws)
    code, _, err = cli(capsys, "import", "traces", "--out", "x", "--labels", "labels.jsonl", traces)
    assert_refused(code, err, "labels.jsonl line 1: relevant[0] holds a lone surrogate \\ud800")
    assert snapshot(ws) == before


def test_every_bad_key_of_the_project_file_is_named_at_once(ws, capsys):
    """Each bad key was named, but in one run-on line; now one line each, and an unknown key or
    system says "did you mean"."""
    (ws / "evalkit.toml").write_text('top_k = true\ngated = "yes"\ndatset = "data"\n')
    code, _, err = cli(capsys, *run_args())
    assert_refused(
        code,
        err,
        "evalkit.toml: 3 problems; fix it\n",
        "\n  - top_k: Input should be a valid integer (got True)",
        "\n  - gated: Input should be a valid boolean (got 'yes')",
        "\n  - datset: unknown key 'datset' (did you mean 'datasets'?)",
    )
    (ws / "evalkit.toml").write_text('system = "refrence"\n')
    code, _, err = cli(capsys, *run_args())
    assert_refused(code, err, "unknown system 'refrence' (did you mean 'reference'?)")


def test_a_trace_files_problems_and_its_spans_problems_come_in_one_message(ws, capsys):
    """A duplicate span id was reported first; a surrogate in a span came one import later."""
    text = (FIXTURES / "traces" / "genai_memory.jsonl").read_text()
    (ws / "hostile.jsonl").write_text(text.replace(STORE_ATTRIBUTE, '"user-\\ud800-store"', 1))
    (ws / "again.jsonl").write_text(text.splitlines()[1] + "\n")
    code, _, err = cli(capsys, "import", "traces", "--out", "imported", "hostile.jsonl", "again.jsonl")
    assert_refused(
        code, err, ": duplicate span id (also in hostile.jsonl)", "gen_ai.memory.store.id holds a lone"
    )
