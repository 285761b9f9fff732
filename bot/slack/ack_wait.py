"""A Bolt App that answers Slack the moment a listener acks, with Bolt's public API only.

Bolt runs listeners one of two ways. By default (``process_before_response=False``) its
listener runner hands the listener to a thread and polls ``ack.response`` every 10 ms, so each
ack reaches Slack up to 10 ms after the listener called it. With ``process_before_response=True``
it runs the listener in the thread that dispatches the request and answers once the listener
returns. :class:`PromptAckApp` takes the second (public) way and runs each whole dispatch on a
listener thread; the thread that received the request (waitress's, Socket Mode's) waits for
whichever comes first:

- the first ack (a :class:`~bot.slack.ack_timing.TimedAck`, put in the request's context before
  Bolt dispatches it): its response leaves at once, while the listener goes on;
- the end of the dispatch: what Bolt answered without an ack (a request refused by a middleware,
  one no listener claims, a listener that failed before its ack: Bolt's 500).

Events are acknowledged before their listener runs (a global middleware), as Bolt does by
default. What this relies on is pinned by tests/unit/slack/test_bolt_contract.py.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from slack_bolt import App, BoltRequest, BoltResponse

from bot.ops.logs import new_log_context
from bot.slack.ack_timing import TimedAck, interaction_kind

log = logging.getLogger(__name__)

#: How long a request waits for its ack before Slack is told it failed (Bolt's default
#: ``ack_timeout``, and Slack's own limit).
ACK_TIMEOUT_S = 3.0


def _ack_events_at_once(req: BoltRequest, next: Callable[[], None]) -> None:  # noqa: A002 - Bolt passes it by this name
    """Events are acknowledged before their listener runs (the fallback listener claims any
    event no other listener does, so an event reaching this middleware is always handled)."""
    if isinstance(req.body, dict) and req.body.get("type") == "event_callback":
        req.context.ack()
    next()


class PromptAckApp(App):
    """Bolt's App whose responses leave the moment they are acked (see the module's doc).

    ``executor`` runs the dispatches (and so the listeners): it should copy the submitter's
    context (ContextExecutor) and have a thread for every request handled at once."""

    def __init__(self, *, executor: Executor, **kwargs: Any) -> None:
        super().__init__(process_before_response=True, listener_executor=executor, **kwargs)
        self.__executor = executor
        self.middleware(_ack_events_at_once)

    def dispatch(self, req: BoltRequest) -> BoltResponse:
        ack = TimedAck(interaction_kind(req.body), time.perf_counter())
        req.context["ack"] = ack
        job = self.__executor.submit(self.__dispatch_here, req)
        job.add_done_callback(lambda _job: ack.settle())
        if not ack.wait(ACK_TIMEOUT_S):
            kind = interaction_kind(req.body)
            log.warning("a %s request was not acknowledged within %ss", kind, ACK_TIMEOUT_S)
            return BoltResponse(status=500, body="")
        acked = ack.first_response
        return acked if acked is not None else job.result()

    def __dispatch_here(self, req: BoltRequest) -> BoltResponse:
        # The lines this request's listener writes name its person and channel.
        new_log_context(user=req.context.user_id, channel=req.context.channel_id)
        return super().dispatch(req)
