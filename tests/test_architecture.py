"""The layout shows the architecture: imports flow one way, from records up to the CLI.

Every `evalkit` import in the package (module level or inside a function) is read with `ast`;
a package is a top-level name under `evalkit/` (`evalkit.harness.runner` belongs to `harness`).
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.shared import ROOT

PACKAGE = ROOT / "evalkit"

LAYERS: tuple[frozenset[str], ...] = (
    frozenset(
        {
            "errors",
            "records",
            "files",
            "lazy",
            "packaged",
            "parameters",
            "progress",
            "ci",
            "validation",
            "shapes",
            "sqlite",
            "wording",
        }
    ),
    frozenset({"embedders"}),
    frozenset({"memory"}),
    frozenset({"systems"}),
    frozenset({"scenarios"}),
    frozenset({"metrics"}),
    frozenset({"harness"}),
    frozenset({"suites"}),
    frozenset({"views"}),
    frozenset({"notebooks"}),
    frozenset({"api", "scaffold"}),
    frozenset({"cli", "__main__", "__init__", "benchmarks", "columns"}),
)
"""From the bottom up: a module may import its own layer's packages and those below it."""

RUNNING = ("evalkit.harness.runner", "evalkit.harness.evaluate", "evalkit.suites.mutations", "evalkit.api")
"""What runs an evaluation: no view may import it (views read saved results)."""


def _package(module: str) -> str:
    return module.split(".")[1] if "." in module else "__init__"


def _imports(path: Path) -> Iterator[str]:
    """Every evalkit module `path` imports, as a dotted name."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("evalkit"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evalkit"):
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 2 else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
PACKAGES = {_package(name) for name in MODULES}


def _edges() -> set[tuple[str, str]]:
    """(importing package, imported package) for every import across packages."""
    edges = set()
    for name, path in MODULES.items():
        source = _package(name) if name != "evalkit.__init__" else "__init__"
        for imported in _imports(path):
            target = _package(imported)
            if target != source and target in PACKAGES:
                edges.add((source, target))
    return edges


def _layer(package: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if package in layer)


def test_every_package_has_a_layer():
    assert set().union(*LAYERS) >= PACKAGES, sorted(PACKAGES - set().union(*LAYERS))


def test_imports_only_go_down_the_layers():
    upward = sorted((a, b) for a, b in _edges() if _layer(b) > _layer(a))
    assert upward == []


def test_no_cycle_between_packages():
    graph: dict[str, set[str]] = {}
    for a, b in _edges():
        graph.setdefault(a, set()).add(b)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cycles = sorted(a for a in graph if reaches(a, a, {a}))
    assert cycles == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("evalkit.views")))
def test_views_never_import_what_runs(module):
    imported = set(_imports(MODULES[module]))
    assert not {i for i in imported if i.startswith(RUNNING)}


def test_nothing_imports_the_cli_or_the_notebooks():
    for name, path in MODULES.items():
        imported = set(_imports(path))
        if not name.startswith(("evalkit.cli", "evalkit.__main__")):
            assert not {i for i in imported if i.startswith(("evalkit.cli", "evalkit.notebooks"))}, name


def test_the_checker_sees_a_known_import():
    # guards the walker itself: the runner imports the harness config and the scenarios package
    assert {("harness", "scenarios"), ("suites", "harness"), ("api", "suites")} <= _edges()
    assert "evalkit.harness.config" in set(_imports(MODULES["evalkit.harness.runner"]))


def test_every_public_name_has_a_home_module_that_provides_it():
    """`evalkit/__init__.py` imports lazily: `_HOMES` must cover `__all__` and hold no extra name."""
    import evalkit

    lazy = set(evalkit._HOME_OF) | set(evalkit._SUBMODULES)
    assert lazy == set(evalkit.__all__)
    for name in evalkit.__all__:
        assert getattr(evalkit, name) is not None


def test_the_top_level_is_small_and_the_rest_lives_in_namespaces():
    """Issue 34: about 25 names at the top; column constants and benchmark runs in namespaces."""
    import evalkit

    names = set(evalkit._HOME_OF)
    assert len(names) <= 30, sorted(names)
    assert not {name for name in names if name.endswith("_COLUMNS")}
    assert {"columns", "benchmarks", "errors"} <= set(evalkit._SUBMODULES)


def test_every_column_constant_of_the_views_is_in_evalkit_columns():
    import evalkit.columns

    defined = {
        (f"evalkit.views.{path.stem}", target.id)
        for path in (Path(evalkit.columns.__file__).parent / "views").glob("*.py")
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name) and target.id.endswith("_COLUMNS")
    }
    listed = {(home, name) for home, names in evalkit.columns.HOMES.items() for name in names}
    assert defined == listed
    assert sorted(evalkit.columns.__all__) == sorted(name for _, name in listed)
    for home, name in listed:
        assert getattr(evalkit.columns, name) is getattr(importlib.import_module(home), name)


@pytest.mark.parametrize("name", ["benchmarks", "columns"])
def test_a_namespace_imports_nothing_heavy_until_a_name_is_used(name):
    code = f"import sys, evalkit.{name}; print(sorted(m for m in ('pandas', 'numpy') if m in sys.modules))"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[]"


GENERIC = ("evalkit.harness", "evalkit.views")
"""The layers that hold what every system shares: they read a system's facts from its declaration
(`evalkit.systems.declaration`, recorded in the report's provenance), never from its constants."""

STORE_OPTIONS = "evalkit.memory.options"
"""The one part of the reference store a generic layer may name: its options are run options
(`RunConfig.store`)."""


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(GENERIC)))
def test_generic_layers_name_no_reference_store_constant(module):
    imported = {i for i in _imports(MODULES[module]) if not i.startswith(STORE_OPTIONS)}
    named = sorted(
        i
        for i in imported
        if i.startswith(("evalkit.memory", "evalkit.systems.reference", "evalkit.suites.locomo"))
    )
    assert named == []
    literals = {
        node.value
        for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert "reference" not in literals


def test_dir_and_tab_completion_list_the_public_api():
    import evalkit

    assert dir(evalkit) == sorted({*evalkit.__all__, "__version__"})
    assert {"run_eval", "load_run", "tables", "charts", "EvalRun"} <= set(dir(evalkit))


@pytest.mark.parametrize("name", ["charts", "mutations", "report", "tables", "traces"])
def test_every_public_submodule_lists_its_public_api(name):
    """`evalkit.tables.` completes to report tables, not to `np`, `pd` or `MaxNLocator`: each public
    submodule's `__all__` names every function and class it defines (and nothing it only imports)."""
    import evalkit

    module = getattr(evalkit, name)
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    defined = {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_")
    }
    assert defined <= set(module.__all__)
    for public in module.__all__:
        assert public.isupper() or getattr(module, public).__module__ == module.__name__, public
    assert not {"np", "pd", "MaxNLocator", "annotations"} & set(module.__all__)


def test_the_package_docstring_starts_with_how_to_start():
    import evalkit

    start = evalkit.__doc__.split("The public API", 1)[0]
    assert "evalkit.run_eval()" in start and "evalkit.load_run(" in start and "run_verdict" in start
