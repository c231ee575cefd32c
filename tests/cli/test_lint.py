"""`evalkit lint` and the suite strength of `evalkit run --mutants`: exit codes, what they print,
what the report saves (the verdict's suite strength, each escaped mutation's hint)."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit import run_eval
from evalkit.harness.report_file import load_report, report_from_data
from evalkit.views.frames import EvalRun, load_run
from evalkit.views.verdict import run_verdict
from tests.scenarios.test_lint import OLD_INIT_EXAMPLE
from tests.shared import DATASETS, cli


def _weak_suite(root: Path) -> Path:
    """The newcomer's suite of the issue: the old `evalkit init` example, no baseline."""
    (root / "scenarios").mkdir(parents=True)
    (root / "suite.yaml").write_text("categories: [facts]\n")
    (root / "scenarios" / "deploy-facts.yaml").write_text(OLD_INIT_EXAMPLE)
    (root / "thresholds.json").write_text("{}")
    return root


def test_lint_prints_each_finding_and_exits_0_or_1_under_strict(tmp_path, capsys):
    suite = _weak_suite(tmp_path / "weak")
    code, out, _ = cli(capsys, "lint", str(suite))
    assert code == 0
    first, last = out.splitlines()
    assert first.startswith(
        f"{suite / 'scenarios' / 'deploy-facts.yaml'}: scenario 'deploy-facts' query 2: "
        "[forbid-out-of-reach] forbidden id 'db-old' is superseded"
    )
    assert last == f"1 lint finding (1 forbid-out-of-reach) in {suite} (1 scenario, top_k 5): warnings"
    code, out, _ = cli(capsys, "lint", str(suite), "--strict")
    assert code == 1 and out.endswith("an error under --strict\n")
    code, out, _ = cli(capsys, "lint", str(suite), "--top-k", "6", "--strict")
    assert code == 1 and "[small-corpus]" in out and "[forbid-out-of-reach]" not in out


def test_lint_lists_acknowledged_findings_and_notes_an_unused_acknowledgement(tmp_path, capsys):
    suite = _weak_suite(tmp_path / "weak")
    scenario = suite / "scenarios" / "deploy-facts.yaml"
    allow = "lint: {allow: [forbid-out-of-reach, duplicate-content], reason: the newcomer's example}\n"
    scenario.write_text(scenario.read_text().replace("distractors: false\n", "distractors: false\n" + allow))
    code, out, _ = cli(capsys, "lint", str(suite), "--strict")
    assert code == 0
    where = f"{scenario}: scenario 'deploy-facts'"
    assert out.splitlines() == [
        f"{where} query 2: [forbid-out-of-reach] acknowledged: the newcomer's example",
        f"{where}: note: lint.allow lists duplicate-content, which has no finding here at top_k 5; drop it "
        "unless another top_k needs it",
        f"No lint findings in {suite} (1 scenario, top_k 5); 1 acknowledged (1 forbid-out-of-reach).",
    ]
    code, _, err = cli(
        capsys, "run", "--datasets", str(suite), "--out", str(tmp_path / "r.json"), "--history", "none"
    )
    assert code == 0 and err == ""  # nothing to warn about on load


def test_lint_of_a_clean_suite_and_of_a_malformed_one(tmp_path, capsys):
    from evalkit.scaffold import init_project

    init_project(tmp_path / "new", None)
    code, out, _ = cli(capsys, "lint", str(tmp_path / "new"), "--strict")
    assert (code, out) == (0, f"No lint findings in {tmp_path / 'new'} (1 scenario, top_k 5).\n")
    bad = tmp_path / "bad"
    (bad / "scenarios").mkdir(parents=True)
    (bad / "scenarios" / "x.yaml").write_text("name: x\ncategory: nope\nthoughts: []\nqueries: []\n")
    code, out, err = cli(capsys, "lint", str(bad))
    assert code == 2 and out == ""
    assert "problem" in err and "x.yaml: scenario 'x': queries: " in err


def test_run_warns_about_lint_findings_in_one_line(tmp_path, capsys):
    suite = _weak_suite(tmp_path / "weak")
    code, _, err = cli(
        capsys, "run", "--datasets", str(suite), "--out", str(tmp_path / "r.json"), "--history", "none"
    )
    assert code == 0
    assert err == _warning(suite)


def _warning(suite: Path) -> str:
    """The one line `run`, `mutants`, `report` and `score --suite` print for the weak suite."""
    return (
        "evalkit: warning: 1 lint finding (1 forbid-out-of-reach) in the suite: queries a broken search can "
        f"still pass; `evalkit lint {suite}` lists each with its fix\n"
    )


def test_score_suite_prints_the_same_lint_warning_as_run(tmp_path, capsys):
    suite = _weak_suite(tmp_path / "weak")
    ranking = tmp_path / "run.jsonl"
    ranking.write_text(
        '{"query_id": "deploy-facts#1", "results": ["region"]}\n'
        '{"query_id": "deploy-facts#2", "results": ["db-new"]}\n'
    )
    argv = ("score", "--run", str(ranking), "--suite", "builtin", "--datasets", str(suite))
    code, _, err = cli(capsys, *argv, "--out", str(tmp_path / "s.json"))
    assert code == 0 and err == _warning(suite)


def _tiny_notebook(path: Path, parameters: str) -> Path:
    """A notebook of one parameters cell and one cell that does nothing: it runs in a second."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    nb.cells = [
        nbformat.v4.new_code_cell(parameters, metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("pass"),
    ]
    nbformat.write(nb, path)
    return path


def test_report_prints_the_lint_warning_of_the_suite_its_notebook_runs(tmp_path, capsys):
    suite = _weak_suite(tmp_path / "weak")
    parameters = (
        'datasets: "Optional[str]" = None  # the suite\n'
        "top_k: int = 5  # results per query\n"
        'report_json: "Optional[str]" = None  # a saved report to show instead\n'
    )
    notebook = _tiny_notebook(tmp_path / "tiny.ipynb", parameters)
    argv = ("report", "--notebook", str(notebook), "--out-dir", str(tmp_path / "out"), "--no-progress")
    code, _, err = cli(capsys, *argv, "-p", "datasets", str(suite))
    assert code == 0 and err == _warning(suite)
    # at top_k 6 the superseded row would rank inside: the finding is another one
    code, _, err = cli(capsys, *argv, "-p", "datasets", str(suite), "-p", "top_k", "6")
    assert code == 0 and "1 lint finding (1 small-corpus)" in err
    # a saved report is shown, nothing is run: nothing to lint
    run_eval(datasets=suite, thresholds=None, gated=False).save(tmp_path / "r.json")
    code, _, err = cli(
        capsys, *argv, "-p", "datasets", str(suite), "-p", "report_json", str(tmp_path / "r.json")
    )
    assert code == 0 and err == ""
    # a notebook without a suite (no `datasets`): nothing to lint
    plain = _tiny_notebook(tmp_path / "plain.ipynb", "top_k: int = 5  # results per query\n")
    code, _, err = cli(
        capsys, "report", "--notebook", str(plain), "--out-dir", str(tmp_path / "o2"), "--no-progress"
    )
    assert code == 0 and err == ""


def test_run_mutants_saves_the_suite_strength_and_the_hints_in_the_report(tmp_path, capsys):
    suite = _weak_suite(tmp_path / "weak")
    out = tmp_path / "r.json"
    args = ("run", "--datasets", str(suite), "--out", str(out), "--history", "none", "--gated-pass", "off")
    code, stdout, _ = cli(capsys, *args, "--mutants", "report")
    assert code == 0
    report = json.loads(out.read_text())
    strength = report["verdict"]["strength"]
    assert strength["injected"] == 15 and strength["caught"] < 15
    escaped = {e["mutation"]: e["hint"] for e in strength["escaped"]}
    assert escaped["supersession-not-suppressed"].startswith("superseded rows are kept and rank last")
    line = f"suite strength: caught {strength['caught']} of 15 injected bugs"
    assert report["verdict"]["reasons"][-1] == line
    assert "Verdict: NOT COMPARED — " in stdout and stdout.count(line) == 1
    assert "  - supersession-not-suppressed escaped: superseded rows are kept and rank last" in stdout
    assert report["detection"]["outcomes"][0]["hint"] == escaped["supersession-not-suppressed"]
    verdict = run_verdict(load_run(out))
    assert verdict.strength == line
    assert any(e.startswith("supersession-not-suppressed escaped: ") for e in verdict.escaped)
    assert line in str(verdict) and "Escaped mutations" in verdict._repr_html_()
    code, summary, _ = cli(capsys, "summary", str(out))
    assert code == 0 and f"Suite strength: caught {strength['caught']} of 15 injected bugs." in summary
    assert "- supersession-not-suppressed escaped: superseded rows are kept" in summary


def test_fail_on_escaped_fails_the_run_with_one_regression_per_escaped_mutation(tmp_path, capsys):
    suite = _weak_suite(tmp_path / "weak")
    out = tmp_path / "r.json"
    code, stdout, _ = cli(
        capsys, "run", "--datasets", str(suite), "--out", str(out), "--history", "none", "--mutants", "fail"
    )
    assert code == 1
    result = load_report(out)
    assert result.detection is not None and result.outcome.value == "FAIL"
    mutation = [r for r in result.regressions if r.kind == "mutation"]
    assert len(mutation) == len(result.detection.escaped) > 0
    assert mutation[0].message.startswith(
        "suite strength: mutation supersession-not-suppressed escaped, no regression caught it"
    )
    assert "[mutation] suite strength: mutation supersession-not-suppressed escaped" in stdout


def test_the_built_in_suite_catches_every_mutation_and_an_old_report_still_reads(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, stdout, err = cli(
        capsys,
        "run",
        "--datasets",
        str(DATASETS),
        "--out",
        str(out),
        "--history",
        "none",
        "--mutants",
        "fail",
    )
    assert code == 0, stdout
    assert (
        "Suite strength: caught 15 of 15 injected bugs (mutants checked against the deterministic " in stdout
    )
    assert "evalkit: warning: 5 lint findings" in err  # the explained ones (README, "Linting a suite")
    data = {**json.loads(out.read_text()), "schema_version": 2}
    del data["verdict"]["strength"], data["detection"]["checked_against"]
    for outcome in data["detection"]["outcomes"]:
        del outcome["hint"]
    old = report_from_data(data)  # a report written before suite strength was saved: migrated
    assert old.strength is not None and old.strength.line == "suite strength: caught 15 of 15 injected bugs"
    assert run_verdict(EvalRun(old)).strength == old.strength.line  # the verdict block still shows it
    judged = old.judged().strength
    assert judged is not None and (judged.caught, judged.escaped) == (15, [])


def test_mutants_are_refused_for_a_system_that_does_not_declare_mutation_testing(tmp_path, capsys):
    code, _, err = cli(
        capsys,
        "run",
        "--out",
        str(tmp_path / "r.json"),
        "--mutants",
        "report",
        "--system",
        "tests.systems_fixtures:limited_system",
    )
    assert code == 2 and "mutation testing applies to a system whose declaration says mutation_testing" in err


def test_a_scenario_from_a_trace_and_an_import_without_content_pass_the_lint(tmp_path, capsys):
    """Issue 26's from-trace scenario passes the loader and the lint; an import without
    --with-content (blank contents) is not flagged for duplicates, only its shared record id."""
    from tests.shared import FIXTURES

    traces = str(FIXTURES / "traces" / "genai_memory.jsonl")
    trace = "5b8efff798038103d269b633813fc60e"
    argv = ("scenario", "from-trace", "--with-content", "--traces", traces, "--out", str(tmp_path / "ft"))
    assert cli(capsys, *argv, trace)[0] == 0
    assert cli(capsys, "lint", str(tmp_path / "ft"), "--strict")[0] == 0
    assert cli(capsys, "import", "traces", traces, "--out", str(tmp_path / "imp"))[0] == 0
    code, out, _ = cli(capsys, "lint", str(tmp_path / "imp"))
    assert code == 0 and "[duplicate-content]" not in out
    assert out.splitlines()[-1].startswith("1 lint finding (1 id-collision)")


def test_the_warning_names_a_suite_below_the_working_directory_relative_to_it(tmp_path, capsys, monkeypatch):
    suite = _weak_suite(tmp_path / "weak")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "run", "--datasets", str(suite), "--out", "r.json", "--history", "none")
    assert code == 0
    assert err == _warning(Path("weak")) and str(tmp_path) not in err
