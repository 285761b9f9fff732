"""HTTP mode: Slack's requests on POST /slack/events, GET /healthz and GET /metrics, served by
waitress (and, on METRICS_PORT, a server of /healthz and /metrics alone).

The server itself is the first line of defence (see :func:`serve`): waitress reads a whole
request before the application sees it, so its limits are what keep a hostile client from
filling the disk, the memory or the connection table.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable

from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_response import WsgiHttpResponse

from kandev_slack.ops import metrics
from kandev_slack.ops.health import Health
from kandev_slack.slack.transport.acks import answer
from kandev_slack.slack.transport.guard import (
    MAX_BODY_BYTES,
    PARSED_REQUEST,
    SlackRequestGuard,
    log_undispatched,
)

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"


def make_wsgi_app(bolt_app: App, health: Health, signing_secret: str | None = None) -> Callable:
    """A WSGI application: Bolt for Slack's requests, plus the health endpoint.

    With ``signing_secret``, every request to EVENTS_PATH is authenticated (and refused when
    malformed) before Bolt sees it (see guard.py).
    """
    slack: Callable = _ParsedOnce(bolt_app, path=EVENTS_PATH)
    if signing_secret:
        slack = SlackRequestGuard(slack, signing_secret, path=EVENTS_PATH)

    def wsgi(environ: dict, start_response: Callable) -> Iterable[bytes]:
        answered = _ops(environ, start_response, health)
        return slack(environ, start_response) if answered is None else answered

    return wsgi


class _ParsedOnce(SlackRequestHandler):
    """Bolt's WSGI handler, dispatching the request the guard already made of the body
    (guard.PARSED_REQUEST) rather than making it again, and sending its response the moment
    it is acked (acks.answer: the listener runs in this request's own thread, and goes on
    after its response is written, its Content-Length complete); without a guard's request,
    as Bolt does."""

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        parsed = environ.get(PARSED_REQUEST)
        if not isinstance(parsed, BoltRequest):
            return super().__call__(environ, start_response)
        sent = threading.Event()

        def respond(response: BoltResponse) -> None:
            out = WsgiHttpResponse(response.status, response.headers, response.body)
            write = start_response(out.status, out.get_headers())
            for chunk in out.get_body():
                write(chunk)
            sent.set()

        try:
            answer(self.app, parsed, respond)
        except Exception as exc:
            if not sent.is_set():
                raise  # nothing sent yet: the guard answers it
            log_undispatched(exc, log, "request handler")
        return []


def make_ops_app(health: Health) -> Callable:
    """A WSGI application of GET /healthz and GET /metrics alone (METRICS_PORT)."""

    def wsgi(environ: dict, start_response: Callable) -> Iterable[bytes]:
        answered = _ops(environ, start_response, health)
        if answered is not None:
            return answered
        return _send(start_response, "404 Not Found", "text/plain", b"not found", "GET")

    return wsgi


def _ops(environ: dict, start_response: Callable, health: Health) -> list[bytes] | None:
    """/healthz and /metrics (unsigned: they are not Slack's); None for any other request."""
    path = environ.get("PATH_INFO", "")
    method = environ.get("REQUEST_METHOD", "GET")
    if method not in ("GET", "HEAD"):
        return None
    if path == "/healthz":
        report = health.report()
        body = json.dumps(report.as_json()).encode()
        status = "200 OK" if report.ok else "503 Service Unavailable"
        return _send(start_response, status, "application/json", body, method)
    if path == "/metrics":
        return _send(start_response, "200 OK", metrics.CONTENT_TYPE, metrics.exposition(), method)
    return None


def _send(
    start_response: Callable, status: str, content_type: str, body: bytes, method: str
) -> list[bytes]:
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return [b"" if method == "HEAD" else body]


#: A connection with nothing to say for this long is closed (Slack sends a request at once).
IDLE_TIMEOUT_S = 30
#: A request that takes longer than this to arrive is dropped at its next byte (slow drip).
REQUEST_DEADLINE_S = 30
#: Open connections served at once: far more than stalled clients can cheaply take, well
#: within the descriptor limit (polling has no FD_SETSIZE ceiling, unlike select).
CONNECTION_LIMIT = 1000
#: Requests handled at once. Each holds its thread until its listener ends (the listener runs
#: in it, kandev_slack/slack/transport/acks.py), and an ack may wait up to its budget (a
#: click's permission check calling Slack): a dozen held-up acks leave room for the next
#: person. With 8, a crowd of 50 in one second queued up to 19 deep on a busy machine. Socket
#: Mode handles as many envelopes at once (kandev_slack/slack/transport/serving.py).
THREADS = 16


def _server_settings(**overrides) -> dict:
    """waitress settings: a body is refused from its Content-Length before anything is
    buffered, accepted bodies stay in memory (never spooled to a temporary file), idle clients
    are hung up on, and stalled clients cannot use up the connections."""
    settings = {
        # waitress refuses a body of this size or more (413) as soon as the headers are read.
        "max_request_body_size": MAX_BODY_BYTES + 1,
        # Buffers below these sizes stay in memory, never in a temporary file: an accepted
        # body (or a chunked one up to the read that crosses the limit) and any response fit.
        # At most CONNECTION_LIMIT such bodies are held at once.
        "inbuf_overflow": 2 * MAX_BODY_BYTES,
        "outbuf_overflow": MAX_BODY_BYTES + 1,
        "max_request_header_size": 64 * 1024,
        "channel_timeout": IDLE_TIMEOUT_S,
        "cleanup_interval": max(1, IDLE_TIMEOUT_S // 3),
        "connection_limit": CONNECTION_LIMIT,
        "backlog": 1024,
        "asyncore_use_poll": True,
        "threads": THREADS,
    }
    settings.update(overrides)
    return settings


def _deadline_channel(deadline_s: float):
    """waitress's connection class, hanging up on a client whose request is still incomplete
    ``deadline_s`` after its first byte (a drip-feeding client is never idle long enough
    for ``channel_timeout``)."""
    from waitress.channel import HTTPChannel

    class DeadlineChannel(HTTPChannel):
        _timed: object = None  # the partly read request being timed
        _started = 0.0

        def received(self, data: bytes) -> bool:
            now = time.monotonic()
            late = now - self._started > deadline_s
            if self.request is not None and self.request is self._timed and late:
                log.warning("closed a connection whose request took over %ss", deadline_s)
                self.will_close = True
                return False
            result = super().received(data)
            if self.request is not None and self.request is not self._timed:
                self._timed, self._started = self.request, now
            return result

    return DeadlineChannel


def serve(
    wsgi_app: Callable,
    port: int,
    host: str = "0.0.0.0",
    *,
    request_deadline_s: float = REQUEST_DEADLINE_S,
    **overrides,
):
    """Create the production WSGI server (call ``.run()`` to serve, ``.close()`` to stop).

    ``overrides`` replace waitress settings (tests shorten the timeouts)."""
    from waitress.server import create_server

    server = create_server(
        wsgi_app, host=host, port=port, ident="kandev-slack", **_server_settings(**overrides)
    )
    server.channel_class = _deadline_channel(request_deadline_s)
    return server


def stop_accepting(server, timeout: float = 5.0) -> None:
    """Close the listening socket (new connections are refused at once), then wait up to
    ``timeout`` for the requests being handled to be answered."""
    from waitress import wasyncore

    closed = threading.Event()

    def close_listener() -> None:
        # The listening socket only (the server's own close() would close its trigger too);
        # open connections stay and are answered.
        wasyncore.dispatcher.close(server)
        closed.set()

    server.trigger.pull_trigger(close_listener)
    closed.wait(timeout)
    deadline = time.monotonic() + timeout
    dispatcher = server.task_dispatcher
    while time.monotonic() < deadline and (dispatcher.active_count or dispatcher.queue):
        time.sleep(0.05)


def stop_server(server, thread=None, timeout: float = 5.0) -> None:
    """Stop a waitress server cleanly: its channels are closed from inside its own loop thread
    (closing them from another thread races the loop's select and logs EBADF), which empties
    the loop's map so ``run()`` returns."""
    done = threading.Event()

    def close_all() -> None:
        for channel in list(server._map.values()):
            channel.close()
        done.set()

    server.trigger.pull_trigger(close_all)
    done.wait(timeout)
    server.task_dispatcher.shutdown(timeout=timeout)
    if thread is not None:
        thread.join(timeout)
