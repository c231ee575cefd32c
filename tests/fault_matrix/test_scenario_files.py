"""Bad scenario files: each exits 2 naming the file and the field; nothing runs.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from evalkit.errors import MAX_LISTED_PROBLEMS
from tests.fault_matrix.common import (
    HEAD,
    THOUGHTS,
    TINY,
    assert_refused,
    cli,
    run_args,
    snapshot,
)


def _anchors() -> str:
    """Nine anchors of nine aliases each: `*a8` expands to 9**9 = 387,420,489 strings."""
    lines = ["anchors:", "  - &a0 [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"  - &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


def _json_scenario(content: str = "alpha", query: str = "alpha") -> str:
    """A JSON scenario whose thought content and query are spliced in as raw JSON string text
    (so they may hold escapes such as a lone \\ud800 that json.dumps would never write)."""
    scenario = {
        "name": "sur",
        "category": "explicit-fact",
        "distractors": False,
        "thoughts": [{"id": "a", "content": "<CONTENT>"}],
        "queries": [{"query": "<QUERY>", "relevant": ["a"]}],
    }
    return json.dumps(scenario).replace("<CONTENT>", content).replace("<QUERY>", query)


# --- bad scenario files ---------------------------------------------------------------------------

BAD_SCENARIOS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "alias-bomb-in-description": (
        "bomb.yaml",
        HEAD + _anchors() + "description: *a8\n" + THOUGHTS,
        ("more than 1,000,000 values", "aliases"),
    ),
    "alias-bomb-in-created-at": (
        "bomb.yaml",
        HEAD + _anchors() + "thoughts:\n  - {id: a, content: alpha, created_at: *a8}\n"
        "queries:\n  - {query: alpha, relevant: [a]}\n",
        ("more than 1,000,000 values",),
    ),
    "alias-bomb-as-thoughts": (
        "bomb.yaml",
        HEAD + _anchors() + "thoughts: *a8\nqueries:\n  - {query: x}\n",
        ("aliases",),
    ),
    "alias-bomb-as-queries": ("bomb.yaml", HEAD + _anchors() + "thoughts: []\nqueries: *a7\n", ("aliases",)),
    "yaml-nesting-20000": (
        "deep.yaml",
        HEAD + "description: " + "[" * 20000 + "]" * 20000 + "\n" + THOUGHTS,
        ("nested deeper than 64 levels", "line 4"),
    ),
    "yaml-nesting-100-block": (
        "deep.yaml",
        HEAD + "description:\n" + "".join("  " * i + "-\n" for i in range(1, 100)) + THOUGHTS,
        ("nested deeper than 64 levels",),
    ),
    "json-nesting-20000": (
        "deep.json",
        '{"description": ' + "[" * 20000 + "]" * 20000 + "}",
        ("nested deeper",),
    ),
    "json-nesting-100": ("deep.json", '{"description": ' + "[" * 100 + "]" * 100 + "}", ("nested deeper",)),
    "json-lone-surrogate-in-thought": (
        "s.json",
        _json_scenario(content="ok \\ud800 bad"),
        ("scenario 'sur'", "thoughts[0].content: lone surrogate \\ud800 at character 3"),
    ),
    "json-lone-surrogate-in-query": (
        "s.json",
        _json_scenario(query="\\udfff"),
        ("scenario 'sur'", "query 1.query: lone surrogate \\udfff"),
    ),
    "json-lone-surrogate-in-key": (
        "s.json",
        '{"name": "sur", "\\ud83d": 1}',
        ("(key): lone surrogate \\ud83d",),
    ),
    "huge-created-at-list": (
        "big.yaml",
        HEAD + "thoughts:\n  - {id: a, content: alpha, created_at: [" + ", ".join(["12345"] * 20000) + "]}\n"
        "queries:\n  - {query: alpha, relevant: [a]}\n",
        ("thoughts[0].created_at: [12345, 12345", "is not a string", "..."),
    ),
    "numeric-created-at": (
        "num.yaml",
        HEAD + "thoughts:\n  - {id: a, content: alpha, created_at: 1700000000}\n"
        "queries:\n  - {query: alpha, relevant: [a]}\n",
        ("created_at: 1700000000 is not a string", "quoted"),
    ),
    "huge-description-mapping": (
        "big.yaml",
        HEAD + "description: {" + ", ".join(f"k{i}: {i}" for i in range(20000)) + "}\n" + THOUGHTS,
        ("description: Input should be a valid string", "..."),
    ),
    "huge-duplicate-id": (
        "ids.yaml",
        HEAD
        + "thoughts:\n"
        + f"  - {{id: {'x' * 100000}, content: a}}\n" * 2
        + "queries:\n  - {query: alpha, relevant: [a]}\n",
        ("thoughts[1].id: duplicate thought id 'xxxx", "...", "unknown thought id 'a'"),
    ),
    "duplicate-key": ("dup.yaml", HEAD + "name: again\n" + THOUGHTS, ("duplicate key 'name'",)),
    "invalid-utf8": ("bin.yaml", "", ("not valid UTF-8", "save it as UTF-8")),
    "yaml-syntax": ("syn.yaml", HEAD + "thoughts: [\n", ("YAML syntax error at line",)),
    "json-syntax": ("syn.json", '{"name": "x",', ("JSON syntax error at line 1",)),
    "empty-file": ("empty.yaml", "", ("the file is empty",)),
    "top-level-list": ("list.yaml", "- a\n- b\n", ("the file is a list; it must hold one mapping",)),
    "unknown-key": ("unk.yaml", HEAD + "thougts: []\n" + THOUGHTS, ("unknown key 'thougts'", "did you mean")),
    "stray-suffix": ("typo.yam", TINY, ("not a scenario file; rename it",)),
    "dangling-relevant": (
        "dang.yaml",
        HEAD + "thoughts:\n  - {id: a, content: alpha}\nqueries:\n  - {query: x, relevant: [zz]}\n",
        ("unknown thought id 'zz'",),
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_SCENARIOS))
def test_bad_scenario_file_exits_2_naming_file_and_field(
    ws: Path, capsys, case: str, yaml_loader: type
) -> None:
    name, text, needles = BAD_SCENARIOS[case]
    target = ws / "data" / "scenarios" / name
    if case == "invalid-utf8":
        target.write_bytes(HEAD.encode() + b"description: caf\xe9\n" + THOUGHTS.encode())
    else:
        target.write_text(text, encoding="utf-8", errors="surrogatepass")
    before = snapshot(ws)
    started = time.process_time()
    code, out, err = cli(capsys, *run_args())
    assert_refused(code, err, str(Path("data/scenarios") / name), "nothing was run", *needles)
    assert out == "" and len(err) < 4000  # values were cut before they were formatted
    assert time.process_time() - started < 10
    assert snapshot(ws) == before


@pytest.mark.parametrize("where", ["scenarios/x.yaml", "distractors.yaml"])
def test_named_pipe_is_refused_without_being_opened(ws: Path, capsys, where: str) -> None:
    os.mkfifo(ws / "data" / where)
    code, out, err = cli(capsys, *run_args())
    assert_refused(code, err, str(Path("data") / where), "a named pipe, not a regular file")
    assert out == "" and not (ws / "reports" / "report.json").exists()


# --- every problem of a file at once ---------------------------------------------------------------


def test_a_misspelt_key_and_a_bad_category_are_reported_at_once_with_did_you_mean(ws, capsys):
    """The category error appeared only on the next run (after the key was fixed), with no "did
    you mean"; the scenario is now also checked as if the unknown keys were absent, so a dangling
    id is named in the same message."""
    (ws / "data" / "scenarios" / "bad.yaml").write_text(
        "name: bad\ncategory: explicit-fakt\ndistractors: false\ndescripton: x\n"
        "thoughts:\n  - {id: alpha, content: alpha}\n"
        "queries:\n  - {query: alpha, relevant: [alpa], forbidd: [alpha]}\n"
    )
    code, _, err = cli(capsys, *run_args())
    where = "data/scenarios/bad.yaml: scenario 'bad': "
    assert_refused(
        code,
        err,
        "4 problems in the scenario dataset",
        where + "descripton: unknown key 'descripton' (did you mean 'description'?)",
        where + "query 1.forbidd: unknown key 'forbidd' (did you mean 'forbid'?)",
        where + "category: unknown category 'explicit-fakt' (did you mean 'explicit-fact'?)",
        where + "query 1.relevant[0]: unknown thought id 'alpa' (did you mean 'alpha'?)",
    )


def test_a_bad_category_is_named_beside_a_type_error(ws, capsys):
    (ws / "data" / "scenarios" / "bad.yaml").write_text(
        "name: bad\ncategory: temporl\ndistractors: false\n"
        + THOUGHTS.replace("relevant: [a]", "top_k: many")
    )
    code, _, err = cli(capsys, *run_args())
    assert_refused(
        code,
        err,
        "query 1.top_k: Input should be a valid integer",
        "unknown category 'temporl' (did you mean 'temporal'?)",
    )


def test_a_choice_says_did_you_mean(ws, capsys):
    (ws / "data" / "scenarios" / "bad.yaml").write_text(HEAD + "outcome: xfial\n" + THOUGHTS)
    code, _, err = cli(capsys, *run_args())
    assert_refused(code, err, "outcome: Input should be", "(got 'xfial') (did you mean 'xfail'?)")


def test_a_long_list_of_problems_is_cut_at_a_screen_and_counted(ws, capsys):
    thoughts = "".join(f"  - {{id: t{i}, content: alpha, bogus{i}: 1}}\n" for i in range(30))
    (ws / "data" / "scenarios" / "bad.yaml").write_text(
        HEAD + "thoughts:\n" + thoughts + "queries:\n  - {query: alpha, relevant: [t0]}\n"
    )
    code, _, err = cli(capsys, *run_args())
    assert_refused(code, err, "30 problems in the scenario dataset", "  - … and 10 more problems")
    assert len(err.strip().splitlines()) == 1 + MAX_LISTED_PROBLEMS + 1
