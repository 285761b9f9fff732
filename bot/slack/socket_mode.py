"""Socket Mode: every envelope is acknowledged, even one Bolt cannot digest.

Bolt's Socket Mode adapter acks only a 200 result; a payload that breaks Bolt's request parsing
or matching raises (or yields a 400/404) and is left unacknowledged, so Slack shows the person
an error and redelivers the same broken envelope. Here such an envelope is refused in the log
and acknowledged with an empty body: nothing else happens, and nothing is redelivered.
"""

from __future__ import annotations

import logging
from time import time

from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.socket_mode.internals import run_bolt_app, send_response
from slack_bolt.response import BoltResponse
from slack_sdk.socket_mode.client import BaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot.slack.guard import raised_in_bot

log = logging.getLogger(__name__)


class GuardedSocketModeHandler(SocketModeHandler):
    def handle(self, client: BaseSocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        start = time()
        try:
            response: BoltResponse = run_bolt_app(self.app, req)
        except Exception as exc:
            if raised_in_bot(exc):
                log.error("a Socket Mode %s envelope failed in the bot", req.type, exc_info=exc)
            else:
                log.warning(
                    "refused a malformed Socket Mode %s envelope: %s: %s",
                    req.type,
                    type(exc).__name__,
                    str(exc)[:120],
                )
            response = BoltResponse(status=400)
        if response.status != 200:
            log.warning("acknowledged a %s envelope Bolt refused (%s)", req.type, response.status)
            client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
            return
        send_response(client, req, response, start)
