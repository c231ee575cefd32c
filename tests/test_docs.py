"""The documentation site builds with warnings as errors, documents every command, flag, setting,
notebook parameter and scenario field, and every Python example in it runs as written.

The site is built once (`mkdocs build --strict`, as `make docs` does) into a temporary folder and
read as text. A command, flag, `evalkit.toml` key, notebook parameter or scenario-file field that
the built site does not name — or that has no help text, no description, no help comment — fails
here, naming it. Each ```python block of `docs/**/*.md` and of README.md runs in a fresh
interpreter in an empty temporary folder (matplotlib without a display); an example must be self-
contained: it creates what it reads, and one that needs a server or a cluster starts a local one
itself (the Ray example starts a local Ray instance), so none is skipped.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.cli import build_parser
from evalkit.harness.project import ProjectSettings
from evalkit.notebooks import read_parameters
from evalkit.scenarios.model import Scenario
from tests.shared import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"
EXAMPLE = re.compile(r"^```python\n(.*?)^```", re.M | re.S)
EXAMPLE_TIMEOUT = 540  # s; the slowest example (workers and Ray, twice the built-in suite) takes ~60 s


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as `make docs` builds it (strict: a warning fails the build)."""
    out = tmp_path_factory.mktemp("site")
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stderr[-5000:]}"
    return out


def page_text(site: Path, page: str) -> str:
    """The visible text of one built page (`reference/cli` → reference/cli/index.html)."""
    markup = (site / page / "index.html").read_text(encoding="utf-8")
    body = markup.split('<article class="md-content__inner', 1)[1]
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def _commands(parser: argparse.ArgumentParser, prefix: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from _commands(sub, f"{prefix} {name}")


def test_every_command_and_flag_is_documented(site: Path) -> None:
    text = page_text(site, "reference/cli")
    missing = []
    for command, parser in _commands(build_parser(), "evalkit"):
        if f"`{command}`" not in text and command not in text:
            missing.append(command)
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            for flag in action.option_strings:
                if not action.help or action.help == argparse.SUPPRESS or flag not in text:
                    missing.append(f"{command} {flag}")
    assert missing == [], f"undocumented in docs/reference/cli (give them help text): {missing}"


def test_every_evalkit_toml_key_is_documented(site: Path) -> None:
    text = page_text(site, "reference/config")
    fields = ProjectSettings.model_fields
    missing = [key for key, field in fields.items() if key not in text or not field.description]
    assert missing == [], f"evalkit.toml keys without a description in the docs: {missing}"


def test_every_notebook_parameter_is_documented(site: Path) -> None:
    text = page_text(site, "reference/notebooks")
    missing = [
        f"{notebook.stem}: {parameter.name}"
        for notebook in sorted((ROOT / "notebooks").glob("*.ipynb"))
        for parameter in read_parameters(notebook).values()
        if parameter.name not in text or not parameter.help
    ]
    assert missing == [], f"notebook parameters without a help comment in the docs: {missing}"


def test_every_scenario_file_field_is_documented(site: Path) -> None:
    text = page_text(site, "reference/scenario")
    schema = Scenario.model_json_schema()
    models = {"Scenario": schema, **schema.get("$defs", {})}
    missing = [
        f"{model}.{field}"
        for model, declared in models.items()
        for field in declared.get("properties", {})
        if f"{model}" not in text or field not in text
    ]
    assert missing == [], f"scenario fields missing from docs/reference/scenario: {missing}"


def test_the_generated_reference_pages_hold_what_they_are_generated_from(site: Path) -> None:
    assert "RunResult" in page_text(site, "reference/report-schema")
    assert (site / "reference" / "report.schema.json").is_file()
    assert (site / "reference" / "openapi.json").is_file()
    assert "POST" in page_text(site, "reference/http")
    assert "McpMapping" in page_text(site, "reference/mcp-mapping")
    assert "run_eval" in page_text(site, "reference/api")  # mkdocstrings rendered the API


def examples() -> list[tuple[str, str]]:
    """(page:number, code) of every ```python block in docs/ and the README, in page order."""
    found = []
    for page in [*sorted(DOCS.rglob("*.md")), README]:
        for number, match in enumerate(EXAMPLE.finditer(page.read_text(encoding="utf-8")), 1):
            found.append(
                (f"{page.relative_to(DOCS) if page != README else page.name}:{number}", match.group(1))
            )
    return found


EXAMPLES = examples()


def test_the_docs_have_python_examples() -> None:
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize(("where", "code"), EXAMPLES, ids=[where for where, _ in EXAMPLES])
def test_every_python_example_runs_as_written(where: str, code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    env = os.environ | {"MPLBACKEND": "Agg"}
    ran = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=EXAMPLE_TIMEOUT,
    )
    assert ran.returncode == 0, f"{where} failed:\n{ran.stderr[-4000:]}"


def test_the_readme_system_passes_against_its_own_baseline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """README.md, "Your system": the example system, its baseline recorded, then PASS."""
    import evalkit

    (code,) = [code for where, code in EXAMPLES if where == "README.md:1"]
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "my_memory"}
    exec(compile(code, str(README), "exec"), namespace)
    system = namespace["MyMemory"]()  # type: ignore[operator]
    first = evalkit.run_eval(system=system, thresholds=tmp_path / "my-thresholds.json")
    evalkit.record_baseline(first)
    again = evalkit.run_eval(system=system, thresholds=tmp_path / "my-thresholds.json")
    assert again.result.outcome.value == "PASS", again.result.outcome.reasons


def test_the_protocol_example_gives_what_the_page_says(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """docs/system/python.md: the keyword system runs the built-in suite, NOT COMPARED, saying why."""
    (code,) = [code for where, code in EXAMPLES if where == "system/python.md:1"]
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_example"}
    exec(compile(code, str(DOCS / "system" / "python.md"), "exec"), namespace)
    result = namespace["run"].result  # type: ignore[attr-defined]
    assert result.system == "keywords"
    assert set(result.not_applicable) == {
        "contradiction-flagged", "contradiction", "explicit-fact-gated", "no-match", "project-scope-global",
        "project-scope", "recency-gentle", "recency", "supersession-history", "supersession",
    }  # fmt: skip
    assert result.gated is None
    assert [s.name for s in result.scenarios if s.status == "fail"] == []
    # its assertions held, but the built-in baselines are the reference store's: NOT COMPARED, saying so
    assert result.outcome.value == "NOT COMPARED" and result.regressions == []
    assert "was recorded for system reference; this run evaluated keywords" in result.outcome.reasons[0]
    assert 0.0 < result.overall.metrics["recall"] <= 1.0


def test_the_readme_is_a_short_path_whose_test_command_ci_runs() -> None:
    readme = README.read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    (quick_start,) = re.findall(r"## Quick start\n.*?```bash\n(.*?)```", readme, re.S)
    commands = [line.split("#")[0].strip() for line in quick_start.strip().splitlines()]
    assert commands == ["make report", "make test"]
    assert re.search(r"^make test$", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.M)
    for link in re.findall(r"\]\(((?:docs/|CONTRIBUTING)[^)#]*)", readme):
        assert (ROOT / link).is_file(), f"README links to {link}, which does not exist"
