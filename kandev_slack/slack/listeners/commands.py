"""``/kandev-questions [filter]`` and its "Next page" button: parse, ack, delegate, tell.

The reply (a listing, or a subcommand's answer) is the ack's body when it is ready within
``LIST_BUDGET_S`` (it usually is, in milliseconds); otherwise the ack is empty (Slack shows
nothing) and the reply follows as an ephemeral message in the channel the command came from
(chat.postEphemeral, answered in milliseconds), else (a conversation the bot is not in, or no
channel) through the command's response_url, whose wait is short (the gateway's
``RESPONSE_URL_TIMEOUT_S``): a response_url that never answers cannot keep the person waiting.
Either way the person sees one message, and the ack never waits long. While listings take
longer than that (with a thousand questions waiting, reading and joining Kandev's list does),
the ack does not wait for them at all.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from slack_bolt import Ack, App

from kandev_slack.cards import words
from kandev_slack.cards.ids import ACTION_NEXT, ACTION_PREVIOUS, COMMAND, CodecError
from kandev_slack.slack.parsing.accounts import AccountVerb, account_command
from kandev_slack.slack.parsing.payloads import PayloadError, parse, parse_click
from kandev_slack.slack.presenters.accounts import Accounts
from kandev_slack.slack.services import Services
from kandev_slack.slack.transport.lanes import when_done
from kandev_slack.surfaces import digest as digest_words
from kandev_slack.surfaces import quiet as quiet_views
from kandev_slack.surfaces.listing import NextPage, parse_next_page
from kandev_slack.usecases.answering.admission import Where
from kandev_slack.usecases.followups.digests import BadDigest, DigestCommand, Digests, parse_digest
from kandev_slack.usecases.followups.quiet import QuietCommand, QuietService, parse_quiet
from kandev_slack.usecases.followups.subscriptions import parse_command
from kandev_slack.usecases.views.listing import Reply

log = logging.getLogger(__name__)

#: How long the command waits for its reply before acking empty (the reply then follows as an
#: ephemeral message): short, so that every ack stays well within 50 ms. A listing that is
#: ready takes 2–5 ms; 25 ms here left acks at 43–65 ms p99 in the benchmark, where a listing
#: that missed it was acked only after the budget plus a busy interpreter's waits.
LIST_BUDGET_S = 0.010
#: How many of the latest listings tell whether the next one is likely ready within the budget.
REMEMBERED = 5


class ListingTimes:
    """How long the latest listings took: the ack waits for a listing only while listings
    have lately been ready within the budget (their median)."""

    def __init__(
        self,
        budget_s: float,
        remembered: int = REMEMBERED,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._budget_s = budget_s
        self._clock = clock
        self._lock = threading.Lock()
        self._took: deque[float] = deque(maxlen=remembered)

    def budget(self) -> float:
        with self._lock:
            took = sorted(self._took)
        if took and took[len(took) // 2] > self._budget_s:
            return 0.0
        return self._budget_s

    def timing(self, future: Future) -> None:
        """Note how long ``future`` (a listing started now) takes."""
        started = self._clock()

        def done(_: Future) -> None:
            with self._lock:
                self._took.append(self._clock() - started)

        future.add_done_callback(done)


class SlashCommand(BaseModel):
    """The form fields of a slash command request that the listing needs."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    user_id: str = Field(min_length=1)
    channel_id: str = ""
    text: str = ""
    response_url: str = ""
    trigger_id: str = ""  # to open a modal (``connect``)


def register(app: App, svc: Services) -> None:
    app.command(COMMAND)(_command(svc, ListingTimes(LIST_BUDGET_S)))
    app.action(ACTION_NEXT)(_next_page(svc))
    app.action(ACTION_PREVIOUS)(_next_page(svc))


def _command(svc: Services, times: ListingTimes):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        try:
            command = parse(SlashCommand, body)
        except PayloadError as exc:
            log.warning("refused a malformed command: %s", exc)
            ack()
            return
        accounts = svc.accounts if svc.accounts is not None and svc.accounts.in_use else None
        verb = account_command(command.text) if accounts is not None else None
        if accounts is not None and verb is not None:
            _account(accounts, verb, command, ack)
            return
        place = svc.reading.reserve()
        if place is None:
            ack(text=words.busy_message(), response_type="ephemeral")
            return
        subcommand = parse_command(command.text)
        quiet = parse_quiet(command.text) if svc.quiet is not None else None
        digest = parse_digest(command.text) if svc.digests is not None else None
        budget = LIST_BUDGET_S
        future: Future[Reply]
        if quiet is not None and svc.quiet is not None:
            future = place.run(_quiet_reply, svc.quiet, quiet, command.user_id)
        elif digest is not None and svc.digests is not None:
            future = place.run(_digest_reply, svc.digests, digest, command.user_id)
        elif subcommand is None:
            budget = times.budget()
            future = place.run(svc.listing.reply, command.text, command.user_id)
            times.timing(future)
        else:
            future = place.run(svc.subscriptions.reply, subcommand, command.user_id)
        try:
            reply = future.result(timeout=budget)
        except FutureTimeout:
            ack()  # nothing shown: the reply is the one message the person sees
            where = Where(command.user_id, command.channel_id or None, command.response_url)
            when_done(future, lambda reply: _follow(svc, where, reply), "listing")
            return
        ack(text=reply.text, blocks=reply.blocks, response_type="ephemeral")

    return handle


def _account(accounts: Accounts, verb: AccountVerb, command: SlashCommand, ack: Ack) -> None:
    """``connect`` (the modal opens: the ack is empty), ``whoami``, ``disconnect`` (answered
    in the ack): no Kandev call, so no lane."""
    where = Where(command.user_id, command.channel_id or None, command.response_url or None)
    if verb == "connect":
        ack()
    answer = accounts.command(verb, command.user_id, command.trigger_id, where)
    if answer is not None:
        text, blocks = answer
        ack(text=text, blocks=blocks, response_type="ephemeral")


def _quiet_reply(service: QuietService, command: QuietCommand, user_id: str) -> Reply:
    """``/kandev-questions quiet …``, worded."""
    reply = service.reply(command, user_id)
    if reply.outcome == "shown":
        text = quiet_views.quiet_shown(reply.hours, reply.tz)
    elif reply.outcome == "set":
        text = quiet_views.quiet_set_message(reply.hours or "", reply.tz or "")
    elif reply.outcome == "off":
        text = quiet_views.quiet_off_message(reply.had)
    elif reply.outcome == "bad":
        text = quiet_views.quiet_bad_message(reply.problem, reply.hours or "")
    else:
        text = quiet_views.quiet_no_tz_message()
    return Reply(text=text, blocks=[])


def _digest_reply(digests: Digests, command: DigestCommand | BadDigest, user_id: str) -> Reply:
    """``/kandev-questions digest …``: done, then said."""
    return Reply(text=digest_words.answer_text(digests.answer(command, user_id)), blocks=[])


def _follow(svc: Services, where: Where, reply: Reply) -> None:
    """A command's reply after its ack: an ephemeral where the command was run, else through
    the command's response_url."""
    svc.notifier.tell(
        where.user_id,
        reply.text,
        channel=where.channel,
        response_url=where.response_url,
        blocks=reply.blocks,
    )


def _send(svc: Services, where: Where, reply: Reply, *, replace: bool = False) -> None:
    """Through the response_url (replacing the previous page), else as an ephemeral."""
    if where.response_url and svc.notifier.reply(
        where.response_url, reply.text, reply.blocks, replace=replace
    ):
        return
    svc.notifier.tell(where.user_id, reply.text, channel=where.channel, blocks=reply.blocks)


def _next(svc: Services, where: Where, wanted: NextPage) -> None:
    reply = svc.listing.reply(wanted.filter, where.user_id, wanted=wanted)
    _send(svc, where, reply, replace=True)


def _next_page(svc: Services):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        click = parse_click(body, log)
        if click is None:
            return
        where = Where(click.user_id, click.channel_id or None, click.response_url or None)
        try:
            wanted = parse_next_page(click.action.value)
        except CodecError:
            svc.tell(where, words.tampered_next_message())
            return
        place = svc.reading.reserve()
        if place is None:
            svc.tell(where, words.busy_message())
            return
        place.run(_next, svc, where, wanted)

    return handle
