"""The preview's own HTTP server (the standard library's; 127.0.0.1 only): the page and its
static files, ``GET /api/state`` (long-polled: answers when what the user sees changed) and
``POST /api/act`` (one interaction, carried out by :class:`preview.actions.Actions`)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from preview.actions import ActionError
from preview.guard import HOST

log = logging.getLogger("preview.server")
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/style.css": ("style.css", "text/css; charset=utf-8"),
}
MAX_BODY = 256 * 1024
#: How long one ``/api/state`` request waits for a change before answering anyway.
LONG_POLL_S = 20.0

#: ``state(user_id, since, wait)`` → the page's state; ``act(user_id, request)`` → the result.
StateFn = Callable[[str, str, float], dict[str, Any]]
ActFn = Callable[[str, dict[str, Any]], dict[str, Any]]


def static_file(name: str) -> bytes:
    return resources.files("preview").joinpath("static", name).read_bytes()


class PreviewHttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, state: StateFn, act: ActFn) -> None:
        super().__init__((HOST, port), _Handler)
        self.state = state
        self.act = act

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.1}, name="preview-http"
        )
        thread.daemon = True
        thread.start()
        return thread


class _Handler(BaseHTTPRequestHandler):
    server: PreviewHttpServer
    server_version = "KandevSlackPreview/1.0"

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path in STATIC:
            name, content_type = STATIC[url.path]
            self._send(200, static_file(name), content_type)
            return
        if url.path == "/favicon.ico":
            self._send(204, b"", "image/x-icon")
            return
        if url.path == "/api/state":
            query = parse_qs(url.query)
            user = (query.get("user") or [""])[0]
            since = (query.get("since") or [""])[0]
            wait = LONG_POLL_S if since else 0.0
            self._json(200, self.server.state(user, since, wait))
            return
        self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        if urlsplit(self.path).path != "/api/act":
            self._json(404, {"error": "not found"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._json(413, {"error": "too large"})
            return
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(request, dict):
                raise ActionError("a JSON object is expected")
            self._json(200, self.server.act(str(request.get("user", "")), request))
        except (ActionError, ValueError) as problem:
            self._json(400, {"ok": False, "error": str(problem)})

    def _json(self, status: int, body: dict[str, Any]) -> None:
        self._send(status, json.dumps(body).encode("utf-8"), "application/json")

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
        )
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        log.debug("preview http: " + format, *args)
