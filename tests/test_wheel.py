"""The wheel is enough: the `evalkit-memory` wheel, built from this source tree and installed into
a fresh virtual environment outside the repository, carries every module of the package and the
top-level datasets/ and notebooks/ mapped into it (evalkit/data/...), finds them there
(evalkit.packaged), and `evalkit --version`, `evalkit run`, `evalkit report`, `evalkit mutants`,
`evalkit init x && cd x && evalkit run`, `evalkit notebooks nb` and `evalkit summary` all exit 0
from an unrelated folder with PYTHONPATH unset; `evalkit baseline record` there refuses to write
the installed package's baselines.

How the environment is made, and why: the wheel is built with `pip wheel --no-deps
--no-build-isolation` from a copy of the source tree (no network, nothing written into the
checkout). The fresh venv gets the wheel with `pip install --no-deps --no-index`; its
dependencies (pandas, papermill, ipykernel, ...) are not downloaded again but made visible by one
`.pth` line naming this environment's site-packages. A `.pth` line only appends that folder to
`sys.path` (after the venv's own site-packages, and without running the `.pth` files inside it),
so `import evalkit` finds the installed wheel, never this checkout or an editable install —
the test asserts that too. Dependencies also install data files under their environment's
`share/jupyter` (nbconvert's HTML templates, ipykernel's kernelspec); JUPYTER_PATH points there,
where a `pip install` of them into the fresh venv would have put them under its own prefix.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.shared import ROOT

_NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "reports", ".*_cache", ".hypothesis"
)
SOURCE_DATA = {"datasets": "evalkit/data/datasets", "notebooks": "evalkit/data/notebooks"}
"""Top-level folder of the checkout → where the wheel carries it."""
PACKAGE_DATA = [
    "evalkit/py.typed",
    "evalkit/data/datasets/suite.yaml",
    "evalkit/data/datasets/distractors.yaml",
    "evalkit/data/datasets/thresholds.json",
    "evalkit/data/datasets/scenarios/temporal.yaml",
    "evalkit/data/datasets/mcp/reference.toml",
    "evalkit/data/datasets/packs/deletion-ghosts/suite.yaml",
    "evalkit/data/datasets/packs/deletion-ghosts/scenarios/forget-api-key.yaml",
    "evalkit/data/notebooks/eval_report.ipynb",
    "evalkit/data/notebooks/scenario_drilldown.ipynb",
    "evalkit/data/templates/evalkit.toml",
    "evalkit/data/templates/scenarios/example.yaml",
    "evalkit/data/templates/github/workflows/evalkit.yml",
    "evalkit/data/templates/github/workflows/evalkit-baseline.yml",
]


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (
        f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(bin folder of a fresh venv holding only the evalkit wheel, an environment without PYTHONPATH)."""
    base = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=_NOT_SOURCE)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    dist = base / "dist"
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(source)], base, env)
    (wheel,) = dist.glob("evalkit_memory-0.1.0-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert [name for name in PACKAGE_DATA if name not in names] == []
    modules = {path.relative_to(source).as_posix() for path in (source / "evalkit").rglob("*.py")}
    assert sorted(modules - names) == []
    mapped = {
        f"{inside}/{path.relative_to(source / top).as_posix()}"
        for top, inside in SOURCE_DATA.items()
        for path in (source / top).rglob("*")
        if path.is_file() and ".ipynb_checkpoints" not in path.parts
    }
    assert sorted(mapped - names) == []
    assert not {name for name in names if name.split("/")[0] in SOURCE_DATA}  # mapped, not copied beside
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], base, env)
    (purelib,) = {Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])}
    (purelib / "shared-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    venv_pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    _run([*venv_pip, "install", "-q", "--no-deps", "--no-index", str(wheel)], base, env)
    return venv / "bin", env


def test_the_installed_wheel_runs_every_command_from_an_unrelated_folder(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bin_dir, env = installed
    evalkit = str(bin_dir / "evalkit")
    where = _run([str(bin_dir / "python"), "-c", "import evalkit; print(evalkit.__file__)"], tmp_path, env)
    assert where.stdout.strip().startswith(str(bin_dir.parent)), where.stdout
    found = _run(
        [
            str(bin_dir / "python"),
            "-c",
            "from evalkit import packaged as p; print(p.BUILTIN_DATASETS, p.NOTEBOOKS)",
        ],
        tmp_path,
        env,
    ).stdout.split()
    package = Path(where.stdout.strip()).parent
    assert found == [str(package / "data" / "datasets"), str(package / "data" / "notebooks")]
    assert _run([evalkit, "--version"], tmp_path, env).stdout.strip() == "evalkit 0.1.0"
    run = _run([evalkit, "run"], tmp_path, env)
    assert "No gating regressions." in run.stdout and (tmp_path / "reports" / "report.json").is_file()
    _run([evalkit, "report", "--no-progress"], tmp_path, env)
    assert "No gating regressions." in (tmp_path / "reports" / "eval_report.html").read_text(encoding="utf-8")
    mutants = _run([evalkit, "mutants", "--mutation", "vector-leg-off"], tmp_path, env)
    assert "vector-leg-off" in mutants.stdout
    update = subprocess.run(
        [evalkit, "baseline", "record"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert update.returncode == 2 and "evalkit init DIR" in update.stderr, update.stderr
    _run([evalkit, "init", "x"], tmp_path, env)
    inside = _run([evalkit, "run"], tmp_path / "x", env)
    assert "baseline check OFF: no baseline for deterministic at top_k 5" in inside.stdout
    assert (tmp_path / "x" / "reports" / "report.json").is_file()
    assert (tmp_path / "x" / "notebooks" / "eval_report.ipynb").is_file()
    _run([evalkit, "notebooks", "nb"], tmp_path, env)
    assert sorted(p.name for p in (tmp_path / "nb").iterdir()) == [
        "compare_runs.ipynb",
        "eval_report.ipynb",
        "scenario_drilldown.ipynb",
        "traces.ipynb",
    ]
    summary = _run([evalkit, "summary", "reports/report.json"], tmp_path, env)
    assert summary.stdout.startswith("## evalkit: PASS")
