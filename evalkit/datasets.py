"""Load and validate the scenario dataset under `datasets/` (SPEC §2).

Layout: `<directory>/scenarios/*.yaml|*.yml|*.json` (one scenario per file) and
`<directory>/distractors.yaml` (or `.yml`/`.json`): a mapping whose only key `thoughts` lists the
shared distractor thoughts appended to every scenario with `distractors: true` (the default).

Contract of `load_suite`: either it returns a fully valid `Suite`, or it raises one `DatasetError`
whose `problems` list every problem found across all files, each naming the file, the scenario and
the field (`datasets/scenarios/temporal.yaml: scenario 'temporal': queries[1].rank_before.before:
unknown thought id 'x' ...`). Nothing runs on an invalid dataset. Decisions where the SPEC is silent:

- Scenario files are the directory's files with a scenario suffix, in file-name order. Hidden files
  and Markdown notes (`*.md`) are ignored; any other file there is a problem (a typo such as
  `temporal.yam` must not silently drop a scenario). Sub-directories are not searched.
- Files are UTF-8 (a leading BOM is allowed). YAML is read with a safe loader that rejects duplicate
  keys and keeps dates as strings (so `created_at: 2024-05-01` means midnight UTC that day, never a
  `date` object); JSON objects with duplicate keys are rejected too. `created_at` must be a string
  in a file: a bare number would otherwise be read as a Unix timestamp.
- Shape problems (pydantic) are reported first; cross-reference checks run only on scenarios whose
  shape is valid, so fixing shape problems may reveal more. Duplicate scenario names are checked on
  every file that names its scenario, valid or not.
- References (edges, relevant, forbid, rank_before, grades) may name the scenario's thoughts (those
  marked `distractor: true` included) and, when `distractors: true`, the shared distractors.
  Beyond the SPEC's list the loader also rejects what the store or the metrics would reject or
  silently misread: edges from a thought to itself, duplicate edges, an id listed twice in
  `relevant`/`forbid`, `rank_before` with before == after, grades below 1 or for ids not in
  `relevant`, and a query `project` that holds none of the scenario's thoughts (the query would
  search an empty corpus).
- A missing distractors file is a problem only when some scenario asks for distractors.
- `distractors_created_at` must be a readable date, and is a problem on a scenario with
  `distractors: false` (there is nothing to re-date).
- The whole directory is validated and digested even when `names` selects a subset.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import types
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from evalkit.errors import DatasetError
from evalkit.model import Edge, Thought
from evalkit.scenarios import BUILTIN_CATEGORIES, QuerySpec, Scenario, ThoughtSpec

SCENARIO_SUFFIXES: tuple[str, ...] = (".yaml", ".yml", ".json")
"""File suffixes read as scenario (and distractor) files."""

SCENARIOS_SUBDIR = "scenarios"
"""Sub-directory of the dataset directory holding one scenario per file."""

DISTRACTORS_STEM = "distractors"
"""File name (without suffix) of the shared distractors file in the dataset directory."""

_IGNORED_SUFFIXES = (".md",)

_OFFSET = re.compile(r"^([+-])(\d+(?:\.\d+)?)([mhdw])$")
_OFFSET_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_PROBE_CLOCK = datetime(2000, 1, 1, tzinfo=UTC)
"""The clock dates are resolved against when validating: any clock shows whether a date reads."""

_DATE_HELP = (
    "use an ISO-8601 date-time such as 2024-05-01T09:30:00Z, or an offset from the run's clock "
    "such as -30d, -12h, -90m, -2w or +1d"
)


@dataclass(frozen=True)
class Suite:
    """A validated scenario dataset.

    `scenarios` are in file-name order; `sources` maps each scenario name to the file it came from;
    `distractors` are the shared distractor thoughts; `digest` is a sha256 (hex) over the relative
    path and bytes of every file read, sorted by path, identifying the dataset in reports.
    """

    scenarios: tuple[Scenario, ...]
    sources: Mapping[str, Path]
    distractors: tuple[ThoughtSpec, ...]
    digest: str


class _DistractorFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    thoughts: list[ThoughtSpec]


# ---------------------------------------------------------------------------------------- public API


def load_suite(directory: str | Path = "datasets", names: Sequence[str] | None = None) -> Suite:
    """Read, validate and return the dataset in `directory` (see the module docstring).

    `names` selects scenarios by name (kept in file order; a single string counts as one name);
    None selects all. Raises DatasetError listing every problem when the dataset is invalid, and
    DatasetError naming the available scenarios when a selected name does not exist.
    """
    root = Path(directory)
    if not root.is_dir():
        raise DatasetError(
            f"no scenario dataset at {root}",
            [
                f"{root}: directory not found; pass the directory holding "
                f"{SCENARIOS_SUBDIR}/ and distractors.yaml"
            ],
        )
    reader = _Reader(root)
    distractors = _load_distractors(reader)
    entries = _load_scenario_files(reader)
    _check_duplicate_names(entries, reader)
    for entry in entries:
        if entry.scenario is not None:
            reader.add(entry.path, _scenario_problems(entry.scenario, distractors), entry.label)
    if distractors is None and reader.distractors_missing:
        wanting = [e.scenario.name for e in entries if e.scenario is not None and e.scenario.distractors]
        if wanting:
            reader.add(
                root / (DISTRACTORS_STEM + ".yaml"),
                [
                    f"file not found, but scenario(s) {', '.join(wanting)} ask for shared distractors "
                    "(distractors: true is the default); add the file or set distractors: false there"
                ],
            )
    problems = reader.sorted_problems()
    if problems:
        raise DatasetError(
            f"{root}: {len(problems)} problem(s) in the scenario dataset; fix them, nothing was run", problems
        )
    valid = [(e.scenario, e.path) for e in entries if e.scenario is not None]
    selected = _select(valid, names)
    return Suite(
        scenarios=tuple(s for s, _ in selected),
        sources=types.MappingProxyType({s.name: path for s, path in selected}),
        distractors=tuple(distractors or ()),
        digest=reader.digest(),
    )


def resolve_created_at(value: str | datetime | None, clock: datetime) -> datetime:
    """The UTC datetime a `created_at` value denotes for a run whose clock reads `clock`.

    None → `clock`. A datetime or ISO-8601 string is taken as is (naive → UTC). An offset
    `[+-]<number><unit>` with unit m (minutes), h (hours), d (days) or w (weeks), e.g. `-30d`,
    `-1.5h`, `+1d`, is added to `clock`; the sign is required. A naive `clock` counts as UTC.
    Anything else raises DatasetError saying which forms are accepted.
    """
    now = _as_utc(clock)
    if value is None:
        return now
    if isinstance(value, datetime):
        return _as_utc(value)
    if isinstance(value, str):
        text = value.strip()
        offset = _OFFSET.match(text)
        try:
            if offset:
                sign = 1.0 if offset[1] == "+" else -1.0
                return now + timedelta(**{_OFFSET_UNITS[offset[3]]: sign * float(offset[2])})
            return _as_utc(datetime.fromisoformat(text))
        except OverflowError:
            raise DatasetError(f"created_at {value!r} is out of range; {_DATE_HELP}") from None
        except ValueError:
            pass
    raise DatasetError(f"cannot read created_at {value!r}; {_DATE_HELP}")


def own_ids(scenario: Scenario) -> frozenset[str]:
    """The ids of the scenario's own thoughts: those in its file not marked `distractor: true`
    (the shared distractors are never its own)."""
    return frozenset(t.id for t in scenario.thoughts if not t.distractor)


def seed_thoughts(scenario: Scenario, distractors: Sequence[ThoughtSpec], clock: datetime) -> list[Thought]:
    """The thoughts to seed for `scenario`, in order: the thoughts of its file in file order
    (`distractor: true` ones included), then `distractors` when `scenario.distractors` is true,
    each dated `scenario.distractors_created_at` when that is set. `created_at` is resolved
    against `clock` (see `resolve_created_at`), so every thought carries a UTC datetime."""
    shared = list(distractors) if scenario.distractors else []
    if scenario.distractors_created_at is not None:
        shared = [t.model_copy(update={"created_at": scenario.distractors_created_at}) for t in shared]
    specs = list(scenario.thoughts) + shared
    return [
        Thought(
            id=t.id,
            content=t.content,
            project=t.project,
            status=t.status,
            created_at=resolve_created_at(t.created_at, clock),
            is_cluster=t.is_cluster,
            is_global=t.is_global,
            importance=t.importance,
        )
        for t in specs
    ]


def seed_edges(scenario: Scenario) -> list[Edge]:
    """The scenario's edges in file order, to seed after all its thoughts."""
    return [Edge(e.source, e.target, e.type) for e in scenario.edges]


def _scenario_problems(scenario: Scenario, distractors: Sequence[ThoughtSpec] | None) -> list[str]:
    """Cross-reference problems of one shape-valid scenario, each as `<field>: <message>`.

    `distractors` are the shared distractors, or None when they are unknown (the distractors file
    is missing or invalid): references that might point at a distractor are then not judged.
    Checks: category, thought ids (duplicates, clashes with distractors), created_at,
    distractors_created_at, edges, and every query's relevant / forbid / rank_before / grades /
    project / no_relevant.
    """
    problems: list[str] = []
    if scenario.category not in BUILTIN_CATEGORIES:
        problems.append(
            f"category: unknown category {scenario.category!r}; use one of: {', '.join(BUILTIN_CATEGORIES)}"
        )
    distractor_ids = None if distractors is None else frozenset(t.id for t in distractors)
    problems.extend(_thought_problems(scenario.thoughts, distractor_ids if scenario.distractors else None))
    problems.extend(_distractors_created_at_problems(scenario))
    resolver = _Resolver(scenario, distractor_ids)
    problems.extend(_edge_problems(scenario, resolver))
    projects = {t.project for t in scenario.thoughts}
    if scenario.distractors:
        projects |= {t.project for t in distractors or ()}
    for qi, query in enumerate(scenario.queries):
        problems.extend(_query_problems(f"queries[{qi}]", query, resolver, projects))
    return problems


def _query_problems(where: str, query: QuerySpec, resolver: _Resolver, projects: set[str]) -> list[str]:
    """Problems of one query located at `where`; `projects` are the projects seeded for it."""
    problems = _relevance_problems(where, query.relevant, query.forbid, query.no_relevant, resolver)
    if query.rank_before is not None:
        rb = query.rank_before
        problems.extend(resolver.check(f"{where}.rank_before.before", rb.before))
        problems.extend(resolver.check(f"{where}.rank_before.after", rb.after))
        if rb.before == rb.after:
            problems.append(
                f"{where}.rank_before: before and after are both {rb.before!r}; name two thoughts"
            )
    for ref, grade in query.grades.items():
        field = f"{where}.grades[{ref!r}]"
        unresolved = resolver.check(field, ref)
        problems.extend(unresolved)
        if grade < 1:
            problems.append(f"{field}: grade {grade} must be >= 1; leave non-relevant ids out of grades")
        if not unresolved and ref not in query.relevant:
            problems.append(
                f"{field}: {ref!r} has a grade but is not in relevant; add it there or drop the grade"
            )
    if query.include_global and query.project is None:
        problems.append(
            f"{where}.include_global: only means something with a project filter (no project already "
            "searches every project); set project or drop include_global"
        )
    if query.project is not None and query.project not in projects and resolver.judged:
        problems.append(
            f"{where}.project: no thought of this scenario is in project {query.project!r}, so the query "
            f"would search an empty corpus; use one of: {', '.join(sorted(projects))}"
        )
    return problems


# ---------------------------------------------------------------------------------------- reading files


@dataclass(frozen=True)
class _Entry:
    path: Path
    raw_name: str | None
    scenario: Scenario | None

    @property
    def label(self) -> str:
        return f"scenario {self.raw_name!r}" if self.raw_name is not None else "scenario <unnamed>"


class _Reader:
    """Reads dataset files once, remembering their bytes (for the digest) and every problem."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.distractors_missing = False
        self._problems: list[tuple[str, str]] = []
        self._blobs: dict[str, bytes] = {}

    def add(self, path: Path, problems: Iterable[str], label: str | None = None) -> int:
        """Record problems of `path` (each `<field>: <message>` or a whole-file message), prefixed
        with the path and `label` (e.g. "scenario 'temporal'"). Returns how many were added."""
        prefix = f"{path}: " + (f"{label}: " if label else "")
        added = [(str(path), prefix + p) for p in problems]
        self._problems.extend(added)
        return len(added)

    def sorted_problems(self) -> list[str]:
        """Every problem, grouped by file in path order, in the order found within a file."""
        return [text for _, text in sorted(self._problems, key=lambda item: item[0])]

    def parse(self, path: Path) -> tuple[bool, Any]:
        """(ok, data) for one file; on failure the problem is recorded and ok is False."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            self.add(path, [f"cannot read the file ({exc.strerror or exc})"])
            return False, None
        self._blobs[path.relative_to(self.root).as_posix()] = data
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            self.add(
                path,
                [f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8"],
            )
            return False, None
        try:
            parsed = _parse_json(text) if path.suffix == ".json" else _parse_yaml(text)
        except _SyntaxProblem as exc:
            self.add(path, [str(exc)])
            return False, None
        if not isinstance(parsed, dict):
            what = "empty" if parsed is None else f"a {type(parsed).__name__}"
            self.add(path, [f"the file is {what}; it must hold one mapping (key: value pairs)"])
            return False, None
        return True, parsed

    def digest(self) -> str:
        """sha256 over (relative posix path, NUL, byte length, NUL, bytes) of every file read, by path."""
        h = hashlib.sha256()
        for rel in sorted(self._blobs):
            blob = self._blobs[rel]
            h.update(rel.encode("utf-8") + b"\0" + str(len(blob)).encode("ascii") + b"\0")
            h.update(blob)
        return h.hexdigest()


def _load_distractors(reader: _Reader) -> list[ThoughtSpec] | None:
    """The shared distractors, or None when their file is absent (`reader.distractors_missing` is
    then set; only scenarios that want distractors make that a problem) or invalid (reported)."""
    found = [p for s in SCENARIO_SUFFIXES if (p := reader.root / (DISTRACTORS_STEM + s)).is_file()]
    if not found:
        reader.distractors_missing = True
        return None
    if len(found) > 1:
        reader.add(
            reader.root, [f"several distractor files ({', '.join(p.name for p in found)}); keep exactly one"]
        )
        return None
    path = found[0]
    ok, data = reader.parse(path)
    if not ok:
        return None
    found_problems = reader.add(path, _raw_date_problems(data))
    try:
        spec = _DistractorFile.model_validate(data)
    except ValidationError as exc:
        reader.add(path, _pydantic_problems(exc, _DistractorFile))
        return None
    found_problems += reader.add(path, _thought_problems(spec.thoughts, None))
    return None if found_problems else list(spec.thoughts)


def _load_scenario_files(reader: _Reader) -> list[_Entry]:
    """One entry per scenario file that parses to a mapping (its scenario None when invalid)."""
    folder = reader.root / SCENARIOS_SUBDIR
    if not folder.is_dir():
        reader.add(folder, ["directory not found; put one scenario per .yaml/.yml/.json file there"])
        return []
    paths = []
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if path.name.startswith(".") or path.is_dir() or path.suffix in _IGNORED_SUFFIXES:
            continue
        if path.suffix in SCENARIO_SUFFIXES:
            paths.append(path)
        else:
            reader.add(
                path, [f"not a scenario file; rename it to end in {', '.join(SCENARIO_SUFFIXES)} or move it"]
            )
    if not paths:
        reader.add(folder, ["no scenario files; add one .yaml/.yml/.json file per scenario"])
    entries = []
    for path in paths:
        ok, data = reader.parse(path)
        if not ok:
            continue
        entry = _Entry(path, data.get("name") if isinstance(data.get("name"), str) else None, None)
        reader.add(path, _raw_date_problems(data), entry.label)
        try:
            entry = replace(entry, scenario=Scenario.model_validate(data))
        except ValidationError as exc:
            reader.add(path, _pydantic_problems(exc, Scenario), entry.label)
        entries.append(entry)
    return entries


class _SyntaxProblem(Exception):
    """A file that does not parse; the message says where and why."""


class _StrictYamlLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys and leaves dates and times as strings."""


_StrictYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _construct_unique_mapping(loader: _StrictYamlLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    first_line: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            line = first_line.setdefault(key, key_node.start_mark.line + 1)
        except TypeError:
            continue  # unhashable key: construct_mapping reports it
        if line != key_node.start_mark.line + 1:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first given on line {line})", key_node.start_mark
            )
    return loader.construct_mapping(node, deep=True)


_StrictYamlLoader.add_constructor("tag:yaml.org,2002:map", _construct_unique_mapping)


def _parse_yaml(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_StrictYamlLoader)
    except yaml.MarkedYAMLError as exc:
        where = f" at {_mark(exc.problem_mark)}" if exc.problem_mark is not None else ""
        message = f"YAML syntax error{where}: {exc.problem or exc.context}"
        if exc.problem and exc.context:
            started = f" started at {_mark(exc.context_mark)}" if exc.context_mark is not None else ""
            message += f" ({exc.context}{started})"
        raise _SyntaxProblem(message) from None
    except yaml.YAMLError as exc:
        raise _SyntaxProblem(f"YAML syntax error: {exc}") from None


def _mark(mark: yaml.Mark) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


class _DuplicateJsonKey(ValueError):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateJsonKey(key)
        out[key] = value
    return out


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_unique_object)
    except json.JSONDecodeError as exc:
        raise _SyntaxProblem(
            f"JSON syntax error at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except _DuplicateJsonKey as exc:
        raise _SyntaxProblem(f"JSON error: duplicate key {exc.args[0]!r} in one object") from None


def _raw_date_problems(data: Mapping[str, Any]) -> list[str]:
    """Dates that are not strings (pydantic would read a number as a Unix timestamp): each
    thought's created_at and a scenario's distractors_created_at."""
    thoughts = data.get("thoughts")
    dates = [("distractors_created_at", data.get("distractors_created_at"))]
    if isinstance(thoughts, list):
        dates += [
            (f"thoughts[{i}].created_at", t.get("created_at"))
            for i, t in enumerate(thoughts)
            if isinstance(t, dict)
        ]
    return [
        f"{field}: {value!r} is not a string; {_DATE_HELP} (quoted in YAML)"
        for field, value in dates
        if value is not None and not isinstance(value, str)
    ]


# ---------------------------------------------------------------------------------------- pydantic errors


def _pydantic_problems(exc: ValidationError, model: type[BaseModel]) -> list[str]:
    """Each pydantic error as `<field path>: <message with the fix>`."""
    out = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        kind = err["type"]
        given = repr(err.get("input"))
        given = given if len(given) <= 60 else given[:57] + "..."
        if kind == "extra_forbidden":
            key = str(loc[-1])
            allowed = _fields_at(model, loc[:-1])
            msg = f"unknown key {key!r}{_did_you_mean(key, allowed)}"
            msg += f"; allowed keys: {', '.join(allowed)}" if allowed else ""
        elif kind == "missing":
            msg = f"required key {loc[-1]!r} is missing"
        elif kind == "string_pattern_mismatch" and loc == ("name",):
            msg = (
                f"scenario name {err.get('input')!r} is not kebab-case; use lower-case letters and digits "
                "in words joined by single hyphens, e.g. 'explicit-fact'"
            )
        else:
            msg = f"{err['msg']} (got {given})"
        out.append(f"{_field_path(model, loc)}: {msg}")
    return out


def _options(annotation: Any) -> tuple[Any, ...]:
    """The members of a union annotation (`X | None`), or the annotation itself."""
    if get_origin(annotation) in (Union, types.UnionType):
        return get_args(annotation)
    return (annotation,)


def _step(annotation: Any, part: str | int) -> Any:
    """The annotation one location step below `annotation`, or None when unknown."""
    for option in _options(annotation):
        if isinstance(option, type) and issubclass(option, BaseModel) and isinstance(part, str):
            field = option.model_fields.get(part)
            return None if field is None else field.annotation
        origin, args = get_origin(option), get_args(option)
        if origin is list and isinstance(part, int):
            return args[0]
        if origin is dict:
            return args[1]
    return None


def _is_dict(annotation: Any) -> bool:
    return any(get_origin(option) is dict for option in _options(annotation))


def _field_path(model: type[BaseModel], loc: tuple[str | int, ...]) -> str:
    """`queries[1].rank_before.before`, `queries[0].grades['a']`; '<top level>' for ()."""
    path = ""
    annotation: Any = model
    for part in loc:
        if part == "[key]":
            path += " (key)"
            continue
        if _is_dict(annotation) or (isinstance(part, str) and not part.isidentifier()):
            path += f"[{part!r}]"
        elif isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else part
        annotation = _step(annotation, part)
    return path or "<top level>"


def _fields_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    annotation: Any = model
    for part in loc:
        annotation = _step(annotation, part)
    for option in _options(annotation):
        if isinstance(option, type) and issubclass(option, BaseModel):
            return list(option.model_fields)
    return []


# ---------------------------------------------------------------------------------------- cross-references


class _Resolver:
    """Judges references to thought ids from inside one scenario. With `distractor_ids` None (the
    distractors file is missing or invalid) a reference that may name a distractor is not judged;
    `judged` says whether every reference can be judged."""

    def __init__(self, scenario: Scenario, distractor_ids: frozenset[str] | None) -> None:
        self.scenario_ids = frozenset(t.id for t in scenario.thoughts)
        self.distractor_ids = distractor_ids
        self.uses_distractors = scenario.distractors
        self.judged = distractor_ids is not None or not scenario.distractors

    def check(self, field: str, ref: str) -> list[str]:
        if ref in self.scenario_ids:
            return []
        if self.distractor_ids is None:
            return [] if self.uses_distractors else [self._unknown(field, ref)]
        if ref in self.distractor_ids:
            if self.uses_distractors:
                return []
            return [
                f"{field}: {ref!r} is a shared distractor, but this scenario sets distractors: false; "
                "set distractors: true or reference one of its own thoughts"
            ]
        return [self._unknown(field, ref)]

    def _unknown(self, field: str, ref: str) -> str:
        where = (
            "the scenario's thoughts or the distractors"
            if self.uses_distractors
            else "the scenario's thoughts"
        )
        return f"{field}: unknown thought id {ref!r} (not in {where})"


def _thought_problems(thoughts: Sequence[ThoughtSpec], distractor_ids: frozenset[str] | None) -> list[str]:
    """Duplicate ids, ids clashing with the distractors (when given) and unreadable created_at."""
    problems = []
    first: dict[str, int] = {}
    for i, t in enumerate(thoughts):
        if t.id in first:
            problems.append(
                f"thoughts[{i}].id: duplicate thought id {t.id!r} (also thoughts[{first[t.id]}].id)"
            )
        first.setdefault(t.id, i)
        if distractor_ids is not None and t.id in distractor_ids:
            problems.append(
                f"thoughts[{i}].id: {t.id!r} is also a shared distractor id; "
                "rename it or set distractors: false"
            )
        try:
            resolve_created_at(t.created_at, _PROBE_CLOCK)
        except DatasetError as exc:
            problems.append(f"thoughts[{i}].created_at: {exc}")
    return problems


def _distractors_created_at_problems(scenario: Scenario) -> list[str]:
    """An unreadable `distractors_created_at`, or one set where no shared distractor is seeded."""
    if scenario.distractors_created_at is None:
        return []
    if not scenario.distractors:
        return [
            "distractors_created_at: this scenario sets distractors: false, so there are no shared "
            "distractors to re-date; drop distractors_created_at or set distractors: true"
        ]
    try:
        resolve_created_at(scenario.distractors_created_at, _PROBE_CLOCK)
    except DatasetError as exc:
        return [f"distractors_created_at: {exc}"]
    return []


def _edge_problems(scenario: Scenario, resolver: _Resolver) -> list[str]:
    problems = []
    first: dict[tuple[str, str, str], int] = {}
    for i, e in enumerate(scenario.edges):
        problems.extend(resolver.check(f"edges[{i}].source", e.source))
        problems.extend(resolver.check(f"edges[{i}].target", e.target))
        if e.source == e.target:
            problems.append(
                f"edges[{i}]: {e.type} edge from {e.source!r} to itself; an edge links two thoughts"
            )
        key = (e.source, e.target, e.type)
        if key in first:
            problems.append(f"edges[{i}]: duplicate of edges[{first[key]}] (same source, target and type)")
        first.setdefault(key, i)
    return problems


def _relevance_problems(
    where: str, relevant: Sequence[str], forbid: Sequence[str], no_relevant: bool, resolver: _Resolver
) -> list[str]:
    problems = []
    for name, ids in (("relevant", relevant), ("forbid", forbid)):
        seen: set[str] = set()
        for i, ref in enumerate(ids):
            field = f"{where}.{name}[{i}]"
            problems.extend(resolver.check(field, ref))
            if ref in seen:
                problems.append(f"{field}: {ref!r} is listed twice")
            seen.add(ref)
            if name == "forbid" and ref in relevant:
                problems.append(
                    f"{field}: {ref!r} is also in relevant; an id cannot be both relevant and forbidden"
                )
    if relevant and no_relevant:
        problems.append(
            f"{where}.no_relevant: no_relevant is true but relevant lists ids; keep one of the two"
        )
    if not relevant and not no_relevant:
        problems.append(
            f"{where}.relevant: no relevant ids; list the thought ids this query should retrieve, "
            "or set no_relevant: true if nothing should match"
        )
    return problems


def _check_duplicate_names(entries: Iterable[_Entry], reader: _Reader) -> None:
    first: dict[str, Path] = {}
    for e in entries:
        if e.raw_name is None:
            continue
        if e.raw_name in first:
            reader.add(
                e.path,
                [f"name: duplicate scenario name, also used by {first[e.raw_name]}; names must be unique"],
                e.label,
            )
        first.setdefault(e.raw_name, e.path)


def _select(
    valid: Sequence[tuple[Scenario, Path]], names: Sequence[str] | None
) -> list[tuple[Scenario, Path]]:
    if names is None:
        return list(valid)
    wanted = [names] if isinstance(names, str) else list(names)
    available = [s.name for s, _ in valid]
    unknown = [n for n in dict.fromkeys(wanted) if n not in available]
    if unknown or not wanted:
        problems = [f"unknown scenario {n!r}{_did_you_mean(n, available)}" for n in unknown] or [
            "no scenario name given; pass None to select every scenario"
        ]
        raise DatasetError(f"cannot select scenarios; available: {', '.join(available)}", problems)
    return [(s, path) for s, path in valid if s.name in wanted]


def _did_you_mean(word: str, options: Sequence[str]) -> str:
    """' (did you mean 'x'?)' for the closest option, or ''."""
    hint = difflib.get_close_matches(word, options, n=1)
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def _as_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
