"""`evalkit serve`: the reference store behind evalkit's HTTP contract (or, with --mcp, as an MCP
server over stdio), for `evalkit run --system http://HOST:PORT` or `--system mcp:MAPPING`; with
--embeddings, instead, an OpenAI-compatible embeddings endpoint over the run's embedder
(`evalkit.systems.http.embeddings`) for systems that call an embeddings API.

It prints its URL and OpenAPI document once listening, exits 130 on Ctrl-C and 143 on SIGTERM
(namespaces dropped first), and 2 with one line for a busy port or a bad token. The limits
(`--request-timeout`, `--max-namespaces`, `--idle-timeout`) are those of
`evalkit.systems.namespaces.Limits`."""

from __future__ import annotations

import argparse
import os

from evalkit.api import build_system, make_config
from evalkit.cli.args import add_embedder_args, embedder_options, int_in
from evalkit.cli.exit_codes import EXIT_OK
from evalkit.embedders.factory import make_embedder
from evalkit.errors import UsageError
from evalkit.systems import MemorySystem, ReferenceSystem
from evalkit.systems.namespaces import Limits
from evalkit.systems.resolve import from_extra
from evalkit.systems.secrets import check_token

TOKEN_ENV = "EVALKIT_SERVE_TOKEN"
"""The environment variable holding the bearer token the server demands (required off loopback)."""

LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def register(serve: argparse.ArgumentParser) -> None:
    """Add `evalkit serve`."""
    serve.description = (
        "Serve the reference store: over HTTP (FastAPI + uvicorn; OpenAPI at /openapi.json) "
        "on loopback by default, or with --mcp as an MCP server over stdin/stdout. Binding another "
        f"address needs --allow-remote and a bearer token in ${TOKEN_ENV} that every request must carry. "
        "With --embeddings it serves an OpenAI-compatible embeddings endpoint instead (token always "
        "required)."
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int_in(0, 65535), default=8765, metavar="N", help="port (default 8765)")
    serve.add_argument(
        "--allow-remote", action="store_true",
        help=f"allow a non-loopback --host (requires ${TOKEN_ENV})",
    )  # fmt: skip
    serve.add_argument("--mcp", action="store_true", help="speak MCP over stdio instead of HTTP")
    serve.add_argument(
        "--embeddings", action="store_true",
        help="serve an OpenAI-compatible embeddings endpoint (POST /v1/embeddings, base URL "
        f"http://HOST:PORT/v1) with the --embedder, instead of the reference store; needs ${TOKEN_ENV}, "
        "which clients send as their API key",
    )  # fmt: skip
    defaults = Limits()
    serve.add_argument(
        "--request-timeout", type=_seconds, default=defaults.request_timeout, metavar="S",
        help=f"deadline of one request's store work, 503 beyond (default {defaults.request_timeout:g})",
    )  # fmt: skip
    serve.add_argument(
        "--max-namespaces", type=int_in(1, 1_000_000), default=defaults.max_namespaces, metavar="N",
        help=f"namespaces open at once, 503 beyond (default {defaults.max_namespaces})",
    )  # fmt: skip
    serve.add_argument(
        "--idle-timeout", type=_seconds, default=defaults.idle_timeout, metavar="S",
        help=f"a namespace unused this long is dropped (default {defaults.idle_timeout:g})",
    )  # fmt: skip
    add_embedder_args(serve)
    serve.set_defaults(handler=serve_command)


def serve_command(args: argparse.Namespace) -> int:
    """Serve until interrupted. The extra a server needs is checked before the reference store is
    built (a real model takes seconds to load), and so are the --host rules."""
    limits = Limits(args.request_timeout, args.max_namespaces, args.idle_timeout)
    if args.mcp and args.embeddings:
        raise UsageError("--embeddings serves over HTTP; leave out --mcp")
    if args.mcp:
        serve_mcp = from_extra("mcp", "mcp.server", "serve_stdio")
        serve_mcp(_reference(args), limits)
        return EXIT_OK
    token = os.environ.get(TOKEN_ENV) or None
    if token is not None:
        check_token(token, TOKEN_ENV)
    if args.host not in LOOPBACK:
        if not args.allow_remote:
            raise UsageError(f"--host {args.host} is not loopback; add --allow-remote (and set ${TOKEN_ENV})")
        if token is None:
            raise UsageError(f"--allow-remote needs a bearer token: set ${TOKEN_ENV} (clients send it too)")
    if args.embeddings:
        return _serve_embeddings(args, token)
    serve_http = from_extra("http", "http.server", "serve")
    serve_http(_reference(args), host=args.host, port=args.port, token=token, limits=limits)
    return EXIT_OK


def _serve_embeddings(args: argparse.Namespace, token: str | None) -> int:
    """`--embeddings`: the endpoint of `evalkit.systems.http.embeddings` over the embedder the
    flags describe, a token required (on loopback too: an OpenAI client always sends an API key).
    `--request-timeout` bounds a body's arrival; the namespace limits do not apply."""
    if token is None:
        raise UsageError(
            f"--embeddings needs a bearer token: set ${TOKEN_ENV} (clients send it as their API key, "
            "e.g. OpenAI(api_key=..., base_url='http://127.0.0.1:PORT/v1'))"
        )
    serve = from_extra("http", "http.embeddings", "serve_embeddings")
    options = embedder_options(args)
    embedder = make_embedder(
        options["mode"], model=options["model"], cache_path=options["embedding_cache"],
        use_cache=options["use_cache"], progress=args.progress,
    )  # fmt: skip
    serve(embedder, host=args.host, port=args.port, token=token, body_timeout=args.request_timeout)
    return EXIT_OK


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {value:g}")
    return value


def _reference(args: argparse.Namespace) -> MemorySystem:
    """The reference store the flags describe (embedder mode, model, cache), declaring that its
    memories need no folder (they are in RAM): the namespaces are opened without one."""
    system, _ = build_system(make_config(thresholds=None, **embedder_options(args)), progress=args.progress)
    if isinstance(system, ReferenceSystem):
        system.needs_workdir = False
    return system
