"""Serving Slack until told to stop: a Socket Mode connection or the HTTP server, and the
server of /metrics and /healthz on METRICS_PORT."""

from __future__ import annotations

import logging
import threading
from typing import Any

from slack_bolt import App

from kandev_slack.ops.health import Health
from kandev_slack.slack.transport.http_server import THREADS as HTTP_THREADS
from kandev_slack.slack.transport.http_server import (
    make_ops_app,
    make_wsgi_app,
    serve,
    stop_accepting,
    stop_server,
)
from kandev_slack.slack.transport.socket_mode import GuardedSocketModeHandler

log = logging.getLogger("kandev_slack.app")

#: On a stop, how long the Slack requests being answered may take once no new ones are
#: accepted (HTTP mode).
SLACK_DRAIN_S = 3.0

#: A running server of /metrics and /healthz and its thread (stop it with :func:`stop_ops`).
OpsServer = tuple[Any, threading.Thread]


def serve_ops(health: Health, port: int | None) -> OpsServer | None:
    """Start the server of /metrics and /healthz on ``port``, if set."""
    if port is None:
        return None
    server = serve(make_ops_app(health), port)
    thread = threading.Thread(target=server.run, name="metrics-http", daemon=True)
    thread.start()
    log.info("serving /metrics and /healthz on port %s", port)
    return server, thread


def stop_ops(ops: OpsServer) -> None:
    stop_server(*ops)


def serve_socket_mode(
    bolt: App, health: Health, app_token: str | None, stop: threading.Event
) -> None:
    """Answer Slack over Socket Mode until ``stop`` is set, then close the links. Until the
    first link is up, failures are retried (health says so); raises SocketModeRefused when
    Slack refuses the app token before that."""
    handler = GuardedSocketModeHandler(
        bolt,
        app_token=app_token,
        health=health,
        # Envelopes handled at once, each until acked: as HTTP mode's server threads.
        concurrency=HTTP_THREADS,
    )
    handler.connect()
    try:
        if handler.client.wait(stop):
            log.info("kandev-slack running in Socket Mode")
        elif handler.client.refused is not None:
            raise handler.client.refused
        stop.wait()
    finally:
        handler.close()  # Slack sends the next envelopes to another replica's connection
    log.info("Socket Mode connection closed")


def serve_http(
    bolt: App, health: Health, signing_secret: str | None, port: int, stop: threading.Event
) -> None:
    """Answer Slack over HTTP on ``port`` until ``stop`` is set, then stop accepting, let the
    requests in flight finish within SLACK_DRAIN_S, and close."""
    server = serve(make_wsgi_app(bolt, health, signing_secret=signing_secret), port)
    thread = threading.Thread(target=server.run, name="http", daemon=True)
    thread.start()
    log.info("kandev-slack running in HTTP mode on port %s", port)
    stop.wait()
    stop_accepting(server, SLACK_DRAIN_S)
    stop_server(server, thread)
