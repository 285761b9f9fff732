"""Acknowledging interactions: in time while a click is recorded durably first, and a refused
form in the form itself."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from typing import Any

from slack_bolt import Ack, App, BoltRequest, BoltResponse

from kandev_slack.kinds.question.cards.modals import build_result_modal
from kandev_slack.ops import metrics
from kandev_slack.ops.logs import new_log_context
from kandev_slack.ops.urgency import Urgency
from kandev_slack.slack.parsing import raw_payload

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


class AckBudget:
    """Calls ``spent`` once ``budget_s`` has passed since :meth:`start`, unless :meth:`cancel`
    came first: the ack of a slow listener, sent before Slack's 3 s are over.

    Under :class:`PromptAckApp` the request's own dispatching thread is waiting for the ack
    anyway, and it makes the call: no thread starts per interaction (under a crowd, starting
    one waits for the interpreter, and the ack with it). Given any other ack, a timer thread
    makes it."""

    def __init__(self, ack: Callable[..., Any], budget_s: float, spent: Callable[[], None]) -> None:
        self._ack = ack
        self._budget_s = budget_s
        self._spent = spent
        self._timer: threading.Timer | None = None

    def start(self) -> None:
        if isinstance(self._ack, TimedAck):
            self._ack.spend_after(self._budget_s, self._spent)
            return
        self._timer = threading.Timer(self._budget_s, self._spent)
        self._timer.daemon = True
        self._timer.start()

    def cancel(self) -> None:
        if isinstance(self._ack, TimedAck):
            self._ack.cancel_spending(self._spent)
        elif self._timer is not None:
            self._timer.cancel()


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
    budget = AckBudget(ack, budget_s, once)
    budget.start()
    try:
        yield once
    finally:
        budget.cancel()
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


# ------------------------------------------------------------------------------------------
# How long each Slack request waits for its acknowledgement, by interaction kind.

_KINDS = {
    "block_actions": "block_actions",
    "view_submission": "view_submission",
    "view_closed": "view_closed",
    "shortcut": "shortcut",
    "message_action": "shortcut",
    "event_callback": "event",
}


def interaction_kind(body: Any) -> str:
    """``block_actions``, ``view_submission``, ``view_closed``, ``shortcut``, ``command`` or
    ``event``: the kind of a Slack request body."""
    if not isinstance(body, dict):
        return "event"
    if "command" in body and "type" not in body:
        return "command"
    return _KINDS.get(str(body.get("type", "")), "event")


class TimedAck(Ack):
    """Bolt's ack that records, once, how long after ``started`` it was first called, keeps
    that first response, and signals it the moment it exists (:meth:`wait`).

    :meth:`settle` ends the wait without an ack (Bolt finished the request: it refused it,
    no listener claimed it, or the listener failed before acking). :meth:`spend_after` has the
    waiting thread call a listener's fallback ack when its budget is spent (see
    :class:`AckBudget`)."""

    def __init__(self, kind: str, started: float) -> None:
        super().__init__()
        self._kind = kind
        self._started = started
        self._changed = threading.Condition(threading.Lock())
        self._first: BoltResponse | None = None
        self._settled = False
        self._budget: tuple[float, Callable[[], None]] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> BoltResponse:
        response = super().__call__(*args, **kwargs)
        with self._changed:
            first = self._first is None
            if first:
                self._first = response
                self._settled = True
                self._changed.notify_all()
        if first:
            metrics.acked(self._kind, time.perf_counter() - self._started)
        return response

    @property
    def first_response(self) -> BoltResponse | None:
        """What the first ack answered (None: not acked yet). Later acks, and the 500 Bolt
        records when a listener fails after its ack, do not change it: it has been sent."""
        return self._first

    def settle(self) -> None:
        """The request is finished, acked or not: end any :meth:`wait`."""
        with self._changed:
            self._settled = True
            self._changed.notify_all()

    def spend_after(self, budget_s: float, spent: Callable[[], None]) -> None:
        """Unless settled by then, :meth:`wait` calls ``spent`` once ``budget_s`` has passed
        (it should ack)."""
        with self._changed:
            self._budget = (time.perf_counter() + budget_s, spent)
            self._changed.notify_all()

    def cancel_spending(self, spent: Callable[[], None]) -> None:
        with self._changed:
            if self._budget is not None and self._budget[1] is spent:
                self._budget = None

    def wait(self, timeout: float) -> bool:
        """Block until the first ack or :meth:`settle` (True), or ``timeout`` seconds (False);
        meanwhile, call a budget's ``spent`` when it is due (:meth:`spend_after`)."""
        end = time.perf_counter() + max(timeout, 0.0)
        while True:
            with self._changed:
                spent = self._due_or_wait(end)
                if spent is None:
                    return self._settled
            try:
                spent()
            except Exception:
                log.exception("an interaction's fallback ack failed")

    def _due_or_wait(self, end: float) -> Callable[[], None] | None:
        """Under the lock: the budget's ``spent`` once due, else None when settled or at
        ``end``."""
        while not self._settled:
            now = time.perf_counter()
            if self._budget is not None and now >= self._budget[0]:
                spent, self._budget = self._budget[1], None
                return spent
            if now >= end:
                return None
            until = end if self._budget is None else min(end, self._budget[0])
            self._changed.wait(until - now)
        return None


# ------------------------------------------------------------------------------------------
# A Bolt App that answers Slack the moment a listener acks, with Bolt's public API only.

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
    context (ContextExecutor) and have a thread for every request handled at once.
    ``urgency``: every request counts as urgent work until it is acknowledged (or given up on),
    so that follow-up work (kandev_slack/ops/urgency.py) waits for its ack."""

    def __init__(
        self, *, executor: Executor, urgency: Urgency | None = None, **kwargs: Any
    ) -> None:
        super().__init__(process_before_response=True, listener_executor=executor, **kwargs)
        self.__executor = executor
        self.__urgency = urgency
        self.middleware(_ack_events_at_once)

    def dispatch(self, req: BoltRequest) -> BoltResponse:
        ack = TimedAck(interaction_kind(req.body), time.perf_counter())
        req.context["ack"] = ack
        urgent = self.__urgency.begin() if self.__urgency is not None else None
        try:
            job = self.__executor.submit(self.__dispatch_here, req)
            job.add_done_callback(lambda _job: ack.settle())
            answered = ack.wait(ACK_TIMEOUT_S)
        finally:
            if urgent is not None:  # acked (or given up on): follow-up work may go on
                urgent.done()
        if not answered:
            kind = interaction_kind(req.body)
            log.warning("a %s request was not acknowledged within %ss", kind, ACK_TIMEOUT_S)
            return BoltResponse(status=500, body="")
        acked = ack.first_response
        return acked if acked is not None else job.result()

    def __dispatch_here(self, req: BoltRequest) -> BoltResponse:
        # The lines this request's listener writes name its person and channel.
        new_log_context(user=req.context.user_id, channel=req.context.channel_id)
        return super().dispatch(req)
