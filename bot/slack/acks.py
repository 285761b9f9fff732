"""Acknowledging interactions: in time while a click is recorded durably first, and a refused
form in the form itself."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from slack_bolt import Ack

from bot.cards.modals import build_result_modal
from bot.slack import raw_payload

log = logging.getLogger(__name__)


class AckOnce:
    """Calls Bolt's ack exactly once, from whichever thread gets there first."""

    def __init__(self, ack: Ack) -> None:
        self._ack = ack
        self._lock = threading.Lock()
        self._done = False

    def __call__(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            try:
                self._ack()
            except Exception:  # the work is recorded: finish it even if the ack failed
                log.exception("could not acknowledge an interaction")


@contextmanager
def acked_within(ack: Ack, budget_s: float) -> Iterator[AckOnce]:
    """Ack when the block ends (even by an exception), or after ``budget_s`` if it is still
    running then.

    The block records a click durably before the ack, so a crash right after the ack cannot
    lose it. What it does is local (SQLite/PostgreSQL), except the permission check, which may
    call Slack's usergroups.users.list when a route restricts answerers by user group (cached
    60 s). Rather than a timeout on that call (a half-resolved group must not grant or deny
    access), a slow block is acked after ``budget_s`` and goes on: in that rare case a crash in
    the next few milliseconds can still lose the click.

    Yields the ack (idempotent), for the block to ack as soon as the click is recorded.
    """
    once = AckOnce(ack)
    timer = threading.Timer(budget_s, once)
    timer.daemon = True
    timer.start()
    try:
        yield once
    finally:
        timer.cancel()
        once()


def refusal_errors(body: object, message: str) -> dict[str, str] | None:
    """How a submitted form is refused (nothing was sent): a field error on its first input
    (the modal stays open); None when it has no input (the modal turns into the explanation)."""
    inputs = raw_payload.input_block_ids(body)
    return {inputs[0]: message} if inputs else None


def refuse_form(ack: Ack, body: object, message: str) -> None:
    """Refuse a submitted form in its ack (see :func:`refusal_errors`)."""
    errors = refusal_errors(body, message)
    if errors:
        ack(response_action="errors", errors=errors)
    else:
        ack(response_action="update", view=build_result_modal("Not sent", message))
