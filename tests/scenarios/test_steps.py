"""Operation steps in scenario files (`steps:` delete / update / add between queries): their shape,
their cross-references replayed in order, and the capabilities they need."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import DatasetError
from evalkit.scenarios.loading import load_suite
from evalkit.scenarios.requirements import required_capabilities

_HEAD = (
    "name: ops\ncategory: supersession\ndistractors: false\nthoughts:\n"
    "  - {id: a, content: Alpha port 8080.}\n  - {id: b, content: Beta port 9090.}\n"
    "queries:\n  - {query: port, relevant: [a]}\n  - {query: port, relevant: [b]}\n"
)


def _load(tmp_path: Path, steps: str) -> list[str]:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "ops.yaml").write_text(_HEAD + steps, encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        load_suite(tmp_path)
    return caught.value.problems


def test_a_valid_scenario_with_every_operation_loads_and_needs_deletion_and_update(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "ops.yaml").write_text(
        _HEAD
        + "steps:\n  - {after_query: 1, delete: [a]}\n"
        + "  - {after_query: 1, update: {id: b, content: Beta port 9191.}}\n"
        + "  - after_query: 1\n    add:\n      thoughts: [{id: a, content: Alpha again.}]\n"
        + "      edges: [{source: a, target: b, type: related}]\n",
        encoding="utf-8",
    )
    (scenario,) = load_suite(tmp_path).scenarios
    assert [s.operation for s in scenario.steps] == ["delete", "update", "add"]
    assert [s.operation for s in scenario.steps_before(1)] == ["delete", "update", "add"]
    assert scenario.steps_before(0) == []
    assert {"deletion", "update"} <= required_capabilities(scenario)


def test_an_operation_on_an_id_that_does_not_exist_names_file_scenario_step_and_fix(tmp_path):
    (problem,) = _load(tmp_path, "steps:\n  - {after_query: 1, delete: [zz]}\n")
    assert problem == (
        f"{tmp_path / 'scenarios' / 'ops.yaml'}: scenario 'ops': steps[0].delete[0]: unknown thought id 'zz' "
        "(not in the memory at this step)"
    )


def test_a_step_after_the_last_query_is_an_error(tmp_path):
    (problem,) = _load(tmp_path, "steps:\n  - {after_query: 2, delete: [a]}\n")
    assert "steps[0].after_query: 2 is not before any query (the scenario has 2)" in problem
    assert "ask a query after it or drop the step" in problem


def test_an_update_of_a_deleted_id_names_the_step_that_deleted_it(tmp_path):
    problems = _load(
        tmp_path,
        "steps:\n  - {after_query: 1, delete: [a]}\n"
        "  - {after_query: 1, update: {id: a, status: archived}}\n",
    )
    assert problems == [
        f"{tmp_path / 'scenarios' / 'ops.yaml'}: scenario 'ops': steps[1].update.id: 'a' was deleted by "
        "steps[0], so it cannot be updated; re-add it with an add step first or drop this"
    ]


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (
            "  - {after_query: 1, delete: [a], update: {id: b, status: draft}}\n",
            "steps[0]: a step holds exactly one of delete, update, add (this one holds delete, update)",
        ),
        ("  - {after_query: 1}\n", "steps[0]: a step holds exactly one of delete, update, add"),
        (
            "  - {after_query: 1, update: {id: b}}\n",
            "steps[0].update: an update changes `content`, `status` or both",
        ),
        ("  - {after_query: 1, add: {}}\n", "steps[0].add: an add step lists `thoughts`, `edges` or both"),
        ("  - {after_query: 1, delete: [a, a]}\n", "steps[0].delete[1]: 'a' is listed twice"),
        (
            "  - {after_query: 1, add: {thoughts: [{id: b, content: x}]}}\n",
            "steps[0].add.thoughts[0].id: 'b' is already in the memory",
        ),
        (
            "  - {after_query: 1, delete: [a]}\n  - {after_query: 0, delete: [b]}\n",
            "steps[1].after_query: 0 comes after a step at after_query 1",
        ),
        (
            "  - {after_query: 0, delete: [b]}\n",
            "query 2.relevant[0]: 'b' was deleted by steps[0], so it cannot be relevant",
        ),
        (
            "  - {after_query: 1, add: {edges: [{source: a, target: c}]}}\n",
            "steps[0].add.edges[0].target: unknown thought id 'c'",
        ),
        # it passed the loader and lint, then failed mid-run naming no file, scenario or step
        (
            "  - {after_query: 1, add: {edges: [{source: a, target: a}]}}\n",
            "steps[0].add.edges[0]: related edge from 'a' to itself; an edge links two thoughts",
        ),
        # it ran as after query 1
        ("  - {after_query: true, delete: [a]}\n", "steps[0].after_query: Input should be a valid integer"),
    ],
)
def test_bad_steps_are_problems_of_their_step(tmp_path, steps, expected):
    problems = _load(tmp_path, "steps:\n" + steps)
    assert any(expected in p for p in problems), problems


def test_a_relevant_id_added_later_is_not_relevant_before_its_add_step(tmp_path):
    (tmp_path / "scenarios").mkdir()
    text = _HEAD.replace("relevant: [a]}", "relevant: [c]}") + (
        "steps:\n  - {after_query: 1, add: {thoughts: [{id: c, content: Gamma.}]}}\n"
    )
    (tmp_path / "scenarios" / "ops.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        load_suite(tmp_path)
    assert any("query 1.relevant[0]: 'c' is added only by steps[0]" in p for p in caught.value.problems)
