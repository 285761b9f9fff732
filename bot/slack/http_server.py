"""HTTP mode: Slack's requests on POST /slack/events and GET /healthz, served by waitress."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable

from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler

from bot.health import Health
from bot.slack.guard import SlackRequestGuard

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"


def make_wsgi_app(bolt_app: App, health: Health, signing_secret: str | None = None) -> Callable:
    """A WSGI application: Bolt for Slack's requests, plus the health endpoint.

    With ``signing_secret``, every request to EVENTS_PATH is authenticated (and refused when
    malformed) before Bolt sees it (see guard.py).
    """
    slack: Callable = SlackRequestHandler(bolt_app, path=EVENTS_PATH)
    if signing_secret:
        slack = SlackRequestGuard(slack, signing_secret, path=EVENTS_PATH)

    def wsgi(environ: dict, start_response: Callable) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET")
        if path == "/healthz" and method in ("GET", "HEAD"):
            report = health.report()
            body = json.dumps(report.as_json()).encode()
            status = "200 OK" if report.ok else "503 Service Unavailable"
            start_response(
                status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            )
            return [b"" if method == "HEAD" else body]
        return slack(environ, start_response)

    return wsgi


def serve(wsgi_app: Callable, port: int, host: str = "0.0.0.0", threads: int = 8):
    """Create the production WSGI server (call ``.run()`` to serve, ``.close()`` to stop)."""
    from waitress.server import create_server

    return create_server(wsgi_app, host=host, port=port, threads=threads, ident="kandev-slack")


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
