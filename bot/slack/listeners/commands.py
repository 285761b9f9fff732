"""``/kandev-questions [filter]`` and its "Next page" button: parse, ack, delegate.

The listing is computed while Slack waits for the ack when Kandev answers in time (it usually
does, in milliseconds); otherwise the ack says "Looking…" and the listing follows through the
command's response_url.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from slack_bolt import Ack, App

from bot.cards.ids import CodecError
from bot.cards.listing import (
    ACTION_NEXT,
    COMMAND,
    looking_message,
    parse_next_page,
    tampered_next_message,
)
from bot.listing import ListingService, Reply
from bot.slack.gateway import SlackError
from bot.slack.payloads import BlockAction, PayloadError, parse
from bot.slack.services import Services

log = logging.getLogger(__name__)

#: How long the command waits for the listing before acking with "Looking…" (Slack allows 3 s).
LIST_BUDGET_S = 2.0


class SlashCommand(BaseModel):
    """The form fields of a slash command request that the listing needs."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    user_id: str = Field(min_length=1)
    channel_id: str = ""
    text: str = ""
    response_url: str = ""


def register(app: App, svc: Services) -> None:
    if svc.listing is None:
        log.warning("no listing service wired: %s is not available", COMMAND)
        return
    app.command(COMMAND)(_command(svc, svc.listing))
    app.action(ACTION_NEXT)(_next_page(svc, svc.listing))


def _command(svc: Services, listing: ListingService):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        try:
            command = parse(SlashCommand, body)
        except PayloadError as exc:
            log.warning("refused a malformed command: %s", exc)
            ack()
            return
        future: Future[Reply] = svc.executor.submit(listing.reply, command.text)
        try:
            reply = future.result(timeout=LIST_BUDGET_S)
        except FutureTimeout:
            ack(text=looking_message(), response_type="ephemeral")
            future.add_done_callback(lambda f: _follow_up(svc, command, f))
            return
        ack(text=reply.text, blocks=reply.blocks, response_type="ephemeral")

    return handle


def _follow_up(svc: Services, command: SlashCommand, future: Future[Reply]) -> None:
    try:
        reply = future.result()
    except Exception:
        log.exception("listing failed")
        return
    _send(svc, command.user_id, command.channel_id, command.response_url, reply)


def _send(
    svc: Services,
    user: str,
    channel: str,
    response_url: str,
    reply: Reply,
    *,
    replace: bool = False,
) -> None:
    if response_url:
        try:
            svc.slack.respond(response_url, reply.text, reply.blocks, replace_original=replace)
            return
        except SlackError as exc:
            log.warning("listing via response_url failed: %s", exc.error)
    svc.tell(user, reply.text, channel=channel or None, blocks=reply.blocks)


def _next_page(svc: Services, listing: ListingService):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        try:
            click = parse(BlockAction, body)
        except PayloadError as exc:
            log.warning("refused a malformed click: %s", exc)
            return
        try:
            wanted = parse_next_page(click.action.value)
        except CodecError:
            svc.tell(
                click.user_id,
                tampered_next_message(),
                channel=click.channel_id or None,
                response_url=click.response_url,
            )
            return
        reply = listing.reply(wanted.filter, after=wanted.after, number=wanted.number)
        _send(svc, click.user_id, click.channel_id, click.response_url, reply, replace=True)

    return handle
