"""The HTTP side of the fake: /api/<method> (Web API) and /response/<id> (response_urls).

It speaks HTTP/1.1 as Slack does: a client's connection stays open for its next request (unless
the client asks to close it, as urllib does) and is closed by the fake after ``idle_s`` without
one, as Slack hangs up on idle clients.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kandev_slack.kits.fakeslack.api.response_urls import ResponseUrls
from kandev_slack.kits.fakeslack.api.webapi import HttpAnswer, WebApi

log = logging.getLogger(__name__)
API_PREFIX = "/api/"
RESPONSE_PREFIX = "/response/"
#: Seconds a kept connection may go without a request before the fake closes it.
IDLE_S = 30.0


class FakeSlackHttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        web_api: WebApi,
        response_urls: ResponseUrls,
        host: str = "127.0.0.1",
        *,
        idle_s: float = IDLE_S,
    ):
        super().__init__((host, 0), _Handler)
        self.web_api = web_api
        self.response_urls = response_urls
        self.idle_s = idle_s
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        #: Connections accepted so far.
        self.accepted = 0

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
            self.accepted += 1
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Hang up on every open connection (its thread then ends)."""
        with self._open_lock:
            conns = list(self._open)
        for conn in conns:
            with contextlib.suppress(OSError):  # it closed meanwhile
                conn.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    server: FakeSlackHttpServer
    server_version = "FakeSlack/1.0"
    protocol_version = "HTTP/1.1"
    # Its headers and body are two writes: each goes at once, as a web server's do (with
    # Nagle's algorithm the body would wait for the client's delayed ACK on a kept connection).
    disable_nagle_algorithm = True

    def setup(self) -> None:
        super().setup()
        # A read waiting longer for the next request times out: the connection is closed.
        self.connection.settimeout(self.server.idle_s)

    def do_POST(self) -> None:
        self._dispatch()

    def do_GET(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = dict(self.headers.items())
        if path.startswith(API_PREFIX):
            answer = self.server.web_api.handle(path[len(API_PREFIX) :], headers, body, query)
        elif path.startswith(RESPONSE_PREFIX) and self.command == "POST":
            content_type = self.headers.get("Content-Type", "")
            answer = self.server.response_urls.handle_post(
                path[len(RESPONSE_PREFIX) :], content_type, body
            )
        else:
            answer = HttpAnswer(404, {"ok": False, "error": "not_found"})
        if answer.drop:  # carried out, but the caller never hears back
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        data = json.dumps(answer.body).encode("utf-8")
        self.send_response(answer.status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        log.debug("fake slack http: " + format, *args)
