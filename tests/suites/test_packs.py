"""The built-in scenario packs: each loads as a suite, runs on the reference store with the
statuses its files declare, and catches the mutation written for it; `--pack` selects them."""

from __future__ import annotations

import pytest

from evalkit import run_eval
from evalkit.errors import UsageError
from evalkit.harness.config import RunConfig
from evalkit.harness.executors import SerialExecutor
from evalkit.scenarios import load_suite
from evalkit.suites.mutations import MUTATIONS, PACK_MUTATIONS, run_mutants, select_mutations
from evalkit.suites.packs import PACKS, pack_directory, pack_names, pack_summary, parse_packs, write_combined
from tests.shared import DATASETS, cli

STARTER_PACKS = ["deletion-ghosts", "filter-selectivity", "update-propagation"]
ALL_PACKS = [
    "cjk", "deletion-ghosts", "event-time", "filter-selectivity", "isolation-canaries", "library-quirks",
    "long-notes", "near-duplicates", "near-identical-identifiers", "nonsense-control", "update-propagation",
]  # fmt: skip


def test_the_packs_ship_with_the_datasets_and_each_says_what_it_tests():
    assert PACKS == DATASETS / "packs"
    assert pack_names() == ALL_PACKS
    assert sum(len(load_suite(PACKS / name).scenarios) for name in ALL_PACKS) >= 40
    for name in pack_names():
        summary = pack_summary(name)
        assert summary and "User report" in summary, name  # names the user reports behind it


@pytest.mark.parametrize("name", ALL_PACKS)
def test_each_pack_runs_on_the_reference_store_with_its_declared_statuses(name):
    run = run_eval(datasets=PACKS / name)
    statuses = {s.name: s.status for s in run.result.scenarios}
    declared = {s.name: s.outcome for s in load_suite(PACKS / name).scenarios}
    assert statuses == declared  # pass where it says pass, xfail where it says xfail
    assert run.result.outcome.value == "PASS"  # against the baseline shipped beside it


@pytest.mark.parametrize("mutation", list(PACK_MUTATIONS))
def test_each_operation_mutation_is_caught_by_its_pack_and_escapes_the_builtin_suite(mutation):
    pack = PACK_MUTATIONS[mutation].pack
    assert pack is not None
    on_pack = run_mutants(
        load_suite(PACKS / pack), RunConfig(thresholds=PACKS / pack / "thresholds.json"), [mutation],
        executor=SerialExecutor(),
    )  # fmt: skip
    on_builtin = run_mutants(
        load_suite(DATASETS), RunConfig(thresholds=DATASETS / "thresholds.json"), [mutation],
        executor=SerialExecutor(),
    )  # fmt: skip
    assert on_pack.outcomes[0].caught
    assert any(r.scenario for r in on_pack.outcomes[0].regressions)  # an assertion, not only a metric
    assert not on_builtin.outcomes[0].caught


def test_the_trigram_tokenizer_finds_the_cjk_scenarios_the_default_one_cannot():
    config = RunConfig(store={"tokenizer": "trigram"}, thresholds=PACKS / "cjk" / "thresholds.json")
    statuses = {s.name: s.status for s in run_eval(config, datasets=PACKS / "cjk").result.scenarios}
    assert statuses == {
        "chinese-backup-time": "xpass", "chinese-project-owner": "xpass", "japanese-meeting-room": "xpass",
        "mixed-script-latin-terms": "pass", "mixed-script-redis": "xpass",
    }  # fmt: skip


def test_a_pack_selects_its_own_mutations_and_the_control():
    assert [m.name for m in select_mutations(None, ["deletion-ghosts"])] == [
        "control-rrf-rewritten",
        "deletion-keeps-text",
    ]
    assert [m.name for m in select_mutations()] == list(MUTATIONS)  # the built-in suite's catalogue
    assert not set(PACK_MUTATIONS) & set(MUTATIONS)


def test_parse_packs_rejects_unknown_names_with_the_closest_one():
    assert parse_packs("deletion-ghosts, filter-selectivity,deletion-ghosts") == [
        "deletion-ghosts",
        "filter-selectivity",
    ]
    closest = r"unknown pack 'deletion-ghost' \(did you mean 'deletion-ghosts'\?\)"
    with pytest.raises(UsageError, match=closest):
        parse_packs("deletion-ghost")
    with pytest.raises(UsageError, match="give pack names"):
        parse_packs("a,,b")


def test_several_packs_combine_into_one_suite(tmp_path):
    folder = pack_directory(["deletion-ghosts", "update-propagation"], tmp_path)
    assert not folder.exists()  # written only once the command's checks passed
    write_combined(["deletion-ghosts", "update-propagation"], folder)
    suite = load_suite(folder)
    assert folder == tmp_path / "deletion-ghosts+update-propagation"
    assert suite.categories == ("deletion", "update", "over-invalidation")
    assert suite.behaviour_metrics  # as each of the packs asks
    assert len(suite.scenarios) == len(load_suite(PACKS / "deletion-ghosts").scenarios) + len(
        load_suite(PACKS / "update-propagation").scenarios
    )


def test_run_pack_list_and_pack_errors(capsys, tmp_path):
    code, out, _ = cli(capsys, "run", "--pack", "list")
    assert code == 0 and out.startswith("cjk: ") and "\ndeletion-ghosts: " in out
    code, _, err = cli(capsys, "run", "--pack", "nope", "--out", str(tmp_path / "r.json"))
    assert code == 2 and "unknown pack 'nope'" in err
    code, _, err = cli(capsys, "run", "--pack", "deletion-ghosts", "--datasets", str(DATASETS))
    assert code == 2 and "--pack and --datasets both choose the suite" in err


def test_run_pack_runs_the_pack(capsys, tmp_path):
    code, out, _ = cli(
        capsys, "run", "--pack", "deletion-ghosts", "--out", str(tmp_path / "r.json"), "--history", "none"
    )
    assert code == 0 and "forget-api-key" in out and "Verdict: PASS" in out
