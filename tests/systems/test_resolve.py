"""One resolver from a system spec to a MemorySystem (evalkit.systems.resolve)."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint

import pytest

from evalkit import ReferenceSystem
from evalkit.cli import main
from evalkit.errors import UsageError
from evalkit.systems import resolve
from evalkit.systems.resolve import resolve_system
from tests.systems_fixtures import LimitedSystem


def _reference() -> ReferenceSystem:
    return ReferenceSystem()


def test_reference_is_built_by_the_callers_factory():
    built = ReferenceSystem()
    assert resolve_system("reference", lambda: built) is built


@pytest.mark.parametrize(
    "spec", ["tests.systems_fixtures:limited_system", "tests.systems_fixtures:LimitedSystem"]
)
def test_module_factory_and_class_are_instantiated(spec):
    assert isinstance(resolve_system(spec, _reference), LimitedSystem)


def test_an_object_with_open_is_used_as_it_is():
    import tests.systems_fixtures as module

    module.READY = LimitedSystem()
    try:
        assert resolve_system("tests.systems_fixtures:READY", _reference) is module.READY
    finally:
        del module.READY


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_xyz:make", r"cannot import module 'no_such_module_xyz'"),
        ("tests.systems_fixtures:nothing", r"module 'tests.systems_fixtures' has no attribute 'nothing'"),
        ("tests.systems_fixtures:LIMITED_CAPABILITIES", r"gave frozenset, not a memory system"),
        ("no-such-plugin", r"unknown system 'no-such-plugin'; a system is 'reference', 'http://HOST:PORT"),
        ("127.0.0.1:8765", r"unknown system '127.0.0.1:8765': did you mean http://127.0.0.1:8765\?"),
        ("localhost:80", r"did you mean http://localhost:80\?"),
    ],
)
def test_bad_specs_are_usage_errors(spec, message):
    with pytest.raises(UsageError, match=message):
        resolve_system(spec, _reference)


def test_an_installed_plugin_is_found_by_name(monkeypatch):
    plugin = EntryPoint("limited", "tests.systems_fixtures:limited_system", resolve.ENTRY_POINT_GROUP)
    monkeypatch.setattr(
        resolve, "entry_points", lambda group: [plugin] if group == resolve.ENTRY_POINT_GROUP else []
    )
    assert isinstance(resolve_system("limited", _reference), LimitedSystem)


def test_a_system_built_from_a_spec_is_closed_after_the_run_but_a_passed_object_is_not():
    from evalkit import run_eval
    from tests.shared import DATASETS
    from tests.systems_fixtures import ClosingSystem

    options = {"datasets": DATASETS, "scenarios": ["explicit-fact"], "thresholds": None}
    run_eval(system="tests.systems_fixtures:ClosingSystem", **options)
    assert ClosingSystem.built[-1].closed
    mine = ClosingSystem()
    run_eval(system=mine, **options)
    assert not mine.closed


@pytest.mark.parametrize(
    ("argv", "hidden", "extra"),
    [
        (["serve", "--port", "0"], "uvicorn", "http"),
        (["serve", "--mcp"], "mcp", "mcp"),
        (["run", "--system", "http://127.0.0.1:9"], "httpx", "http"),
    ],
)
def test_a_missing_extra_is_a_usage_error_naming_it(monkeypatch, capsys, argv, hidden, extra):
    """Without an optional extra, `evalkit serve` and the adapters say what to install (exit 2)
    instead of an ImportError traceback; nothing is served or run."""
    for name in [hidden, *(n for n in sys.modules if n.startswith(f"{hidden}."))]:
        monkeypatch.setitem(sys.modules, name, None)  # importing it now raises ImportError
    for module in ("http.server", "http.client", "mcp.server", "mcp.adapter"):
        monkeypatch.delitem(sys.modules, f"evalkit.systems.{module}", raising=False)
    assert main(argv) == 2
    assert f"pip install 'evalkit-memory[{extra}]'" in capsys.readouterr().err
