"""What the fault-matrix families share: the tiny scenario, the CLI arguments and the refusal check.

Each case asserts the exit code (2 for bad input, usage or an output that cannot be written; 130
for Ctrl-C, 143 for SIGTERM), the message (it names the file or item and the fix), that no
traceback is printed, and that nothing was left behind (temp files, stores, lock files) or lost
(the report, the thresholds file and its permissions). Families: bad scenario files, thresholds
files, CLI usage, output paths, signals (subprocesses), the embedding cache, library systems.
Everything runs in-process through `evalkit.cli.main` except what needs a signal.
"""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

from tests.shared import cli

TINY = """\
name: tiny
category: explicit-fact
distractors: false
thoughts:
  - {id: port, content: The billing API listens on port 8443.}
  - {id: logs, content: Billing logs are written to /var/log/billing.}
  - {id: owner, content: The payments team owns the billing API.}
  - {id: db, content: Billing stores invoices in Postgres.}
  - {id: cron, content: Invoices are mailed every Monday morning.}
  - {id: ttl, content: The session cache TTL is five minutes.}
queries:
  - {query: "Which port does the billing API listen on?", relevant: [port]}
"""

HEAD = "name: bad\ncategory: explicit-fact\ndistractors: false\n"
THOUGHTS = "thoughts:\n  - {id: a, content: alpha}\nqueries:\n  - {query: alpha, relevant: [a]}\n"


def snapshot(folder: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every path under `folder` with its bytes (None for folders and pipes) and mode."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None, stat.S_IMODE(p.lstat().st_mode))
        for p in sorted(folder.rglob("*"))
    }


def run_args(*extra: str) -> list[str]:
    return [
        "run",
        "--datasets",
        "data",
        "--thresholds",
        "data/thresholds.json",
        "--gated-pass",
        "off",
        *extra,
    ]


def assert_refused(code: int, err: str, *needles: str) -> None:
    """Exit 2 with one `evalkit: error:` message holding every needle, no traceback."""
    assert code == 2, err
    assert "Traceback" not in err
    assert err.startswith("evalkit: error:") or err.startswith("usage:"), err
    for needle in needles:
        assert needle in err, (needle, err)


__all__ = ["HEAD", "THOUGHTS", "TINY", "assert_refused", "cli", "gone", "run_args", "snapshot"]


FAKE_MCP = Path(__file__).with_name("mcp_fake.py")


def fake_mcp_mapping(folder: Path, mode: str, pidfile: Path | None = None) -> Path:
    """A mapping file for `mcp_fake.py MODE` (see it), written in `folder`."""
    args = [str(FAKE_MCP), mode, *([str(pidfile)] if pidfile else [])]
    path = folder / f"fake-{mode}.toml"
    path.write_text(
        'name = "fake"\ncapabilities = []\n'
        f'[server]\ncommand = "{{python}}"\nargs = {json.dumps(args)}\n'
        '[namespace]\nargument = "namespace"\ndrop = "drop"\n'
        '[store]\ntool = "store"\nbatch = "thoughts"\narguments = {id = "id", content = "content"}\n'
        '[search]\ntool = "search"\narguments = {query = "query", top_k = "top_k"}\nhits = "hits"\n'
    )
    return path


def gone(pid: int, within: float = 10.0) -> bool:
    """Whether process `pid` has exited (or is a zombie), waiting at most `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False
