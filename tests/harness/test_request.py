"""`RunRequest`: one declaration of a run, and every spelling of it held to that declaration.

The spelling test walks the request's fields: each has its name in every spelling (a flag of
`evalkit run`, a key of evalkit.toml, a parameter of the report notebook, a keyword of
`run_eval`) or says, with a reason, that the spelling does not offer it; and each option of a
spelling is a field's (or listed here with why it is not a run option). The property test asks
for the same request through `run_request` and through the command line and gets the same
verdict.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.api import run_eval, run_request
from evalkit.cli import build_parser, main
from evalkit.errors import UsageError
from evalkit.harness.config import RunConfig
from evalkit.harness.project import ProjectSettings
from evalkit.harness.request import SPELLINGS, NotThere, RunRequest, options
from evalkit.memory.options import StoreOptions
from evalkit.notebooks import read_parameters
from tests.shared import DATASETS, ROOT

RECORDING_FLAGS = {
    "--update-baseline": "records a baseline from the run's result (moving to a command of its own)",
    "--update-gated-baseline": "records a gated baseline from the run's result (the same)",
    "--tolerance": "a tolerance of the recorded gated baseline",
    "--category-tolerance": "a tolerance of the recorded gated baseline",
    "--accept-unstable": "records a baseline from repeated runs that disagree",
}
"""Flags of `evalkit run` that are no run option: they record the run's result as a baseline."""

NOT_RUN_OPTIONS = {
    "toml": {"reports": "the project's reports folder, where a run's outputs go by default"},
    "notebook": {
        "report_json": "the notebook shows a saved report instead of running",
        "fail_on_regression": "whether the notebook's last cell raises (the CLI's exit code)",
    },
    "api": {
        "config": "a whole RunConfig (the settings of a request, `RunRequest.config`)",
        "executor": "an Executor object (the request's executor and workers, made)",
        "progress": "shown progress (the request's progress)",
        "overrides": "RunConfig fields as keywords",
        "metrics": "extra IR metrics, for benchmarks (Python only)",
        "store": "StoreOptions, Python only (the tokenizer is also a request option)",
        "retrieval": "a store option, Python only",
        "query_syntax": "a store option, Python only",
        "stopwords": "a store option, Python only",
    },
}
"""Names in a spelling that are not a run request's option, with why."""


def _names(spelling: str, field: str) -> tuple[str, ...]:
    name = options()[field].name(field, spelling)
    if isinstance(name, NotThere):
        return ()
    return (name,) if isinstance(name, str) else name


def spelling_names(spelling: str) -> set[str]:
    """Every name `spelling` offers."""
    if spelling == "cli":
        run = build_parser()._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
        flags = {flag for action in run._actions for flag in action.option_strings if flag.startswith("--")}
        return flags - {"--help", "--no-require-baseline", "--no-progress"}
    if spelling == "toml":
        return set(ProjectSettings.model_fields)
    if spelling == "notebook":
        return set(read_parameters(ROOT / "notebooks" / "eval_report.ipynb"))
    keywords = set(inspect.signature(run_eval).parameters)
    return keywords | set(RunConfig.model_fields) | set(StoreOptions.model_fields)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_option_is_in_every_spelling_or_says_why_not(spelling: str) -> None:
    offered = spelling_names(spelling)
    for field, option in options().items():
        name = option.name(field, spelling)
        if isinstance(name, NotThere):
            assert len(name.reason) > 20, (field, spelling)
            continue
        missing = set(_names(spelling, field)) - offered
        assert not missing, f"{field}: {spelling} has no {missing}"


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_name_of_a_spelling_is_a_request_option_or_says_why_not(spelling: str) -> None:
    declared = {name for field in options() for name in _names(spelling, field)}
    others = set(RECORDING_FLAGS) if spelling == "cli" else set(NOT_RUN_OPTIONS[spelling])
    assert spelling_names(spelling) - declared - others == set()


def test_every_field_has_a_flag_and_help() -> None:
    for field, option in options().items():
        assert isinstance(option.name(field, "cli"), str), field
        assert option.help, field


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"pack": "deletion-ghosts", "datasets": "x"}, "--pack and --datasets both choose the suite"),
        ({"cache": "c.sqlite3"}, "--cache needs a real embedder (--embedder real or real:MODEL)"),
        ({"embedder": "deterministic:x"}, "--embedder: unknown embedder 'deterministic:x'"),
        ({"executor": "threads"}, "--executor: unknown executor 'threads'"),
        ({"gated_pass": "on"}, "--gated-pass: expected `off` or a gate from 0 to 1 (e.g. 0.4), got 'on'"),
        ({"top_k": "0"}, "--top-k: expected an integer from 1 to 1000, got '0'"),
        ({"perturb": ["distractors=1", "distractors=0,5"]}, "a curve (several values) starts from"),
        ({"mutants": "yes"}, "--mutants: "),
    ],
)
def test_options_that_do_not_combine_are_refused_in_the_words_of_the_spelling(values, message) -> None:
    with pytest.raises(UsageError) as raised:
        RunRequest.checked(values, "cli")
    assert message in str(raised.value)


def test_one_option_per_meaning_reads_back_into_the_harness_settings() -> None:
    request = RunRequest.checked(
        {"embedder": "real:intfloat/e5-small", "cache": "none", "gated_pass": "0.3", "executor": "ray:auto"},
        "cli",
    )
    config = request.config()
    assert (config.mode, config.model, config.use_cache) == ("real", "intfloat/e5-small", False)
    assert (config.gated, config.min_relevance) == (True, 0.3)
    assert (request.executor_kind, request.ray_address) == ("ray", "auto")
    assert RunRequest(gated_pass="off").config().gated is False
    assert RunRequest(executor="ray://head:10001").ray_address == "ray://head:10001"
    assert RunRequest(perturb=("distractors=0,10",)).curve is not None


def test_a_request_spelled_as_arguments_reads_back_as_the_same_request() -> None:
    request = RunRequest(
        top_k=3, gated_pass=0.25, scenarios=("temporal", "multi-hop"), history="none", require_baseline=False
    )
    assert request.argv() == [
        "--scenario", "temporal", "--scenario", "multi-hop", "--top-k", "3", "--gated-pass", "0.25",
        "--no-require-baseline", "--history", "none",
    ]  # fmt: skip
    parsed = build_parser().parse_args(["run", *request.argv()])
    from evalkit.cli.args import request_values

    assert RunRequest.checked(request_values(parsed), "cli") == request


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["run", "--top-kk", "3"], "--top-kk: did you mean --top-k?"),
        (["run", "--embeder", "real"], "--embeder: did you mean --embedder?"),
        (["mutants", "--wrokers", "2"], "--wrokers: did you mean --workers?"),
    ],
)
def test_an_unknown_flag_shows_the_subcommand_usage_and_a_did_you_mean(capsys, argv, hint) -> None:
    with pytest.raises(SystemExit) as raised:
        main(argv)
    err = capsys.readouterr().err
    assert raised.value.code == 2
    assert err.startswith(f"usage: evalkit {argv[0]} ") and hint in err


def test_a_module_dot_class_system_is_answered_with_module_colon_class(capsys, tmp_path) -> None:
    spec = "tests.systems_fixtures.LimitedSystem"
    code = main(["run", "--system", spec, "--out", str(tmp_path / "r.json")])
    assert code == 2
    assert "did you mean 'tests.systems_fixtures:LimitedSystem'?" in capsys.readouterr().err


SCENARIOS = ("temporal", "multi-hop", "supersession", "explicit-fact")


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    top_k=st.integers(min_value=1, max_value=8),
    gate=st.sampled_from([None, "off", 0.2, 0.6]),
    scenarios=st.lists(st.sampled_from(SCENARIOS), unique=True, max_size=2),
    thresholds=st.sampled_from([None, "none"]),
)
def test_the_same_request_gives_the_same_verdict_from_python_and_the_command_line(
    tmp_path_factory, capsys, top_k, gate, scenarios, thresholds
) -> None:
    out = tmp_path_factory.mktemp("cli") / "report.json"
    request = RunRequest(
        datasets=DATASETS,
        top_k=top_k,
        gated_pass=gate,
        scenarios=tuple(scenarios),
        thresholds=thresholds,
        out=out,
        history="none",
    )
    expected = run_request(request).result
    code = main(["run", *request.argv()])
    capsys.readouterr()
    saved = json.loads(Path(out).read_text())
    assert code == (0 if expected.outcome.value != "FAIL" else 1)
    assert saved["verdict"]["value"] == expected.outcome.value
    assert saved["overall"]["metrics"] == json.loads(json.dumps(expected.overall.metrics))


def test_a_run_records_its_request_and_prints_how_to_reproduce_it(capsys, tmp_path) -> None:
    out = tmp_path / "r.json"
    argv = ["--scenario", "temporal", "--top-k", "3", "--gated-pass", "0.3", "--history", "none"]
    assert main(["run", *argv, "--out", str(out)]) == 0
    from evalkit.views.frames import load_run
    from evalkit.views.verdict import run_verdict

    saved = json.loads(out.read_text())
    assert saved["provenance"]["request"]["gated_pass"] == 0.3
    verdict = run_verdict(load_run(out))
    assert verdict.command == "evalkit run --scenario temporal --top-k 3 --gated-pass 0.3"  # outputs left out
    assert verdict.papermill is None  # the notebook shows the whole suite
    assert f"Reproduce: {verdict.command}" in str(verdict)


def test_a_request_the_notebook_can_make_gets_a_papermill_line_with_the_same_verdict(tmp_path) -> None:
    import shlex

    import papermill

    from evalkit.views.verdict import run_verdict

    request = RunRequest(top_k=4, gated_pass="off", history="none")
    verdict = run_verdict(run_request(request))
    line = shlex.split(verdict.papermill or "")
    assert line[:2] == ["papermill", "notebooks/eval_report.ipynb"]
    given = dict(zip(line[4::3], line[5::3], strict=True))
    assert given == {
        "embedder": "deterministic", "system": "reference", "top_k": "4", "gated_pass": "off",
        "datasets": "None", "thresholds": "None", "require_baseline": "None", "mutants": "None",
            "perturb": "None",
    }  # fmt: skip
    values = {name: None if text == "None" else text for name, text in given.items()}
    papermill.execute_notebook(
        str(ROOT / line[1]),
        str(tmp_path / "out.ipynb"),
        parameters={**values, "top_k": 4, "out": str(tmp_path / "nb.json")},
        cwd=str(tmp_path),
        progress_bar=False,
        kernel_name="python3",
    )
    saved = json.loads((tmp_path / "nb.json").read_text())
    assert saved["verdict"]["value"] == verdict.value
    assert saved["provenance"]["request"]["top_k"] == 4
