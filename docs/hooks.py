"""MkDocs hook: the generated reference pages.

A page holding a marker line `<!-- generated: NAME -->` gets the marker replaced, at build time,
by the reference NAME generated from evalkit's own declarations, so the site never lags behind the
code and nothing is copied by hand:

| NAME | generated from |
|---|---|
| `cli` | the argparse parser (`evalkit.cli.build_parser`): every command, sub-command and flag |
| `config` | the `evalkit.toml` keys (`evalkit.harness.project.ProjectSettings`, their descriptions) |
| `notebook-parameters` | each report notebook's `parameters` cell (`evalkit.notebooks.read_parameters`) |
| `run-request` | each run option in every spelling (`evalkit.harness.request.RunRequest`'s `Option`s) |
| `scenario` | the scenario file's pydantic models (`evalkit.scenarios.model`) |
| `report-schema` | the report JSON's pydantic model (`RunResult.model_json_schema()`) |
| `http` | the OpenAPI document of `evalkit serve`'s FastAPI app (`evalkit.systems.http.server`) |
| `mcp-mapping` | the MCP mapping file's pydantic model (`evalkit.systems.mcp.mapping.McpMapping`) |

Two machine-readable files are added to the site as well: `reference/report.schema.json` and
`reference/openapi.json`. The API pages are mkdocstrings' (`::: evalkit`), from the docstrings.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)
ROOT = Path(__file__).resolve().parent.parent


# --- shared rendering ---------------------------------------------------------------------------


def _cell(text: object) -> str:
    """Text for one Markdown table cell: one line, pipes escaped, and `<` and `>` outside code
    spans escaped (help texts say `<reports>/...`, which HTML would take for a tag)."""
    parts = " ".join(str(text).split()).replace("|", "\\|").split("`")
    for i in range(0, len(parts), 2):  # the even parts lie outside code spans
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def _table(header: Iterable[str], rows: Iterable[Iterable[object]]) -> str:
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _type_of(prop: dict[str, Any]) -> str:
    """A JSON-schema property's type, read as a reader would write it (`list[Hit]`, `int | None`)."""
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[1]
    if "anyOf" in prop:
        return " | ".join(_type_of(p) for p in prop["anyOf"])
    if "enum" in prop:
        return " \\| ".join(json.dumps(v) for v in prop["enum"]).replace("\\|", "or")
    if "const" in prop:
        return json.dumps(prop["const"])
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list[{_type_of(prop.get('items', {}))}]"
    if kind == "object" and "additionalProperties" in prop and isinstance(prop["additionalProperties"], dict):
        return f"dict[str, {_type_of(prop['additionalProperties'])}]"
    return {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}.get(
        kind, str(kind)
    )


def _default(name: str, prop: dict[str, Any], required: set[str]) -> str:
    if name in required:
        return "required"
    if "default" in prop:
        return "`" + json.dumps(prop["default"]) + "`"
    return ""


def schema_tables(schema: dict[str, Any], title: str, level: int = 3) -> str:
    """Every object model of a JSON schema (the root first, then its `$defs` alphabetically) as a
    heading, its description and a table of its fields: name, type, default, description."""
    models = [(title, schema), *sorted(schema.get("$defs", {}).items())]
    parts = []
    for name, model in models:
        if "properties" not in model:
            if "enum" in model:
                parts.append(f"{'#' * level} {name}\n\nOne of: " + ", ".join(f"`{v}`" for v in model["enum"]))
            continue
        required = set(model.get("required", ()))
        rows = [
            (f"`{field}`", _type_of(prop), _default(field, prop, required), prop.get("description", ""))
            for field, prop in model["properties"].items()
        ]
        description = _cell(model.get("description", ""))
        parts.append(
            f"{'#' * level} {name}\n\n{description}\n\n"
            + _table(("field", "type", "default", "description"), rows)
        )
    return "\n\n".join(parts)


# --- the generators -----------------------------------------------------------------------------


def _commands(parser: argparse.ArgumentParser, prefix: str) -> Iterable[tuple[str, argparse.ArgumentParser]]:
    """Every command under `parser` with its full name, depth first (`evalkit mcp inspect`)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from _commands(sub, f"{prefix} {name}")


def _option_rows(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if (
            isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
            or action.help == argparse.SUPPRESS
        ):
            continue
        if action.option_strings:
            metavar = "" if action.nargs == 0 else " " + formatter._format_args(action, action.dest.upper())
            spelled = ", ".join(f"`{flag}{metavar}`" for flag in action.option_strings)
        else:
            spelled = f"`{formatter._format_args(action, action.dest)}`"
        help_text = formatter._expand_help(action) if action.help else ""
        rows.append((spelled, help_text))
    return rows


def cli_reference() -> str:
    """Every command of the `evalkit` parser: its help line, usage and a table of its arguments."""
    from evalkit.cli import build_parser

    parser = build_parser()
    parts = []
    helps = {
        f"evalkit {choice.dest}": choice.help
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for choice in action._choices_actions
    }
    for name, sub in _commands(parser, "evalkit"):
        sub.prog = name
        usage = sub.format_usage().removeprefix("usage: ").strip()
        text = sub.description or helps.get(name) or ""
        rows = _option_rows(sub)
        table = _table(("argument", "meaning"), rows) if rows else "No arguments."
        parts.append(f"## `{name}`\n\n{_cell(text)}\n\n```text\n{usage}\n```\n\n{table}")
    return "\n\n".join(parts)


def config_reference() -> str:
    """The keys of `evalkit.toml` (and `[tool.evalkit]`), from `ProjectSettings`."""
    from evalkit.harness.project import ProjectSettings

    schema = ProjectSettings.model_json_schema()
    rows = [
        (f"`{key}`", _type_of(prop), prop.get("description", ""))
        for key, prop in schema["properties"].items()
    ]
    return _table(("key", "type", "meaning and default"), rows)


def run_request_reference() -> str:
    """Each `RunRequest` option: its meaning, then its name as a flag, an `evalkit.toml` key, a
    notebook parameter and a `run_eval` keyword, one a line (or why a spelling does not offer it)."""
    from evalkit.harness.request import NotThere, options

    labels = {"cli": "evalkit run", "toml": "evalkit.toml", "notebook": "notebook -p", "api": "Python"}

    def spelled(name: object) -> str:
        if isinstance(name, NotThere):
            return f"— ({name.reason})"
        return " / ".join(f"`{part}`" for part in ((name,) if isinstance(name, str) else name))  # type: ignore[union-attr]

    lines = ["| option | spelled | meaning |", "|---|---|---|"]
    for field, option in options().items():
        spellings = "<br>".join(
            f"{label}: {_cell(spelled(option.name(field, s)))}" for s, label in labels.items()
        )
        lines.append(f"| `{field}` | {spellings} | {_cell(option.help)} |")  # <br>: one spelling a line
    return "\n".join(lines)


def notebook_parameters() -> str:
    """Each packaged report notebook's parameters: name, type, default and help comment."""
    from evalkit.notebooks import read_parameters

    parts = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        rows = [
            (f"`{p.name}`", p.annotation, f"`{p.default!r}`", p.help) for p in read_parameters(path).values()
        ]
        parts.append(f"## `{path.stem}`\n\n" + _table(("parameter", "type", "default", "meaning"), rows))
    return "\n\n".join(parts)


def scenario_reference() -> str:
    """The scenario file's models (`Scenario` and what it holds)."""
    from evalkit.scenarios.model import Scenario

    return schema_tables(Scenario.model_json_schema(), "Scenario", level=2)


def report_schema() -> str:
    from evalkit.harness.results import RunResult

    return schema_tables(RunResult.model_json_schema(), "RunResult", level=2)


def mcp_mapping() -> str:
    from evalkit.systems.mcp.mapping import McpMapping

    return schema_tables(McpMapping.model_json_schema(), "McpMapping", level=2)


def openapi() -> dict[str, Any]:
    """The OpenAPI document of `evalkit serve` (the reference store behind the HTTP contract)."""
    from evalkit.systems.http.server import create_app
    from evalkit.systems.reference import ReferenceSystem

    return create_app(ReferenceSystem()).openapi()


def http_reference() -> str:
    """The HTTP contract's operations and their bodies, from the OpenAPI document."""
    document = openapi()
    rows = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            reply = (
                operation.get("responses", {}).get("200", {}).get("content", {}).get("application/json", {})
            )
            rows.append(
                (
                    f"`{method.upper()} {path}`",
                    operation.get("summary", ""),
                    _type_of(body.get("schema", {})) if body else "",
                    _type_of(reply.get("schema", {})) if reply else "",
                )
            )
    schemas = {"$defs": document.get("components", {}).get("schemas", {})}
    return (
        _table(("operation", "what it does", "request body", "reply"), rows)
        + "\n\n## Bodies\n\n"
        + schema_tables(schemas, "", level=3).lstrip()
    )


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "config": config_reference,
    "notebook-parameters": notebook_parameters,
    "run-request": run_request_reference,
    "scenario": scenario_reference,
    "report-schema": report_schema,
    "http": http_reference,
    "mcp-mapping": mcp_mapping,
}


# --- MkDocs events ------------------------------------------------------------------------------


def on_files(files: Files, config: Any) -> Files:
    """Adds the report's JSON schema and the HTTP contract's OpenAPI document as files of the site."""
    from evalkit.harness.results import RunResult

    for uri, content in (
        ("reference/report.schema.json", RunResult.model_json_schema()),
        ("reference/openapi.json", openapi()),
    ):
        files.append(File.generated(config, uri, content=json.dumps(content, indent=2) + "\n"))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Replaces each `<!-- generated: NAME -->` line by the generated reference NAME."""

    def generate(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise KeyError(
                f"{page.file.src_uri}: unknown generated reference {name!r}; known: {sorted(GENERATORS)}"
            )
        return GENERATORS[name]()

    return MARKER.sub(generate, markdown)
