"""The Bolt app: Slack's requests in, thin listeners registered from bot/slack/listeners."""

from __future__ import annotations

import logging

from slack_bolt import App
from slack_sdk import WebClient

from bot.ops.logs import ContextExecutor
from bot.slack.ack_wait import PromptAckApp
from bot.slack.listeners import register_listeners
from bot.slack.services import Services

log = logging.getLogger(__name__)

#: Threads that run listeners (Bolt's default is 5). Listeners only parse, admit, record and
#: hand slow work to the lanes (bot/slack/lanes.py), so these stay free for the next ack.
LISTENER_THREADS = 16


def build_bolt_app(
    client: WebClient, services: Services, *, signing_secret: str | None, socket_mode: bool
) -> App:
    """A Bolt App over ``client`` (whose base_url is SLACK_API_URL), answering each request the
    moment it is acknowledged (bot/slack/ack_wait.py). Constructing it calls ``auth.test``, so
    a bad bot token fails here, at start-up."""
    app = PromptAckApp(
        executor=ContextExecutor(LISTENER_THREADS, thread_name_prefix="listener"),
        client=client,
        signing_secret=signing_secret or "",
        # Socket Mode envelopes are not signed; HTTP requests always are (Bolt verifies).
        request_verification_enabled=not socket_mode,
        logger=logging.getLogger("slack_bolt"),  # its own errors under its own name
    )
    register_listeners(app, services)
    return app
