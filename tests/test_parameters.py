"""evalkit.parameters: `check_parameters` inside a kernel rejects what plain papermill injects but
the notebook does not declare, and values of the wrong type, with one line; the messages of the
command-line checks count their parameters right."""

from __future__ import annotations

from pathlib import Path

import papermill
import pytest

from evalkit.parameters import NotebookParameterError, check_parameters
from tests.shared import NOTEBOOKS

PARAMETERS_CELL = 'top_k: int = 5  # results per query\ngate: "Optional[float]" = None  # gate\n'


def _kernel(injected: str = "", **values: object) -> dict[str, object]:
    """What a kernel's globals hold after the parameters cell and papermill's injected cell."""
    namespace: dict[str, object] = {
        "__annotations__": {"top_k": int, "gate": "Optional[float]"},
        "top_k": 5,
        "gate": None,
        "In": ["", PARAMETERS_CELL, *([f"# Parameters\n{injected}"] if injected else [])],
        "_i1": PARAMETERS_CELL,
    }
    return namespace | values


def test_declared_parameters_of_the_right_type_pass_and_are_returned() -> None:
    assert check_parameters(_kernel()) == {"top_k": 5, "gate": None}
    assert check_parameters(_kernel("top_k = 3\ngate = 0.3\n", top_k=3, gate=0.3)) == {
        "top_k": 3,
        "gate": 0.3,
    }
    assert check_parameters(_kernel("gate = 1\n", gate=1))["gate"] == 1  # an int is a float


def test_an_injected_parameter_the_notebook_does_not_declare_is_refused() -> None:
    with pytest.raises(NotebookParameterError) as caught:
        check_parameters(_kernel("topk = 3\n", topk=3))
    assert str(caught.value) == (
        "this notebook does not declare parameter 'topk' (did you mean 'top_k'?); it declares: top_k (int); "
        "gate (float | None)"
    )
    with pytest.raises(NotebookParameterError, match="does not declare parameters 'a', 'b';"):
        check_parameters(_kernel("a = 1\nb = 2\n", a=1, b=2))


def test_a_value_of_the_wrong_type_is_refused_in_one_line() -> None:
    with pytest.raises(NotebookParameterError) as caught:
        check_parameters(_kernel("top_k = 'abc'\n", top_k="abc"))
    assert str(caught.value) == "parameter 'top_k' of this notebook expects int, got 'abc' (str)"
    assert caught.value._render_traceback_() == [f"NotebookParameterError: {caught.value}"]
    with pytest.raises(NotebookParameterError, match="expects int, got True"):
        check_parameters(_kernel("top_k = True\n", top_k=True))


def test_every_problem_of_the_injected_parameters_is_named_at_once() -> None:
    with pytest.raises(NotebookParameterError) as caught:
        check_parameters(_kernel("topk = 3\ntop_k = 'abc'\n", topk=3, top_k="abc"))
    assert str(caught.value).splitlines() == [
        "2 problems with the parameters of this notebook",
        "  - this notebook does not declare parameter 'topk' (did you mean 'top_k'?); it declares: "
        "top_k (int); gate (float | None)",
        "  - parameter 'top_k' of this notebook expects int, got 'abc' (str)",
    ]


def test_names_the_notebook_assigns_later_are_not_parameters() -> None:
    namespace = _kernel(run="a run")
    namespace["In"] = [*namespace["In"], "run = run_and_load(out)"]  # type: ignore[list-item]
    assert check_parameters(namespace) == {"top_k": 5, "gate": None}


def test_outside_ipython_only_the_types_are_checked() -> None:
    namespace = {"__annotations__": {"top_k": int}, "top_k": "5"}
    with pytest.raises(NotebookParameterError, match="expects int"):
        check_parameters(namespace)
    assert check_parameters({}) == {}


def test_plain_papermill_with_an_unknown_parameter_fails_with_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(papermill.PapermillExecutionError) as caught:
        papermill.execute_notebook(
            str(NOTEBOOKS / "eval_report.ipynb"),
            str(tmp_path / "out.ipynb"),
            parameters={"topk": 3},
            cwd=str(tmp_path),
            progress_bar=False,
            kernel_name="python3",
        )
    assert caught.value.ename == "NotebookParameterError"
    assert caught.value.traceback == [f"NotebookParameterError: {caught.value.evalue}"]
    assert caught.value.evalue.startswith(
        "this notebook does not declare parameter 'topk' (did you mean 'top_k'?); it declares: embedder (str)"
    )
    assert not (tmp_path / "reports").exists()  # stopped before anything ran
