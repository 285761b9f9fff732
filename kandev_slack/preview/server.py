"""The preview's own HTTP server (the standard library's; 127.0.0.1 only): the page and its
static files, ``GET /api/state`` (long-polled: answers when what the user sees changed) and
``POST /api/act`` (one interaction, carried out by :class:`kandev_slack.preview.actions.Actions`).

No other web page may drive it (it acts as any preview user, against the person's own Kandev):
every request must name the server's own address as its ``Host`` (a DNS-rebinding page names
its own), a request that says where it comes from (``Origin``, ``Sec-Fetch-Site``) must come
from the page itself, and the API wants the per-run token the page is served with (in a
``<meta>`` of the page, which another origin cannot read) in ``X-Preview-Token``; an action is
a JSON body (``Content-Type: application/json``, which a cross-origin form or a plain
``fetch`` cannot send without asking first).
"""

from __future__ import annotations

import errno
import hmac
import json
import logging
import secrets
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kandev_slack.preview.actions import ActionError
from kandev_slack.preview.guard import HOST

log = logging.getLogger("kandev_slack.preview.server")
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/style.css": ("style.css", "text/css; charset=utf-8"),
}
MAX_BODY = 256 * 1024
#: The header the page sends its token in, and where the page is given it.
TOKEN_HEADER = "X-Preview-Token"
TOKEN_SLOT = "__PREVIEW_TOKEN__"
#: What an API request's ``Sec-Fetch-Site`` may say: the page itself (or no page at all).
SAME_SITE = {"same-origin", "none"}
#: How long one ``/api/state`` request waits for a change before answering anyway.
LONG_POLL_S = 20.0

#: ``state(user_id, since, wait)`` → the page's state; ``act(user_id, request)`` → the result.
StateFn = Callable[[str, str, float], dict[str, Any]]
ActFn = Callable[[str, dict[str, Any]], dict[str, Any]]


def static_file(name: str) -> bytes:
    return resources.files("kandev_slack.preview").joinpath("static", name).read_bytes()


class PortInUse(OSError):
    """The page's port is taken (by another preview, or anything else)."""

    def __init__(self, port: int) -> None:
        super().__init__(errno.EADDRINUSE, f"port {port} on {HOST} is already in use")
        self.port = port


class PreviewHttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, state: StateFn, act: ActFn) -> None:
        try:
            super().__init__((HOST, port), _Handler)
        except OSError as problem:
            if problem.errno == errno.EADDRINUSE:
                raise PortInUse(port) from None
            raise
        self.state = state
        self.act = act
        #: What the page must send with each API request (new for each run).
        self.token = secrets.token_urlsafe(32)
        self._serving = False

    @property
    def hosts(self) -> frozenset[str]:
        """The ``Host`` headers that name this server (its address as the page is opened)."""
        return frozenset({f"{HOST}:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts)

    def page(self) -> bytes:
        """The page, with this run's token in it."""
        return static_file("index.html").replace(TOKEN_SLOT.encode(), self.token.encode())

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A page that went away (a closed tab, a reload during a long poll) is no error; any
        other is logged in one line, without the standard library's traceback on stderr."""
        problem = sys.exc_info()[1]
        if isinstance(problem, ConnectionError | TimeoutError):
            log.debug("preview http: the page went away (%s)", problem)
            return
        log.warning("preview http: a request failed: %r", problem)

    @property
    def serving(self) -> bool:
        return self._serving

    def serve_in_thread(self) -> threading.Thread:
        self._serving = True
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
        if not self._from_the_page(api=url.path.startswith("/api/")):
            return
        if url.path == "/":
            self._send(200, self.server.page(), STATIC["/"][1])
            return
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
        if not self._from_the_page(api=True):
            return
        if urlsplit(self.path).path != "/api/act":
            self._json(404, {"error": "not found"})
            return
        media_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if media_type != "application/json":
            self._json(415, {"ok": False, "error": "a JSON body is expected"})
            return
        length = _content_length(self.headers.get("Content-Length"))
        if length is None:
            self._json(400, {"ok": False, "error": "a bad Content-Length"})
            return
        if length > MAX_BODY:
            self._json(413, {"ok": False, "error": "too large"})
            return
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(request, dict):
                raise ActionError("a JSON object is expected")
            self._json(200, self.server.act(str(request.get("user", "")), request))
        except (ActionError, ValueError) as problem:
            self._json(400, {"ok": False, "error": str(problem)})

    def _from_the_page(self, *, api: bool) -> bool:
        """Whether the request is the preview's page's own (else it is refused, answered)."""
        if self.headers.get("Host", "").lower() not in self.server.hosts:
            self._json(421, {"ok": False, "error": "not this server's address"})
            return False
        if not api:  # the page and its files (a link from elsewhere may open the page)
            return True
        origin = self.headers.get("Origin")
        site = self.headers.get("Sec-Fetch-Site")
        token = self.headers.get(TOKEN_HEADER, "")
        if (
            (origin is not None and origin.lower() not in self.server.origins)
            or (site is not None and site.lower() not in SAME_SITE)
            or not hmac.compare_digest(token.encode(), self.server.token.encode())
        ):
            self._json(403, {"ok": False, "error": "not the preview's page"})
            return False
        return True

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
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
            "frame-ancestors 'none'",
        )
        self.send_header("X-Frame-Options", "DENY")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        log.debug("preview http: " + format, *args)


def _content_length(header: str | None) -> int | None:
    """The body's length (0 when not said), None when it is not a length."""
    if header is None:
        return 0
    text = header.strip()
    return int(text) if text.isascii() and text.isdigit() else None
