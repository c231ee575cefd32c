"""How the CLI reports errors that reach it wrapped in exception groups (evalkit.cli.main)."""

from __future__ import annotations

import pytest

from evalkit.cli import sole_evalkit_error
from evalkit.errors import AdapterError, UsageError
from tests.shared import cli


def test_an_adapter_error_inside_a_task_group_is_one_line_and_exit_2(capsys, tmp_path):
    spec = "tests.systems_fixtures:TaskGroupFailingSystem"
    code, _, err = cli(
        capsys, "run", "--system", spec, "--history", "none", "--out", str(tmp_path / "r.json")
    )
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        "evalkit: error: system 'async-client': the service answered 503 for search"
    )
    assert "Traceback" not in err and "ExceptionGroup" not in err


def test_a_group_with_anything_else_propagates(capsys, tmp_path):
    spec = "tests.systems_fixtures:TaskGroupFailingTwiceSystem"
    with pytest.raises(BaseExceptionGroup) as caught:
        cli(capsys, "run", "--system", spec, "--history", "none", "--out", str(tmp_path / "r.json"))
    assert {type(e) for e in caught.value.exceptions} == {AdapterError, ValueError}


def test_nested_groups_are_looked_through_and_only_a_sole_evalkit_error_counts():
    error = UsageError("bad")
    assert sole_evalkit_error(ExceptionGroup("outer", [ExceptionGroup("inner", [error])])) is error
    assert sole_evalkit_error(ExceptionGroup("two", [error, UsageError("other")])) is None
    assert sole_evalkit_error(ExceptionGroup("other", [ValueError("x")])) is None
