"""A plain HTTP proxy in front of Kandev that holds chosen requests back (a slow Kandev), for the
"Looking…" path of /kandev-questions. WebSockets are not proxied: run the bot with
KANDEV_HINTS=off."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class SlowKandev:
    def __init__(self, upstream: str, *, delay_s: float, slow: Callable[[bytes], bool]):
        self.upstream = upstream.rstrip("/")
        self.delay_s = delay_s
        self.slow = slow
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> SlowKandev:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if proxy.slow(body):
                    time.sleep(proxy.delay_s)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                reply = httpx.request(
                    self.command,
                    proxy.upstream + self.path,
                    headers=headers,
                    content=body,
                    timeout=60.0,
                )
                self.send_response(reply.status_code)
                for key, value in reply.headers.items():
                    if key.lower() not in _HOP_BY_HOP and key.lower() != "content-encoding":
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(reply.content)))
                self.end_headers()
                self.wfile.write(reply.content)

            do_GET = do_POST = do_DELETE = do_PUT = _forward

            def log_message(self, *_args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
