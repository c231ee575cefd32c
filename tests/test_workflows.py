"""The GitHub workflows parse and do what the README says CI does: lint, type check, tests (nbval
included), the deterministic report on every push and pull request, the real-model report every
Monday at 06:00 UTC and on demand, and the HTML uploaded as an artifact even when a step failed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.notebooks import DEFAULT_OUT_DIR

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
    assert ".venv/bin/evalkit run --require-baseline" in runs(load("ci.yml"))


@pytest.mark.parametrize("name", ["ci.yml", "eval-real.yml"])
def test_torch_comes_from_the_cpu_index_when_no_index_variable_is_set(name: str) -> None:
    doc = load(name)
    commands = runs(doc)
    (torch,) = [c for c in commands if '"torch==2.13.*"' in c]
    assert '--index-url "${TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"' in torch
    assert commands.index(torch) < commands.index("make setup")
    (job,) = doc["jobs"].values()
    assert "PIP_EXTRA_INDEX_URL" not in job["env"]
