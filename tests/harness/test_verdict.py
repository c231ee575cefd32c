"""harness.verdict and the baselines that belong to a system and a suite: PASS only with
evidence (metrics compared with this system's baseline on this suite), NOT COMPARED without it,
FAIL on a regression; degenerate retrieval named; `--thresholds none`; old reports and old
thresholds entries."""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from pathlib import Path

import pytest

from evalkit import MemorySystem, ScenarioMemory, SearchResponse, run_eval
from evalkit.harness.report_file import load_report, save_report
from evalkit.harness.results import RunResult, degenerate_regressions
from evalkit.harness.thresholds_file import load_thresholds
from evalkit.harness.verdict import degenerate_findings, judge
from tests.factories import a_pass, a_run, query, scenario
from tests.shared import DATASETS, cli, cli_record

SUITE = {
    "facts.yaml": """\
name: facts
category: explicit-fact
distractors: false
thoughts:
  - {id: port, content: "The API gateway listens on port 8443"}
  - {id: db, content: "The orders database is PostgreSQL 16"}
  - {id: deploy, content: "Deploys run every Tuesday at noon"}
  - {id: owner, content: "Team Falcon owns the billing service"}
  - {id: cache, content: "The session cache is Redis with a one hour TTL"}
  - {id: logs, content: "Logs are kept for thirty days in the archive bucket"}
  - {id: oncall, content: "The on-call rotation changes every Monday"}
queries:
  - {query: "Which port does the API gateway listen on?", relevant: [port]}
  - {query: "What database stores the orders?", relevant: [db]}
""",
    "owners.yaml": """\
name: owners
category: multi-hop
distractors: false
thoughts:
  - {id: falcon, content: "Team Falcon owns the billing service"}
  - {id: billing, content: "The billing service stores invoices in PostgreSQL"}
  - {id: lunch, content: "Lunch is served at noon in the cafeteria"}
  - {id: bikes, content: "Bike racks are behind building two"}
  - {id: wifi, content: "The guest wifi password rotates monthly"}
  - {id: parking, content: "Parking permits renew in January"}
queries:
  - {query: "Which team owns the billing service and where are invoices stored?", relevant: [falcon, billing]}
""",
}


def _suite(root: Path) -> Path:
    (root / "scenarios").mkdir(parents=True)
    for name, text in SUITE.items():
        (root / "scenarios" / name).write_text(text, encoding="utf-8")
    return root


class NoHitSystem(MemorySystem, ScenarioMemory):
    """A system whose search never returns anything."""

    name = "no-hits"
    capabilities = frozenset()

    def describe(self):
        return {"system": self.name}

    @contextmanager
    def open(self, context):
        yield self

    def add_thoughts(self, thoughts):
        pass

    def add_edges(self, edges):
        pass

    def search(self, query, options):
        return SearchResponse(hits=())


def no_hit_system() -> NoHitSystem:
    return NoHitSystem()


def _verdict(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["verdict"]


# ------------------------------------------------------------------ verdict and degenerate retrieval


def test_a_pass_without_regressions_is_pass_only_when_metrics_were_compared() -> None:
    assert judge([], None, []).value == "PASS"
    not_compared = judge([], "no baseline for deterministic at top_k 5 in t.json", [])
    assert not_compared.value == "NOT COMPARED"
    assert not_compared.reasons == [
        "metrics were not compared with a baseline: no baseline for deterministic at top_k 5 in t.json",
        "assertions held",
    ]


def test_degenerate_retrieval_is_named_per_query_per_scenario_and_for_the_whole_run() -> None:
    same = [query(0), query(1)]  # the factory's queries all retrieve ["r", "x"]
    missed = query(0).model_copy(update={"retrieved": ["x"], "relevant": ["r"]})
    found = degenerate_findings(a_pass(scenario("same", "c", same), scenario("miss", "c", [missed])))
    assert [(d.kind, d.scenario, d.query_number) for d in found] == [
        ("same-ranking", "same", None),
        ("no-relevant-hit", "miss", 1),  # numbered from 1, as in its message
    ]
    assert found[0].message == "same: all 2 queries got the same ranking: [r, x]"
    nothing = query(0).model_copy(update={"retrieved": []})
    measured = a_pass(scenario("a", "c", [nothing]), scenario("b", "c", [missed]))
    zero = degenerate_findings(measured)
    assert [d.kind for d in zero] == ["recall-zero", "no-relevant-hit", "no-relevant-hit"]
    assert judge(degenerate_regressions(measured), None, zero).value == "FAIL"  # never PASS


def test_recall_zero_counts_only_scenarios_expected_to_pass() -> None:
    nothing = query(0).model_copy(update={"retrieved": []})
    found = query(0)  # retrieves its relevant id
    # an xfail scenario that misses does not make recall 0 "everywhere" when one expected to pass finds
    measured = a_pass(scenario("ok", "c", [found]), scenario("known", "c", [nothing], outcome="xfail"))
    mixed = degenerate_findings(measured)
    assert [d.kind for d in mixed] == ["no-relevant-hit"]
    assert degenerate_regressions(measured) == []
    assert judge([], None, mixed).value == "PASS"
    # nor does an xfail scenario's hit hide that every scenario expected to pass found nothing
    measured = a_pass(scenario("bad", "c", [nothing]), scenario("lucky", "c", [found], outcome="xfail"))
    hidden = degenerate_findings(measured)
    assert [d.kind for d in hidden] == ["recall-zero", "no-relevant-hit"]
    assert hidden[0].message == (
        "recall is 0 everywhere: none of the 1 queries with relevant ids in scenarios expected to pass "
        "retrieved any of them"
    )
    assert judge(degenerate_regressions(measured), None, hidden).value == "FAIL"


def test_a_run_of_xfail_scenarios_only_with_recall_0_gets_a_note_not_a_failure() -> None:
    nothing = query(0).model_copy(update={"retrieved": []})
    found = degenerate_findings(
        a_pass(
            scenario("a", "c", [nothing], outcome="xfail"),
            scenario("b", "c", [nothing, nothing], outcome="xfail"),
        )
    )
    assert [d.kind for d in found] == [
        "recall-zero-xfail",
        "no-relevant-hit",
        "same-ranking",
        "no-relevant-hit",
        "no-relevant-hit",
    ]
    note = (
        "recall is 0 on every query with relevant ids (3 queries), all in xfail scenarios: expected, so not "
        "a failure; a scenario expected to pass would tell a system that finds nothing from one that fails "
        "only these"
    )
    assert found[0].message == note
    verdict = judge([], None, found)
    assert verdict.value == "PASS" and verdict.reasons[-1] == note
    assert judge([], "no baseline here", found).reasons == [
        "metrics were not compared with a baseline: no baseline here",
        "assertions held",
        note,
    ]
    # an xfail scenario that found its answer (xpass): nothing to note
    assert [
        d.kind for d in degenerate_findings(a_pass(scenario("a", "c", [query(0)], outcome="xfail")))
    ] == []


def test_an_all_xfail_suite_that_finds_nothing_runs_green_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    suite = _suite(tmp_path / "suite")
    for path in (suite / "scenarios").iterdir():
        path.write_text(
            path.read_text(encoding="utf-8").replace("\ndistractors:", "\noutcome: xfail\ndistractors:"),
            encoding="utf-8",
        )
    out = tmp_path / "r.json"
    common = [
        "run",
        "--datasets",
        str(suite),
        "--history",
        "none",
        "--out",
        str(out),
        "--system",
        "test_verdict:no_hit_system",
    ]
    code, stdout, _ = cli(capsys, *common, "--thresholds", "none")
    assert code == 0, stdout
    verdict = _verdict(out)
    assert verdict["value"] == "NOT COMPARED"
    assert verdict["degenerate"][0]["kind"] == "recall-zero-xfail"
    assert "all in xfail scenarios: expected, so not a failure" in stdout
    assert "[degenerate]" not in stdout  # no regression of that kind


def test_an_old_report_without_a_verdict_gets_one_when_read(tmp_path: Path) -> None:
    run = a_run(a_pass(scenario("a", "c", [query(0)])), notes=["baseline check OFF: no baseline here"])
    data = json.loads(save_report(run, tmp_path / "new.json").read_text(encoding="utf-8"))
    assert data["verdict"]["value"] == "NOT COMPARED"
    del data["verdict"]
    (tmp_path / "old.json").write_text(json.dumps(data), encoding="utf-8")
    old = load_report(tmp_path / "old.json")
    assert old.verdict is not None and old.verdict == run.verdict
    stored = dict(data, verdict={"value": "FAIL", "reasons": ["as recorded"], "degenerate": []})
    assert RunResult.model_validate(stored).outcome.reasons == ["as recorded"]  # a stored verdict is kept


# ------------------------------------------------------------------ baselines of a system and a suite


def test_a_foreign_system_on_the_reference_baseline_is_not_compared_and_names_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    suite = _suite(tmp_path / "suite")
    out = tmp_path / "r.json"
    common = ["run", "--datasets", str(suite), "--history", "none", "--out", str(out)]
    assert cli_record(capsys, *common)[0] == 0  # the reference store's baseline
    spec = "test_verdict:no_hit_system"
    code, stdout, _ = cli(capsys, *common, "--system", spec)
    assert code == 1  # recall 0 everywhere: degenerate, FAIL
    verdict = _verdict(out)
    assert verdict["value"] == "FAIL"
    assert "was recorded for system reference; this run evaluated no-hits" in stdout
    assert "[degenerate] recall is 0 everywhere" in stdout
    assert [d["kind"] for d in verdict["degenerate"]][:1] == ["recall-zero"]
    # its own baseline does not make it PASS either
    assert cli_record(capsys, *common, "--system", spec, "--thresholds", str(tmp_path / "own.json"))[0] == 0
    assert cli(capsys, *common, "--system", spec, "--thresholds", str(tmp_path / "own.json"))[0] == 1
    assert _verdict(out)["value"] == "FAIL"


def test_a_system_is_not_compared_on_another_systems_baseline_until_it_records_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(tmp_path / "suite")
    out = tmp_path / "r.json"
    common = ["run", "--datasets", str(suite), "--history", "none", "--out", str(out), "--gated-pass", "off"]
    assert cli_record(capsys, *common)[0] == 0
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1]))
    other = ["--system", "systems_fixtures:limited_system"]
    code, stdout, _ = cli(capsys, *common, *other)
    assert code == 0
    where = f"the baseline for deterministic at top_k 5 in {suite / 'thresholds.json'}"
    assert f"{where} was recorded for system reference; this run evaluated limited" in stdout
    assert "Verdict: NOT COMPARED" in stdout and "No gating regressions." not in stdout
    assert _verdict(out)["value"] == "NOT COMPARED"
    code, stdout, _ = cli(capsys, *common, *other, "--require-baseline")
    assert code == 1 and "[baseline] a baseline is required" in stdout
    own = tmp_path / "limited.json"
    code, stdout, _ = cli_record(capsys, *common, *other, "--thresholds", str(own))
    assert code == 0 and "for system limited, from" in stdout and "(other entries kept)" in stdout
    entry = load_thresholds(own)["deterministic@5"]  # type: ignore[index]
    assert entry.system is not None and entry.system.name == "limited"
    assert entry.system.spec == "systems_fixtures:limited_system"
    assert entry.suite is not None and sorted(entry.suite.files) == [
        "scenarios/facts.yaml",
        "scenarios/owners.yaml",
    ]
    code, stdout, _ = cli(capsys, *common, *other, "--thresholds", str(own), "--require-baseline")
    assert code == 0 and "Verdict: PASS" in stdout and _verdict(out)["value"] == "PASS"
    # recording another system's baseline over it is refused, naming whose it is, unless --replace
    code, _, err = cli_record(capsys, *common, "--thresholds", str(own))
    assert (
        code == 2
        and f"already holds the baseline for deterministic at top_k 5 of system limited on suite {suite}"
        in err
    )
    assert "--replace" in err and load_thresholds(own)["deterministic@5"].system_name == "limited"  # type: ignore[index]
    code, stdout, _ = cli_record(capsys, *common, "--thresholds", str(own), record=("--replace",))
    assert code == 0 and "it replaces the baseline system limited had there" in stdout


def test_a_changed_suite_is_not_compared_and_the_changed_files_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(tmp_path / "suite")
    out = tmp_path / "r.json"
    common = ["run", "--datasets", str(suite), "--history", "none", "--out", str(out), "--gated-pass", "off"]
    assert cli_record(capsys, *common)[0] == 0
    assert cli(capsys, *common)[1].count("Verdict: PASS") == 1
    facts = suite / "scenarios" / "facts.yaml"
    facts.write_text(facts.read_text(encoding="utf-8").replace("noon", "one"), encoding="utf-8")
    (suite / "scenarios" / "extra.yaml").write_text(
        SUITE["owners.yaml"].replace("name: owners", "name: extra"),
        encoding="utf-8",
    )
    code, stdout, _ = cli(capsys, *common, "--require-baseline")
    assert code == 1
    assert (
        f"the baseline for deterministic at top_k 5 in {suite / 'thresholds.json'} was recorded on suite "
        f"{suite}, and this run's suite differs (2 files: scenarios/extra.yaml added, scenarios/facts.yaml "
        "changed): record this run's baseline into a thresholds file of its own (`evalkit baseline record "
        "--thresholds PATH`), or, if that entry is this suite's own older baseline, in its place "
        "(`evalkit baseline record --replace`)" in stdout
    )
    assert cli_record(capsys, *common)[0] == 2  # not without --replace
    assert cli_record(capsys, *common, record=("--replace",))[0] == 0


def test_an_entry_without_a_system_is_the_reference_stores(tmp_path: Path) -> None:
    """Baselines recorded before systems were named in entries (the built-in ones as they were
    until re-recorded with their identity): the reference store is compared with them (and a
    change to the suite cannot be seen: they hold no fingerprint)."""
    older = json.loads((DATASETS / "thresholds.json").read_text(encoding="utf-8"))
    for entry in older.values():
        entry.pop("system"), entry.pop("suite")
    path = tmp_path / "thresholds.json"
    path.write_text(json.dumps(older), encoding="utf-8")
    entry = load_thresholds(path)["deterministic@5"]  # type: ignore[index]
    assert entry.system is None and entry.system_name == "reference" and entry.suite is None
    run = run_eval(datasets=DATASETS, thresholds=path, gated=False)
    assert run.result.outcome.value == "PASS" and run.result.baseline_check_off is None


def test_thresholds_none_is_an_explicit_no_baselines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(tmp_path / "suite")
    out = tmp_path / "r.json"
    common = ["run", "--datasets", str(suite), "--history", "none", "--out", str(out), "--gated-pass", "off"]
    assert cli_record(capsys, *common)[0] == 0
    code, stdout, _ = cli(capsys, *common, "--thresholds", "none")
    assert code == 0 and "Verdict: NOT COMPARED" in stdout
    assert "no baselines (no thresholds file)" in stdout and "No gating regressions." not in stdout
    assert _verdict(out)["value"] == "NOT COMPARED"
    assert cli(capsys, *common, "--thresholds", "none", "--require-baseline")[0] == 1
    code, _, err = cli_record(capsys, *common, "--thresholds", "none")
    assert code == 2 and "configured without a thresholds file" in err and "--thresholds PATH" in err
    (tmp_path / "evalkit.toml").write_text('thresholds = "none"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, stdout, _ = cli(capsys, *common)
    assert code == 0 and "Verdict: NOT COMPARED" in stdout  # the project file can say it too
    assert re.search(r"^thresholds +none +\(.*evalkit\.toml\)$", cli(capsys, "config")[1], re.M)


# ------------------------------------------------------------------ suite strength


def test_suite_strength_counts_the_real_mutations_and_names_a_false_alarm_of_the_control() -> None:
    from evalkit.harness.results import DetectionPower, MutationOutcome, Regression
    from evalkit.harness.verdict import suite_strength

    hit = Regression(kind="metric", message="overall: recall 0.1 is below its threshold 0.9")
    detection = DetectionPower(
        outcomes=[
            MutationOutcome(mutation="a", description="d", control=False, regressions=[hit], hint="ha"),
            MutationOutcome(mutation="b", description="d", control=False, regressions=[], hint="hb"),
            MutationOutcome(mutation="c", description="d", control=False, regressions=[], hint=""),
            MutationOutcome(mutation="noop", description="d", control=True, regressions=[hit], hint="ties"),
        ],
        checked_against=None,
    )
    strength = suite_strength(detection)
    assert (strength.caught, strength.injected) == (1, 3)
    assert strength.line == (
        "suite strength: caught 1 of 3 injected bugs; the no-op control noop raised a false alarm"
    )
    assert strength.hints() == ["b escaped: hb", "c escaped", "noop raised a false alarm: ties"]
    assert [r.message for r in detection.regressions()] == [
        "suite strength: mutation b escaped, no regression caught it (d)",
        "suite strength: mutation c escaped, no regression caught it (d)",
        "suite strength: the no-op control noop was caught, a false alarm "
        "(overall: recall 0.1 is below its threshold 0.9)",
    ]
    verdict = judge([], None, [], strength)
    assert verdict.value == "PASS" and verdict.reasons[-1] == strength.line
    assert "strength" in verdict.model_dump() and "strength" not in judge([], None, []).model_dump()
