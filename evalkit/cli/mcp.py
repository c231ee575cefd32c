"""`evalkit mcp inspect -- COMMAND ARGS…` (or `evalkit mcp inspect URL`): an MCP server's tools
with their input schemas, then a draft mapping (`evalkit.systems.mcp.inspection`) to review."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from evalkit.cli.exit_codes import EXIT_OK
from evalkit.errors import UsageError


def register(mcp: argparse.ArgumentParser) -> None:
    """Add `evalkit mcp inspect`."""
    mcp.description = "Commands for MCP memory servers."
    sub = mcp.add_subparsers(dest="mcp_command", required=True, metavar="SUBCOMMAND", help="inspect")
    inspect = sub.add_parser(
        "inspect",
        allow_abbrev=False,
        help="list a server's tools with their input schemas and print a draft mapping",
        description="Start the stdio server COMMAND ARGS… (after --), or connect to the streamable-HTTP "
        "URL, list its tools with their inputSchema, stop it, and print a draft mapping (format 2) "
        "guessed from the tools' names and schemas: review every TODO before using it with "
        "`evalkit run --system mcp:FILE`. Exit 2 when the server cannot be started or reached.",
    )
    inspect.add_argument("target", nargs="*", metavar="COMMAND|URL", help="-- COMMAND ARGS…, or a URL")
    inspect.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a variable for the server (repeatable)",
    )
    inspect.add_argument(
        "--name", default="my-memory", help="the system's name in the draft (default my-memory)"
    )
    inspect.add_argument(
        "--out", type=Path, metavar="FILE",
        help="also write the draft mapping to FILE (checked before the server starts; an existing "
        "FILE is replaced only with --force)",
    )  # fmt: skip
    inspect.add_argument("--force", action="store_true", help="let --out replace an existing file")
    inspect.set_defaults(handler=inspect_command)


_HOST_PORT = re.compile(r"^[A-Za-z0-9._-]+:[0-9]+(/\S*)?$")
"""A URL without its scheme (`127.0.0.1:8000/mcp`), which would otherwise run as a command."""


def inspect_command(args: argparse.Namespace) -> int:
    """Every argument is checked (the server's address, --env, --out) before the server starts;
    the draft goes to --out atomically."""
    import shutil

    from evalkit.files import check_writable, write_atomic
    from evalkit.systems.mcp.inspection import draft_mapping, inspect_server, shown_tools
    from evalkit.systems.mcp.mapping import ServerSpec

    if not args.target:
        raise UsageError(
            "evalkit mcp inspect needs a server: -- COMMAND ARGS… or a URL (http://HOST:PORT/mcp)"
        )
    env = dict(item.partition("=")[::2] for item in args.env)
    if bad := [item for item in args.env if "=" not in item]:
        raise UsageError(f"--env {bad[0]!r}: give KEY=VALUE")
    first = args.target[0]
    if len(args.target) == 1 and _HOST_PORT.match(first) and shutil.which(first) is None:
        raise UsageError(f"{first!r} is not a command; did you mean http://{first}" + (
            "" if "/" in first else "/mcp") + "? (a streamable-HTTP server is given by its URL)"
        )  # fmt: skip
    if args.out is not None:
        if args.out.is_dir():
            raise UsageError(
                f"--out {args.out} is a folder; give a file path, e.g. {args.out / 'mapping.toml'}"
            )
        if args.out.exists() and not args.force:
            raise UsageError(f"--out {args.out} exists; pass --force to replace it, or choose another file")
        check_writable(args.out)
    if first.startswith(("http://", "https://")) and len(args.target) == 1:
        server = ServerSpec(url=first)
    else:
        server = ServerSpec(command=first, args=list(args.target[1:]), env=env)
    tools = inspect_server(server, f"MCP server {' '.join(args.target)!r}")
    print(shown_tools(tools))
    draft = draft_mapping(tools, server, args.name)
    print("\n# --- draft mapping " + "-" * 70)
    print(draft, end="")
    if args.out is not None:
        write_atomic(args.out, draft)
    return EXIT_OK
