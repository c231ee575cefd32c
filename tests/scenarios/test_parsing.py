"""Tests for evalkit.scenarios.parsing: the two strict YAML loaders give the same data and the same
messages. Hostile and malformed files are run through both loaders by the tests that use the
`yaml_loader` fixture (tests/test_fault_matrix.py, tests/scenarios/test_loading.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.scenarios import parsing
from evalkit.scenarios.parsing import YAML_LOADERS, PythonYamlLoader, SyntaxProblem, parse_text
from tests.shared import DATASETS, FIXTURES

needs_libyaml = pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML was built without libyaml")


def _outcome(text: str, loader: type) -> tuple[str, Any]:
    """("data", the data) or ("problem", the message) of `text` read by `parse_text` with `loader`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parsing, "YAML_LOADER", loader)
        try:
            return "data", parse_text(text, ".yaml")
        except SyntaxProblem as exc:
            return "problem", str(exc)


def _outcomes(text: str) -> list[tuple[str, Any]]:
    """The outcome of `text` with each loader, in YAML_LOADERS order."""
    return [_outcome(text, loader) for loader in YAML_LOADERS]


def test_the_libyaml_loader_is_used_when_pyyaml_has_libyaml() -> None:
    assert len(YAML_LOADERS) == (2 if yaml.__with_libyaml__ else 1)
    assert parsing.YAML_LOADER is YAML_LOADERS[0]
    assert YAML_LOADERS[-1] is PythonYamlLoader


@needs_libyaml
def test_libyaml_loader_takes_only_the_events_from_c_and_composes_in_python() -> None:
    from yaml._yaml import CParser

    loader = parsing.LibyamlEventLoader
    for name in ("get_event", "peek_event", "check_event"):
        assert getattr(loader, name) is getattr(CParser, name)
    composer_methods = [name for name, value in vars(yaml.composer.Composer).items() if callable(value)]
    assert {"get_single_node", "compose_document", "compose_node"} <= set(composer_methods)
    for name in composer_methods:
        assert getattr(loader, name) is not getattr(CParser, name, None), name


_FILES = sorted([*DATASETS.rglob("*.yaml"), *FIXTURES.rglob("*.yaml")])


@needs_libyaml
def test_libyaml_reads_every_valid_repository_yaml_file_itself_without_the_python_fallback() -> None:
    loader = parsing.LibyamlEventLoader
    read = 0
    for path in _FILES:
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            expected = parsing._load(PythonYamlLoader, text)
        except yaml.YAMLError:
            continue  # a malformed fixture
        assert not parsing._LIBYAML_LENIENT.search(text), path
        assert parsing._load(loader, text) == expected, path
        read += 1
    assert read >= len(list(DATASETS.rglob("*.yaml")))


@pytest.mark.parametrize("path", _FILES, ids=lambda p: str(p.relative_to(p.parents[2])))
def test_both_loaders_give_the_same_data_or_message_for_every_repository_yaml_file(path: Path) -> None:
    first, *others = _outcomes(path.read_text(encoding="utf-8", errors="replace"))
    assert all(other == first for other in others)


LIBYAML_DIFFERS = {
    # Spellings on which libyaml's parser and PyYAML's disagree (from running both on
    # yaml/yaml-test-suite): the strict loaders must still agree, with PyYAML's answer.
    "tab-after-value": ("a: b\t\nc: d\t# x\n", "problem"),
    "tab-in-flow": ("a: [1,\t2]\n", "problem"),
    "tab-in-plain-scalar": ("a: x\ty\n", "problem"),
    "question-mark-in-flow-plain": ("q: [{query: Which port?, relevant: [a]}]\n", "problem"),
    "question-mark-in-flow-key": ("a: {key?: value}\n", "problem"),
    "tagged-empty-node": ("!\n", "data"),
    "tagged-empty-flow-key": ("{\n  foo : !!str,\n  !!str : bar,\n}\n", "problem"),
    "directive-with-glued-comment": ("%YAML 1.1#...\n---\na: 1\n", "problem"),
    "future-yaml-version": ("%YAML 1.3\n---\na: 1\n", "data"),
    "block-header-with-glued-comment": ("block: ># comment\n  scalar\n", "problem"),
    "surrogate-escape": ('a: "\\ud800"\n', "data"),
    "libyaml-nesting-limit": ("a: " + "[" * 1100 + "]" * 1100 + "\n", "problem"),
    "unknown-escape": ('a: "\\q"\n', "problem"),
    "control-character": ("a: b\x01c\n", "problem"),
}


@pytest.mark.parametrize("case", sorted(LIBYAML_DIFFERS))
def test_both_loaders_agree_where_libyaml_and_pyyaml_differ(case: str) -> None:
    text, kind = LIBYAML_DIFFERS[case]
    python = _outcome(text, PythonYamlLoader)
    assert python[0] == kind
    assert _outcomes(text) == [python] * len(YAML_LOADERS)


@needs_libyaml
def test_every_libyaml_difference_is_a_real_one() -> None:
    """Each LIBYAML_DIFFERS case is answered differently by plain libyaml (CSafeLoader), so the
    agreement above is the strict loaders' doing."""
    for case, (text, _) in LIBYAML_DIFFERS.items():
        try:
            libyaml: Any = ("data", yaml.load(text, Loader=yaml.CSafeLoader))
        except yaml.YAMLError as exc:
            libyaml = ("problem", str(exc))
        try:
            python: Any = ("data", yaml.load(text, Loader=yaml.SafeLoader))
        except (yaml.YAMLError, RecursionError) as exc:  # SafeLoader has no depth bound
            python = ("problem", str(exc))
        assert libyaml != python, case


_SCALARS = (
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
    | st.sampled_from(["a?b", "x: y", "- z", "#c", "? k", "!t", "&a", "*a", "%p", "2024-01-08", "|", ">#"])
    | st.integers()
    | st.floats(allow_nan=False)
    | st.booleans()
    | st.none()
)
_DATA = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(data=_DATA, flow=st.sampled_from([False, True, None]), width=st.sampled_from([20, 80]))
def test_both_loaders_read_any_dumped_data_alike(data: Any, flow: bool | None, width: int) -> None:
    text = yaml.safe_dump({"v": data}, default_flow_style=flow, width=width, allow_unicode=True)
    first, *others = _outcomes(text)
    assert all(other == first for other in others)
