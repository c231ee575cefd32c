"""Real servers for tests: a uvicorn server on a free loopback port, in a thread, stopped at exit."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI, Request


@contextmanager
def serving(app: Any, **config: Any) -> Iterator[str]:
    """Serve `app` on 127.0.0.1 at a free port; yields its base URL; stops the server on exit.
    `config`: more uvicorn.Config settings (e.g. `http=header_timeout_protocol(0.3)`)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP_NODELAY, see
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # http_server.listening_socket
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", **config))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()


@contextmanager
def raw_server(answer: Any) -> Iterator[str]:
    """A loopback HTTP server written by hand, for replies no framework would send: each
    connection's request (head and Content-Length body; one request per connection) is read,
    then `answer(conn, request_line)` writes what it likes
    (it should stop when `conn` breaks). Yields the base URL; stops accepting and joins the
    connection threads (each bounded by a 30 s socket timeout) on exit."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)
    stop = threading.Event()
    threads: list[threading.Thread] = []

    def handle(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(30)
            head = b""
            try:
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    data = conn.recv(65536)
                    if not data:
                        return
                    head += data
                head, _, body = head.partition(b"\r\n\r\n")
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        while len(body) < int(value):
                            body += conn.recv(65536) or b"x" * int(value)
                answer(conn, head.split(b"\r\n", 1)[0].decode("latin-1"))
            except OSError:
                return

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=handle, args=(conn,), daemon=True)
            thread.start()
            threads.append(thread)

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        acceptor.join(5)
        listener.close()
        for thread in threads:
            thread.join(5)


def contract_app(search: Any, namespace: str = "n1", info: dict[str, Any] | None = None) -> Any:
    """A FastAPI app speaking the contract except for its search reply (`search()` gives it,
    any Starlette response), with `namespace` as the one namespace it hands out; `info` adds
    to (or replaces keys of) its `/info` reply `{"name": "fake", "capabilities": ["projects"]}`."""
    app = FastAPI()

    @app.get("/info")
    async def info_() -> dict[str, Any]:
        return {"name": "fake", "capabilities": ["projects"], **(info or {})}

    @app.post("/namespaces", status_code=201)
    async def create() -> dict[str, str]:
        return {"namespace": namespace}

    @app.delete("/namespaces/{name:path}", status_code=204)
    async def drop(name: str) -> None:
        return None

    @app.post("/namespaces/{name}/thoughts")
    async def thoughts(request: Request) -> dict[str, int]:
        return {"added": len((await request.json())["thoughts"])}

    @app.post("/namespaces/{name}/edges")
    async def edges(request: Request) -> dict[str, int]:
        return {"added": len((await request.json())["edges"])}

    @app.post("/namespaces/{name}/search")
    async def search_(request: Request) -> Any:
        return search()

    return app
