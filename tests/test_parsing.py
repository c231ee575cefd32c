"""Scenario file parsing: the libyaml-backed loader reads every file exactly as the pure-Python
loader does — same data, same duplicate-key and no-timestamp behaviour, same error messages."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.scenarios.parsing import (
    FAST_YAML_LOADER,
    PURE_YAML_LOADER,
    SyntaxProblem,
    parse_text,
    parse_yaml_with,
)
from tests.shared import DATASETS, FIXTURES


def _utf8(path):
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        return None  # the loader reports the encoding before any parsing (tests/test_datasets.py)


YAML_TEXTS = {
    str(path.relative_to(path.parents[2])): text
    for path in sorted([*DATASETS.rglob("*.yaml"), *FIXTURES.rglob("*.yaml")])
    if (text := _utf8(path)) is not None
}

TRICKY = {
    "dates stay strings": "created_at: 2024-05-01\nwhen: 2024-05-01T10:00:00Z\nrel: -30d\n",
    "scalars": "a: yes\nb: ~\nc: 0x1f\nd: 1e3\ne: .inf\nf: '012'\ng: 1_000\n",
    "anchors and merge": "base: &b {x: 1, y: 2}\nchild:\n  <<: *b\n  y: 3\n",
    "block text": "description: >\n  folded\n  text\nliteral: |\n  kept\n  lines\n",
    "unicode": 'content: "caf\\u00e9 \\u2014 ok"\nid: naïve\n',
    "nested lists": "queries:\n  - query: q\n    relevant: [a, b]\n    rank_before: {before: a, after: b}\n",
}

BROKEN = {
    "duplicate key": "name: a\ncategory: b\nname: c\n",
    "nested duplicate": "thoughts:\n  - id: x\n    id: y\n",
    "bad indentation": "name: a\n  category: b\n",
    "unclosed flow": "relevant: [a, b\n",
    "tab": "name:\ta\n\tcategory: b\n",
    "unknown tag": "name: !!python/object:os.system a\n",
}


def _outcome(loader: type, text: str) -> tuple[str, object]:
    try:
        return "data", parse_yaml_with(loader, text)
    except SyntaxProblem as exc:
        return "problem", str(exc)


def test_the_fast_loader_uses_libyaml_when_pyyaml_has_it():
    assert yaml.__with_libyaml__, "PyYAML without libyaml: the fast path cannot be checked here"
    assert issubclass(FAST_YAML_LOADER, yaml.CSafeLoader)
    assert not issubclass(PURE_YAML_LOADER, yaml.CSafeLoader)


def test_the_repository_yaml_files_are_found():
    assert len(YAML_TEXTS) > 20
    assert "datasets/scenarios/temporal.yaml" in YAML_TEXTS


@pytest.mark.parametrize("text", YAML_TEXTS.values(), ids=YAML_TEXTS.keys())
def test_every_repository_yaml_file_reads_the_same_with_both_loaders(text):
    assert _outcome(FAST_YAML_LOADER, text) == _outcome(PURE_YAML_LOADER, text)


@pytest.mark.parametrize("text", TRICKY.values(), ids=TRICKY.keys())
def test_valid_yaml_reads_the_same_with_both_loaders(text):
    fast, pure = _outcome(FAST_YAML_LOADER, text), _outcome(PURE_YAML_LOADER, text)
    assert fast == pure
    assert fast[0] == "data"


def test_dates_stay_strings_on_the_fast_path():
    assert parse_text(TRICKY["dates stay strings"], ".yaml") == {
        "created_at": "2024-05-01",
        "when": "2024-05-01T10:00:00Z",
        "rel": "-30d",
    }


@pytest.mark.parametrize("text", BROKEN.values(), ids=BROKEN.keys())
def test_broken_yaml_is_reported_in_the_pure_loaders_words(text):
    expected = _outcome(PURE_YAML_LOADER, text)
    assert expected[0] == "problem"
    with pytest.raises(SyntaxProblem) as caught:
        parse_text(text, ".yaml")
    assert str(caught.value) == expected[1]


def test_duplicate_keys_name_the_first_line_on_both_loaders():
    for loader in (FAST_YAML_LOADER, PURE_YAML_LOADER):
        kind, message = _outcome(loader, BROKEN["duplicate key"])
        assert kind == "problem"
        assert "duplicate key 'name' (first given on line 1)" in str(message)


_KEYS = st.sampled_from(["id", "name", "query", "created_at", "top_k", "a", "b"])
_SCALARS = st.one_of(
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.text(max_size=20),
    st.sampled_from(["2024-05-01", "-30d", "yes", "0x1f", "1e3", "~", "12:30:00"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(data=st.dictionaries(_KEYS, _VALUES, max_size=5), flow=st.booleans())
def test_generated_documents_read_the_same_with_both_loaders(data, flow):
    text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True)
    assert _outcome(FAST_YAML_LOADER, text) == _outcome(PURE_YAML_LOADER, text)
