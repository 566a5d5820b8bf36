"""A fake OpenAI-compatible API on loopback, for tests of the providers and the worker."""

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAIHandler(BaseHTTPRequestHandler):
    """Subclasses answer `answer(path, body)` with (status, JSON payload or None)."""

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        raise NotImplementedError

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        status, payload = self.answer(self.path, body)
        encoded = b"" if payload is None else json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(encoded)))
            self.end_headers()
            self.wfile.write(encoded)
        except OSError:
            pass  # the client that asked is gone (a killed worker)

    def log_message(self, *args) -> None:
        pass


@contextmanager
def serving(handler: type[FakeOpenAIHandler]) -> Iterator[str]:
    """Serve `handler` on a free loopback port; yields the API's base URL (…/v1)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
