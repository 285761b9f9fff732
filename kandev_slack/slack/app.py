"""The Bolt app: Slack's requests in, thin listeners registered from
kandev_slack/slack/listeners."""

from __future__ import annotations

import logging

from slack_bolt import App
from slack_sdk import WebClient

from kandev_slack.ops.logs import ContextExecutor
from kandev_slack.ops.urgency import Urgency
from kandev_slack.slack.listeners import register_listeners
from kandev_slack.slack.services import Services
from kandev_slack.slack.transport.acks import PromptAckApp

log = logging.getLogger(__name__)

#: Threads that run listeners of requests handed to Bolt's ``App.dispatch`` (the transports
#: run theirs in their own threads, acks.answer; started only when used). Listeners only
#: parse, admit, record and hand slow work to the lanes
#: (kandev_slack/slack/transport/lanes.py), so these stay free for the next ack.
LISTENER_THREADS = 16


def build_bolt_app(
    client: WebClient,
    services: Services,
    *,
    signing_secret: str | None,
    socket_mode: bool,
    urgency: Urgency | None = None,
) -> App:
    """A Bolt App over ``client`` (whose base_url is SLACK_API_URL), answering each request the
    moment it is acknowledged (kandev_slack/slack/transport/acks.py); ``urgency``: follow-up
    work waits while a request is not acknowledged yet. Constructing it calls ``auth.test``,
    so a bad bot token fails here, at start-up."""
    app = PromptAckApp(
        executor=ContextExecutor(LISTENER_THREADS, thread_name_prefix="listener"),
        urgency=urgency,
        client=client,
        signing_secret=signing_secret or "",
        # Socket Mode envelopes are not signed; HTTP requests always are (Bolt verifies).
        request_verification_enabled=not socket_mode,
        logger=logging.getLogger("slack_bolt"),  # its own errors under its own name
    )
    register_listeners(app, services)
    return app
