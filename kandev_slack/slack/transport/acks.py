"""Acknowledging interactions: in time while a click is recorded durably first, and a refused
form in the form itself; sent from inside the listener's ack, in the thread that received the
request (no hop to another thread and back: under a crowd on a busy machine each hop waited
for the interpreter, up to 90 ms at the tail of an ack)."""

from __future__ import annotations

import contextvars
import heapq
import itertools
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

    Under :class:`PromptAckApp` its :class:`AckWatch` makes the call: no thread starts per
    interaction (under a crowd, starting one waits for the interpreter, and the ack with it).
    Given any other ack, a timer thread makes it."""

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


class Answer:
    """The one response a request gets: the first response given wins and ``respond`` sends it
    (under the lock, so a later caller returns once it is sent: a WSGI request must not end
    while another thread is still writing its response)."""

    def __init__(self, respond: Callable[[BoltResponse], None]) -> None:
        self._respond = respond
        self._lock = threading.Lock()
        self._given = False

    def __call__(self, response: BoltResponse) -> bool:
        """Send ``response`` unless one was sent already: True if this one was."""
        with self._lock:
            if self._given:
                return False
            self._given = True
            self._respond(response)
            return True


class AckWatch:
    """One thread calling what falls due: a slow listener's fallback ack once its budget is
    spent (:class:`AckBudget`), a request's 500 when nothing answered it within Slack's 3 s.

    No thread starts per interaction (under a crowd a thread start waits for the interpreter,
    and the ack with it). The thread sleeps until the soonest entry is due (woken only when a
    new entry comes sooner) and while nothing is watched; an entry cancelled in time is
    dropped when it comes up. A call may come once its entry is cancelled (the two race):
    what it calls must be a no-op by then (an ack given once, an answer sent once)."""

    def __init__(self) -> None:
        self._changed = threading.Condition(threading.Lock())
        self._due: list[list[Any]] = []  # heap of [deadline, seq, call or None]
        self._live = 0
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def after(self, delay_s: float, call: Callable[[], None]) -> list[Any]:
        """Call ``call`` (on the watch's thread) ``delay_s`` from now unless :meth:`cancel`
        came first; returns the entry to cancel."""
        entry = [time.monotonic() + delay_s, next(self._seq), call]
        with self._changed:
            heapq.heappush(self._due, entry)
            self._live += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ack-watch", daemon=True)
                self._thread.start()
            elif self._due[0] is entry:  # sooner than what the thread sleeps for
                self._changed.notify()
        return entry

    @property
    def held(self) -> int:
        """Entries held: those to call, and the cancelled ones until they come up or until
        nothing is left to call (then none is held)."""
        with self._changed:
            return len(self._due)

    def cancel(self, entry: list[Any]) -> None:
        with self._changed:
            if entry[2] is not None:
                entry[2] = None
                self._live -= 1
                if not self._live:
                    self._due.clear()

    def _run(self) -> None:
        while True:
            with self._changed:
                call = self._next_due()
            try:
                call()
            except Exception:
                log.exception("an interaction's fallback answer failed")

    def _next_due(self) -> Callable[[], None]:
        """Under the lock: the soonest live entry's call once it is due."""
        while True:
            while self._due and self._due[0][2] is None:
                heapq.heappop(self._due)
            if not self._due:
                self._changed.wait()
                continue
            left = self._due[0][0] - time.monotonic()
            if left > 0:
                self._changed.wait(left)
                continue
            entry = heapq.heappop(self._due)
            call, entry[2] = entry[2], None
            self._live -= 1
            return call


class TimedAck(Ack):
    """Bolt's ack that hands its first response to the request's :class:`Answer` (sent the
    moment the listener acks, from the listener's own thread) and records, once, how long
    after ``started`` that was.

    :meth:`spend_after` has the :class:`AckWatch` call a listener's fallback ack when its
    budget is spent (see :class:`AckBudget`)."""

    def __init__(self, kind: str, started: float, answer: Answer, watch: AckWatch) -> None:
        super().__init__()
        self._kind = kind
        self._started = started
        self._answer = answer
        self._watch = watch
        self._budget: tuple[list[Any], Callable[[], None]] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> BoltResponse:
        response = super().__call__(*args, **kwargs)
        if self._answer(response):
            metrics.acked(self._kind, time.perf_counter() - self._started)
        return response

    def spend_after(self, budget_s: float, spent: Callable[[], None]) -> None:
        """Unless answered by then, the watch calls ``spent`` once ``budget_s`` has passed (it
        should ack)."""
        self._budget = (self._watch.after(budget_s, spent), spent)

    def cancel_spending(self, spent: Callable[[], None]) -> None:
        budget, self._budget = self._budget, None
        if budget is not None and budget[1] is spent:
            self._watch.cancel(budget[0])


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

    :meth:`answer` runs the request's listener in the calling thread (the transport's own)
    and sends its response, through the transport's ``respond``, from inside the ack: an
    ack waits for no other thread. Bolt's :meth:`dispatch` runs it on ``executor`` (which
    should copy the submitter's context, ContextExecutor) and returns the response once
    acked, the listener going on there. ``urgency``: every request counts as urgent work
    until it is answered, so that follow-up work (kandev_slack/ops/urgency.py) waits for its
    ack."""

    def __init__(
        self, *, executor: Executor, urgency: Urgency | None = None, **kwargs: Any
    ) -> None:
        super().__init__(process_before_response=True, listener_executor=executor, **kwargs)
        self.__executor = executor
        self.__urgency = urgency
        self.__watch = AckWatch()
        self.middleware(_ack_events_at_once)

    def answer(self, req: BoltRequest, respond: Callable[[BoltResponse], None]) -> None:
        """Dispatch ``req`` in this thread; ``respond`` is called once, with the listener's
        first ack (from whichever thread acks), else Bolt's own response when the dispatch
        ends (no listener claimed it, or it failed before acking), else a 500 once
        ACK_TIMEOUT_S passed without either. Returns when the listener has ended; raises what
        Bolt's dispatch raised, whether or not a response was sent (``respond`` knows)."""
        urgent = self.__urgency.begin() if self.__urgency is not None else None

        def send(response: BoltResponse) -> None:
            try:
                respond(response)
            finally:
                if urgent is not None:  # answered: follow-up work may go on
                    urgent.done()

        answer = Answer(send)
        kind = interaction_kind(req.body)
        req.context["ack"] = TimedAck(kind, time.perf_counter(), answer, self.__watch)
        timeout = self.__watch.after(ACK_TIMEOUT_S, lambda: self.__timed_out(answer, kind))
        try:
            # The lines this request's listener writes name its person and channel, in a
            # context of its own (the transport's thread serves other requests after it).
            answer(contextvars.copy_context().run(self.__dispatch_here, req))
        finally:
            self.__watch.cancel(timeout)
            if urgent is not None:
                urgent.done()

    def dispatch(self, req: BoltRequest) -> BoltResponse:
        answered: list[BoltResponse] = []
        ready = threading.Event()

        def respond(response: BoltResponse) -> None:
            answered.append(response)
            ready.set()

        job = self.__executor.submit(self.answer, req, respond)
        job.add_done_callback(lambda _job: ready.set())
        ready.wait()
        if not answered:
            job.result()  # raises what the dispatch raised (it answers otherwise)
        return answered[0]

    def __timed_out(self, answer: Answer, kind: str) -> None:
        if answer(BoltResponse(status=500, body="")):
            log.warning("a %s request was not acknowledged within %ss", kind, ACK_TIMEOUT_S)

    def __dispatch_here(self, req: BoltRequest) -> BoltResponse:
        new_log_context(user=req.context.user_id, channel=req.context.channel_id)
        return super().dispatch(req)


def answer(app: App, req: BoltRequest, respond: Callable[[BoltResponse], None]) -> None:
    """``req`` dispatched to ``app`` and its response given to ``respond`` once: under
    :class:`PromptAckApp`, at the ack, in this thread; under any other App, when Bolt's
    dispatch returns."""
    if isinstance(app, PromptAckApp):
        app.answer(req, respond)
    else:
        respond(app.dispatch(req))
