"""A report notebook's parameters: what its `parameters` cell declares, and the values given to
them — on evalkit's command line (`-p KEY VALUE`), by a caller of `run_notebook`, or injected by
plain papermill.

Declarations: one annotated literal per line of the cell tagged `parameters`,
`top_k: int = 5  # results per query`. Annotations may be `int`, `float`, `bool`, `str` or a union
of them with `None` (`float | None`, `Optional[float]`), optionally quoted (read as the canonical
`float | None`). A help comment starting with "path" marks a path parameter.

Checks, all problems in one UsageError (one line each) naming the notebook, the parameter and
what it accepts: a parameter the notebook does not declare ("did you mean" when one is close), a
value of the wrong type (int is
accepted for float; bool is never an int). `check_parameters` runs them inside the kernel, as a
notebook's first cell after its imports: papermill itself only warns about an unknown `-p`, and a
wrong type would otherwise fail deep inside a later cell with a long traceback.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import ReportError, UsageError, listed
from evalkit.validation import did_you_mean
from evalkit.wording import counted

_TYPES: dict[str, type | None] = {"int": int, "float": float, "bool": bool, "str": str, "None": None}
_NONE_WORDS = ("none", "null")
_BOOL_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}

INJECTED_MARK = "# Parameters"
"""The first line of the cell papermill injects after the `parameters` cell (its Python
translator's comment); its assignments are the injected parameters."""


@dataclass(frozen=True, slots=True)
class Parameter:
    """One declared notebook parameter: name, annotation text, default value and help comment."""

    name: str
    annotation: str
    default: object
    help: str

    @property
    def types(self) -> tuple[type | None, ...]:
        """The accepted types, in annotation order (None stands for the value None)."""
        return tuple(_TYPES[part.strip()] for part in self.annotation.split("|"))

    @property
    def is_path(self) -> bool:
        """A path parameter: its help comment starts with "path"."""
        return self.help.lower().startswith("path")


class NotebookParameterError(UsageError):
    """A parameter given to a notebook that it does not declare, or a value of the wrong type.
    Inside a kernel its traceback is its one line (IPython's `_render_traceback_`)."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


def parse_parameters_cell(path: Path, source: str) -> dict[str, Parameter]:
    """The parameters `source` (the cell tagged `parameters` of the notebook at `path`) declares,
    in cell order. ReportError when a line is not `name: type = literal  # help` with a
    supported type."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ReportError(f"{path}: the parameters cell is not valid Python: {exc}") from exc
    comments = {
        tok.start[0]: tok.string.lstrip("#").strip()
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    }
    found: dict[str, Parameter] = {}
    for node in tree.body:
        line = ast.get_source_segment(source, node) or ""
        if not (
            isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None
        ):
            raise ReportError(
                f"{path}: parameters cell line {node.lineno}: expected `name: type = value`, got {line!r}"
            )
        name, annotation = node.target.id, annotation_text(node.annotation)
        if any(part.strip() not in _TYPES for part in annotation.split("|")):
            raise ReportError(
                f"{path}: parameter {name!r} has type {annotation!r}; use int, float, bool, str, "
                "or one of them `| None`"
            )
        try:
            default = ast.literal_eval(node.value)
        except ValueError as exc:
            raise ReportError(
                f"{path}: parameter {name!r}: the default must be a literal, got {line!r}"
            ) from exc
        found[name] = Parameter(name, annotation, default, comments.get(node.lineno, ""))
    return found


def annotation_text(node: ast.expr) -> str:
    """The annotation as `float | None` text: a quoted annotation is parsed, `Optional[X]`
    becomes `X | None` and `Union[X, Y]` becomes `X | Y` (the forms papermill's parser reads);
    anything else is returned as written (and rejected by the caller)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
        try:
            node = ast.parse(text, mode="eval").body
        except SyntaxError:
            return text
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        members = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if node.value.id == "Optional" and len(members) == 1:
            return f"{annotation_text(members[0])} | None"
        if node.value.id == "Union":
            return " | ".join(annotation_text(member) for member in members)
    return ast.unparse(node)


def unknown_names(
    declared: Mapping[str, Parameter], names: Iterable[str], notebook: str | Path
) -> str | None:
    """The problem naming every name of `names` that `declared` lacks (each with "did you mean"
    when one is close) and listing the declared ones; None when it declares them all."""
    unknown = [n for n in names if n not in declared]
    if not unknown:
        return None
    listing = "; ".join(
        f"{p.name} ({p.annotation})" + (f": {p.help}" if p.help else "") for p in declared.values()
    )
    noun = "parameter" if len(unknown) == 1 else "parameters"
    named = ", ".join(repr(n) + did_you_mean(n, list(declared)) for n in unknown)
    return f"{Path(notebook).name} does not declare {noun} {named}; it declares: {listing}"


def parameter_problems(problems: Sequence[str], notebook: str | Path) -> NotebookParameterError:
    """The one error of all the parameter `problems` found for `notebook`: a single one as it is,
    several counted and listed."""
    if len(problems) == 1:
        return NotebookParameterError(problems[0])
    return NotebookParameterError(
        listed(f"{counted(len(problems), 'problem')} with the parameters of {Path(notebook).name}", problems)
    )


def parse_text(parameter: Parameter, text: str, notebook: str | Path) -> object:
    """A command-line value as the declared type: `None`/`null` give None where allowed; booleans
    accept true/false, yes/no, 1/0 (any case). NotebookParameterError when nothing fits."""
    word = text.strip().lower()
    if None in parameter.types and word in _NONE_WORDS:  # before str, which would take any text
        return None
    for kind in parameter.types:
        if kind is bool and word in _BOOL_WORDS:
            return _BOOL_WORDS[word]
        if kind is int or kind is float:
            try:
                return kind(text)
            except ValueError:
                continue
        if kind is str:
            return text
    raise NotebookParameterError(
        f"parameter {parameter.name!r} of {Path(notebook).name} expects {parameter.annotation}, got {text!r}"
    )


def check_value(parameter: Parameter, value: object, notebook: str | Path) -> object:
    """`value` if it fits the declared type (int is accepted for float, Path for str); relative
    paths of path parameters become absolute against the caller's working directory.
    NotebookParameterError otherwise."""
    types = parameter.types
    if isinstance(value, Path) and str in types:
        value = str(value)
    fits = (
        (value is None and None in types)
        or (isinstance(value, bool) and bool in types)
        or (isinstance(value, int) and not isinstance(value, bool) and (int in types or float in types))
        or (isinstance(value, float) and float in types)
        or (isinstance(value, str) and str in types)
    )
    if not fits:
        raise NotebookParameterError(
            f"parameter {parameter.name!r} of {Path(notebook).name} expects {parameter.annotation}, "
            f"got {value!r} ({type(value).__name__})"
        )
    if parameter.is_path and isinstance(value, str):
        return str(Path(value).resolve())
    return value


def check_parameters(namespace: Mapping[str, object], notebook: str = "this notebook") -> dict[str, object]:
    """Inside a notebook's kernel: the parameters papermill injected (the assignments of the
    cells, among those the kernel ran, that begin with `INJECTED_MARK`) are all declared by the
    `parameters` cell (its annotations, `__annotations__` of `namespace`), and every declared
    parameter's current value fits its type. Pass `globals()`; returns the declared parameters'
    values (name → value, in declaration order).

    Raises one NotebookParameterError naming every problem (one line for a single one).
    Outside IPython (no `In`
    history in `namespace`) only the types are checked. A notebook run by `evalkit report` passes
    at once: evalkit checked the same before the kernel started."""
    raw = namespace.get("__annotations__")
    annotations: Mapping[str, object] = raw if isinstance(raw, Mapping) else {}
    declared = {
        name: Parameter(name, _runtime_annotation(value), None, "") for name, value in annotations.items()
    }
    history = namespace.get("In")
    sources = [s for s in history if isinstance(s, str)] if isinstance(history, list) else []
    injected = [
        name for source in sources if source.lstrip().startswith(INJECTED_MARK) for name in _assigned(source)
    ]
    problem = unknown_names(declared, dict.fromkeys(injected), notebook)
    problems = [] if problem is None else [problem]
    for name, parameter in declared.items():
        known = all(part.strip() in _TYPES for part in parameter.annotation.split("|"))
        if known and name in namespace:
            try:
                check_value(parameter, namespace[name], notebook)
            except NotebookParameterError as exc:
                problems.append(str(exc))
    if problems:
        raise parameter_problems(problems, notebook)
    return {name: namespace[name] for name in declared if name in namespace}


def _assigned(source: str) -> list[str]:
    """The names a cell's top-level plain assignments bind (`name = value`), in order."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return []
    return [
        target.id
        for node in body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    ]


def _runtime_annotation(value: object) -> str:
    """An annotation as the kernel holds it (the class `int`, a `float | None` union, or the text
    of a quoted one) as `float | None` text; "?" when it is not one of these."""
    if isinstance(value, type):
        return value.__name__
    try:
        return annotation_text(ast.parse(str(value), mode="eval").body)
    except SyntaxError:
        return "?"
