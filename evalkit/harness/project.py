"""A project's evalkit settings — `evalkit.toml` or `[tool.evalkit]` in pyproject.toml — resolved
with the command line into the run configuration.

Where the file is found: the first directory, from `start` (the working directory) upwards, that
holds `evalkit.toml` or a `pyproject.toml` with a `[tool.evalkit]` table. When one directory has
both, `evalkit.toml` wins and the pyproject table is ignored (`Project.notes` says so). No file
found: every value is its default (the built-in suite, checked against its own baselines).

Keys, all optional (`evalkit.toml` holds them at the top level, pyproject.toml under
`[tool.evalkit]`): the fields of `ProjectSettings`, each with its meaning and default in its
description (the documentation's `evalkit.toml` reference is generated from them).

Precedence, value by value: the command line, then the file, then the default. Relative paths in
the file (the path settings, and the mapping file of a `system = "mcp:MAPPING.toml"`) are
relative to the file's folder (so a project works from any sub-directory); on the command line,
to the working directory. `thresholds` follows `datasets` unless it is set itself:
`--datasets DIR` gates on `DIR/thresholds.json`. `thresholds` set to `none` (`--thresholds
none`; `NO_BASELINES`) is an explicit "no baselines": the run compares no metrics and its verdict
is NOT COMPARED at best (a file really named `none` is reached as `./none`). An unknown key, a bad
value or invalid TOML raises UsageError naming the file, the key and the fix (every bad key of
the file in one message, an unknown key with "did you mean").
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, StrictBool, StrictInt, ValidationError, field_validator

from evalkit.errors import UsageError, one_or_listed
from evalkit.harness.config import DEFAULT_DATASETS, RunConfig

if TYPE_CHECKING:
    from evalkit.harness.request import RunRequest
from evalkit.packaged import THRESHOLDS_NAME
from evalkit.records import MAX_TOP_K
from evalkit.validation import FrozenModel, field_problems

PROJECT_FILE = "evalkit.toml"
"""The project file evalkit looks for first."""

MCP_PREFIX = "mcp:"
"""A `system` spec naming an MCP mapping file (`evalkit.systems.resolve`)."""

PYPROJECT_FILE = "pyproject.toml"
"""The Python project file whose `[tool.evalkit]` table is read when there is no evalkit.toml."""

DEFAULT_REPORTS = Path("reports")
"""Where reports go when nothing says otherwise, relative to the working directory."""

NO_BASELINES = "none"
"""The `thresholds` value that means no baselines at all (`Project.thresholds` None)."""

AUTO = "auto (on in a CI context)"
"""How `evalkit config` shows `require_baseline` left unset (`evalkit.ci`)."""

DEFAULT_SOURCE = "default"
COMMAND_LINE = "command line"


class ProjectSettings(FrozenModel):
    """The keys of a project file (see the module docstring); None = not set there."""

    datasets: Path | None = Field(
        default=None,
        description="The suite directory (`scenarios/`, `distractors.yaml`, `suite.yaml`). "
        "Default: the built-in suite.",
    )
    thresholds: Literal["none"] | Path | None = Field(
        default=None,
        description='The baselines file; `"none"`: no baselines (the verdict is NOT COMPARED at best). '
        "Default: `<datasets>/thresholds.json`.",
    )
    system: str | None = Field(
        default=None,
        min_length=1,
        description="The system under test, as `--system` spells it (an `mcp:` mapping file is relative "
        "to the project file). Default: `reference`.",
    )
    top_k: StrictInt | None = Field(
        default=None, ge=1, le=MAX_TOP_K, description="Results per query. Default: 5."
    )
    gated: StrictBool | None = Field(
        default=None, description="Also run the report-only pass under the relevance gate. Default: true."
    )
    min_relevance: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
        description="The relevance gate of that pass. Default: the service default (0.4).",
    )
    require_baseline: StrictBool | None = Field(
        default=None,
        description="A run that did not compare every metric with a baseline (no baseline for its "
        "system, mode, top_k and suite, or a scope not comparable) is a regression (exit 1). "
        "Default: on in a CI context (`CI` set in the environment), off elsewhere.",
    )
    reports: Path | None = Field(
        default=None,
        description="The folder of the JSON and HTML reports and the run history. Default: `reports` "
        "in the working directory.",
    )

    # TOML has booleans and integers of its own: `top_k = true` ran at top_k 1 and `gated = "off"`
    # read as false, so the file's values are taken only in their own type (StrictInt, StrictBool)

    @field_validator("datasets", "thresholds", "reports", mode="before")
    @classmethod
    def _plain_path(cls, value: object) -> object:
        """A path holding a NUL character (which no file system allows) is refused here, not by
        the first `open` deep in the run."""
        if isinstance(value, str) and "\x00" in value:
            raise ValueError("the path holds a NUL character; give a plain path")
        return value


SETTINGS: tuple[str, ...] = tuple(ProjectSettings.model_fields)
"""The project settings, in the order `evalkit config` prints them."""

_PATHS = ("datasets", "thresholds", "reports")


@dataclass(frozen=True)
class Project:
    """The resolved settings of one command: `config` (the run configuration; its `thresholds`
    is `thresholds`), the `datasets`, `thresholds` (None: `none`, no baselines) and `reports`
    paths, where each setting came
    from (`sources`: "command line", the file, or "default"), the project file (None = none
    found) and notes (a project file that was ignored)."""

    config: RunConfig
    datasets: Path
    thresholds: Path | None
    reports: Path
    sources: Mapping[str, str]
    file: Path | None
    notes: tuple[str, ...] = ()

    def values(self) -> dict[str, object]:
        """Each setting's resolved value, in SETTINGS order."""
        c = self.config
        return {
            "datasets": self.datasets,
            "thresholds": NO_BASELINES if self.thresholds is None else self.thresholds,
            "system": c.system,
            "top_k": c.top_k,
            "gated": c.gated,
            "min_relevance": c.min_relevance,
            "require_baseline": AUTO if c.require_baseline is None else c.require_baseline,
            "reports": self.reports,
        }


def resolve_request(given: Mapping[str, Any], start: str | Path | None = None) -> tuple[RunRequest, Project]:
    """The request of a command (`evalkit run`): `given` (RunRequest field → value from the
    command line) over the project file found from `start` over the defaults, and the resolved
    project (its `reports` folder, where each setting came from). A pack given on the command
    line replaces the project's suite. UsageError for a bad project file or a bad request,
    naming the flag. (The request's module is imported here: reading the settings alone, as
    `evalkit lint` and `evalkit config` do, does not load it.)"""
    from evalkit.harness.request import OFF, RunRequest

    typed = RunRequest.checked(given, "cli")  # every value checked, named by its flag
    given = {name: getattr(typed, name) for name in given}
    gate = typed.gated_pass
    flags = {
        "datasets": given.get("datasets"),
        "thresholds": given.get("thresholds"),
        "system": given.get("system"),
        "top_k": given.get("top_k"),
        "gated": None if gate is None else gate != OFF,
        "min_relevance": gate if isinstance(gate, float) else None,
        "require_baseline": given.get("require_baseline"),
    }
    project = resolve_project(flags, start)
    c = project.config
    values: dict[str, Any] = {
        "system": c.system,
        "top_k": c.top_k,
        "gated_pass": OFF if not c.gated else c.min_relevance,
        "thresholds": NO_BASELINES if project.thresholds is None else project.thresholds,
        "require_baseline": c.require_baseline,
        "datasets": project.datasets,
    }
    settings = {"gated_pass": ("gated", "min_relevance")}  # a field → the project settings it comes from
    chosen = {  # what the command line or the project file set: a default stays the request's own
        name: value
        for name, value in values.items()
        if any(not project.sources[s].startswith(DEFAULT_SOURCE) for s in settings.get(name, (name,)))
    }
    if given.get("pack") is not None and given.get("datasets") is None:
        chosen.pop("datasets", None)  # the pack replaces the project's suite
    return RunRequest.checked({**given, **chosen}, "cli"), project


def find_project_file(start: str | Path | None = None) -> tuple[Path, dict[str, Any], tuple[str, ...]] | None:
    """(file, its evalkit table, notes) of the nearest project file from `start` (default: the
    working directory) upwards, or None. UsageError for invalid TOML or a `tool.evalkit` that is
    not a table."""
    here = Path(start if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        own, pyproject = folder / PROJECT_FILE, folder / PYPROJECT_FILE
        table = _tool_table(pyproject) if pyproject.is_file() else None
        if own.is_file():
            notes = (f"{pyproject} [tool.evalkit] is ignored: {own} wins",) if table else ()
            return own, _read_toml(own), notes
        if table is not None:
            return pyproject, table, ()
    return None


def resolve_project(flags: Mapping[str, object | None], start: str | Path | None = None) -> Project:
    """The settings of a command: `flags` (setting → value from the command line, None = not
    given) over the project file found from `start` over the defaults. UsageError for an unknown
    flag name, a bad project file or a bad value."""
    unknown = sorted(set(flags) - set(SETTINGS))
    if unknown:
        raise UsageError(f"unknown project setting(s) {', '.join(unknown)}; settings: {', '.join(SETTINGS)}")
    found = find_project_file(start)
    file, table, notes = found if found is not None else (None, {}, ())
    from_file = _settings(file, table) if file is not None else ProjectSettings()
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name in SETTINGS:
        given, in_file = flags.get(name), getattr(from_file, name)
        if given is not None:
            values[name], sources[name] = given, COMMAND_LINE
        elif in_file is not None and file is not None:
            values[name] = _from_file(file, name, in_file)
            sources[name] = _describe(file)
        else:
            sources[name] = DEFAULT_SOURCE
    datasets = Path(str(values.pop("datasets", DEFAULT_DATASETS)))
    reports = Path(str(values.pop("reports", DEFAULT_REPORTS)))
    chosen = values.pop("thresholds", datasets / THRESHOLDS_NAME)
    thresholds = None if chosen == NO_BASELINES else Path(str(chosen))
    if sources["thresholds"] == DEFAULT_SOURCE:
        sources["thresholds"] = f"{DEFAULT_SOURCE}: <datasets>/{THRESHOLDS_NAME}"
    return Project(
        config=RunConfig(**values, thresholds=thresholds),
        datasets=datasets,
        thresholds=thresholds,
        reports=reports,
        sources=sources,
        file=file,
        notes=notes,
    )


def _from_file(file: Path, name: str, value: Any) -> Any:
    """A value read from `file`, its relative paths made relative to the file's folder: the
    path settings, and the mapping file of an `mcp:MAPPING.toml` system."""
    if name == "thresholds" and value == NO_BASELINES:
        return value
    if name in _PATHS:
        return file.parent / value
    if name == "system" and value.startswith(MCP_PREFIX):
        return MCP_PREFIX + str(file.parent / value.removeprefix(MCP_PREFIX))
    return value


def _describe(file: Path) -> str:
    return f"{file} [tool.evalkit]" if file.name == PYPROJECT_FILE else str(file)


def _settings(file: Path, table: Mapping[str, Any]) -> ProjectSettings:
    try:
        return ProjectSettings.model_validate(table)
    except ValidationError as exc:
        raise UsageError(
            one_or_listed(_describe(file), field_problems(exc, ProjectSettings), "fix it")
        ) from None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read project file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"project file {path} is not valid TOML ({exc}); fix it") from exc
    except RecursionError:
        raise UsageError(
            f"project file {path}: its arrays or tables are nested too deeply to read; fix it"
        ) from None


def _tool_table(pyproject: Path) -> dict[str, Any] | None:
    """pyproject.toml's `[tool.evalkit]` table, or None when it has none."""
    table = _read_toml(pyproject).get("tool", {}).get("evalkit")
    if table is None or isinstance(table, dict):
        return table
    raise UsageError(
        f"{pyproject}: tool.evalkit must be a table ([tool.evalkit]), got {type(table).__name__}"
    )
