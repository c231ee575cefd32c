"""Reading benchmark and run files: the pieces every importer shares.

- `read_json_list`: a whole JSON file that must hold a non-empty list (LoCoMo, LongMemEval);
- `json_lines`: a JSON-lines file streamed line by line (BEIR corpus and queries, JSONL runs);
- `slug`: text turned into a kebab-case scenario name.

Every problem names the file (and the line where there is one) and says how to fix it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tqdm import tqdm

from evalkit.errors import DatasetError
from evalkit.progress import progress_enabled


def read_json_list(file: Path, label: str, hint: str, items: str) -> list[Any]:
    """The JSON list in `file`. DatasetError (message "`label` file `file` ...") when the file is
    missing (the fix: `hint`), is not UTF-8, is malformed JSON (line and column named), or is not
    a non-empty list of `items`. The whole file is held in memory."""
    if not file.is_file():
        raise DatasetError(f"{label} file {file} not found; {hint}")
    try:
        with file.open(encoding="utf-8") as handle:
            data = json.load(handle)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"{label} file {file} line {exc.lineno} column {exc.colno}: malformed JSON ({exc.msg}); "
            "fix the file or fetch a fresh copy"
        ) from exc
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{label} file {file} is not UTF-8; re-encode it as UTF-8") from exc
    if not isinstance(data, list) or not data:
        raise DatasetError(f"{label} file {file}: expected a non-empty JSON list of {items}")
    return data


def json_lines(path: Path, problems: list[str], progress: bool | None = False) -> Iterator[tuple[int, Any]]:
    """Yield (1-based line number, parsed value) for each non-blank line of `path`; a line that
    is not UTF-8 or not JSON is recorded in `problems` and skipped. `progress` as in
    `evalkit.progress.progress_enabled` (default off): a byte progress bar on stderr."""
    show = progress_enabled(progress)
    with (
        path.open("rb") as handle,
        tqdm(total=path.stat().st_size, desc=path.name, unit="B", unit_scale=True, disable=not show) as bar,
    ):
        for number, raw in enumerate(handle, start=1):
            bar.update(len(raw))
            if not raw.strip():
                continue
            try:
                yield number, json.loads(raw)
            except UnicodeDecodeError:
                problems.append(f"{path} line {number}: not UTF-8; re-encode the file as UTF-8")
            except RecursionError:  # a traceback (exit 1) before
                problems.append(
                    f"{path} line {number}: JSON nested deeper than Python's limit; fix or remove the line"
                )
            except json.JSONDecodeError as exc:
                problems.append(
                    f"{path} line {number}: malformed JSON ({exc.msg} at column {exc.colno}); "
                    "fix or remove the line (one JSON object per line)"
                )


def slug(text: str) -> str:
    """`text` lower-cased with every run of characters outside [a-z0-9] turned into one "-" and
    no "-" at either end ("gpt4_2655b836" → "gpt4-2655b836"); "" when nothing is left."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
