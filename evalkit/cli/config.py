"""`evalkit config`: print each resolved project setting and where it came from."""

from __future__ import annotations

import argparse

from evalkit.cli.args import add_dataset_args, add_top_k_arg, project_settings
from evalkit.cli.exit_codes import EXIT_OK
from evalkit.harness.project import PROJECT_FILE, PYPROJECT_FILE, SETTINGS, Project


def register(config: argparse.ArgumentParser) -> None:
    """Add `evalkit config`."""
    config.description = (
        f"Print each setting `evalkit run` would use — datasets, thresholds, system, top_k, "
        f"gated, min_relevance, require_baseline, reports — and its source: the command line, the "
        f"project file ({PROJECT_FILE}, else [tool.evalkit] in {PYPROJECT_FILE}, searched from the "
        "working directory upwards) or the default. Exit 0, or 2 for a bad project file."
    )
    add_dataset_args(config)
    add_top_k_arg(config)
    config.add_argument(
        "--get", choices=SETTINGS, metavar="SETTING",
        help="print only this setting's resolved value, `none` when unset (for scripts: evalkit init's CI "
        "workflow reads `system` so)",
    )  # fmt: skip
    config.set_defaults(handler=config_command)


def config_command(args: argparse.Namespace) -> int:
    project = project_settings(args)
    if args.get is not None:
        value = project.values()[args.get]
        print("none" if value is None else _shown(value))
    else:
        print(render_project(project))
    return EXIT_OK


def render_project(project: Project) -> str:
    """One line per setting: name, value, source; headed by the project file (or its absence)."""
    head = f"project file: {project.file}" if project.file else "project file: none (defaults apply)"
    values = {name: _shown(value) for name, value in project.values().items()}
    name_width = max(map(len, values))
    value_width = max(map(len, values.values()))
    lines = [head, *(f"note: {note}" for note in project.notes)]
    lines += [
        f"{name:<{name_width}}  {value:<{value_width}}  ({project.sources[name]})"
        for name, value in values.items()
    ]
    return "\n".join(lines)


def _shown(value: object) -> str:
    if value is None:
        return "none (the service default)"
    return str(value).lower() if isinstance(value, bool) else str(value)
