"""The HTTP side of the fake: /api/<method> (Web API) and /response/<id> (response_urls)."""

from __future__ import annotations

import json
import logging
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kandev_slack.kits.fakeslack.api.response_urls import ResponseUrls
from kandev_slack.kits.fakeslack.api.webapi import HttpAnswer, WebApi

log = logging.getLogger(__name__)
API_PREFIX = "/api/"
RESPONSE_PREFIX = "/response/"


class FakeSlackHttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, web_api: WebApi, response_urls: ResponseUrls, host: str = "127.0.0.1"):
        super().__init__((host, 0), _Handler)
        self.web_api = web_api
        self.response_urls = response_urls

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class _Handler(BaseHTTPRequestHandler):
    server: FakeSlackHttpServer
    server_version = "FakeSlack/1.0"

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
