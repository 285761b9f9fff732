"""Button clicks on cards (and on the listing / App Home): parse, ack, delegate."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from slack_bolt import Ack, App

from bot.answers import Attempt, Verdict
from bot.cards import ids
from bot.cards.ids import CodecError, ModalOrigin, parse_button_value
from bot.cards.modals import build_answer_modal, build_other_modal, build_reject_modal
from bot.domain import Card
from bot.kandev.models import Answer
from bot.messages import tampered_message, unknown_bundle_message, wrong_channel_message
from bot.slack import refusals
from bot.slack.gateway import SlackError
from bot.slack.payloads import BlockAction, PayloadError, parse
from bot.slack.services import Services

log = logging.getLogger(__name__)

#: How long an option click may spend recording its submission before it is acked anyway
#: (Slack allows 3 s; see ``_acked_within``).
ACK_BUDGET_S = 1.0


def register(app: App, svc: Services) -> None:
    app.action(ids.ACTION_OPTION_PATTERN)(_option_clicked(svc))
    app.action(ids.ACTION_OTHER)(_modal_opener(svc, "other"))
    app.action(ids.ACTION_ANSWER_MODAL)(_modal_opener(svc, "answer"))
    app.action(ids.ACTION_REJECT)(_modal_opener(svc, "reject"))
    app.action(ids.ACTION_OPEN)(_link_clicked)


def _link_clicked(ack: Ack) -> None:
    """A URL button still sends an action; Slack only needs the ack."""
    ack()


def locate(svc: Services, click: BlockAction) -> tuple[Card | None, ModalOrigin, str]:
    """The card a click is about, where it came from, and why not if it cannot be trusted.

    On a card message the card is found by (channel, ts) in the store; the button's value must
    name the same bundle (a tampered value is refused). Elsewhere (listing, App Home) the value
    names the bundle.
    """
    try:
        value = parse_button_value(click.action.value)
    except CodecError:
        return None, "card", tampered_message()
    if click.on_message:
        card = svc.card_at(click.channel_id, click.container.message_ts)
        if card is None:
            named = svc.store.get(value.pending_id)
            if named is not None and named.ts == click.container.message_ts:
                # The card's message, but the interaction claims another channel.
                return None, "card", wrong_channel_message(named.channel)
            return None, "card", unknown_bundle_message()
        if card.pending_id != value.pending_id:
            return None, "card", tampered_message()
        return card, "card", ""
    origin: ModalOrigin = "home" if click.container.type == "view" else "list"
    card = svc.answers.card(value.pending_id)
    return card, origin, "" if card is not None else unknown_bundle_message()


def _refused_click(
    svc: Services, click: BlockAction, action: str, kind: str, pending_id: str | None = None
) -> None:
    """Audit a click refused before anything reached Kandev (who, which bundle, why)."""
    where = f"{click.channel_id}/{click.container.message_ts or click.container.view_id}"
    detail = f"value {refusals.quote(click.action.value, 60)} at {where}"
    svc.store.audit(pending_id, click.user_id, action, "slack:button", kind, detail)


def _refusal_kind(problem: str) -> str:
    """The audit result for a ``locate`` problem."""
    if problem == tampered_message():
        return "tampered"
    return "unknown_bundle" if problem == unknown_bundle_message() else "wrong_channel"


def _claimed_bundle(click: BlockAction) -> str | None:
    """The bundle a refused click's button value names (for the audit), if it names one."""
    try:
        return parse_button_value(click.action.value).pending_id
    except CodecError:
        return None


def _malformed(svc: Services, body: dict[str, Any], action: str, exc: PayloadError) -> None:
    log.warning("refused a malformed click: %s", exc)
    refusals.refuse(
        svc,
        body,
        action=action,
        source="slack:button",
        result="malformed",
        message=refusals.malformed_message(),
        detail=str(exc),
    )


class _AckOnce:
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
                log.exception("could not acknowledge a click")


@contextmanager
def _acked_within(ack: Ack, budget_s: float) -> Iterator[None]:
    """Ack when the block ends (even by an exception), or after ``budget_s`` if it is still
    running then.

    The block records the click durably before the ack, so a crash right after the ack cannot
    lose it. What it does is local (SQLite/PostgreSQL), except the permission precheck, which
    may call Slack's usergroups.users.list when a route restricts answerers by user group
    (cached 60 s). Rather than a timeout on that call (a half-resolved group must not grant or
    deny access), a slow block is acked after ``budget_s`` and goes on as before this ordering
    existed: in that rare case a crash in the next few milliseconds can still lose the click.
    """
    once = _AckOnce(ack)
    timer = threading.Timer(budget_s, once)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        once()


def _option_clicked(svc: Services):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        # parse / locate / begin (local, durable) -> ack -> Kandev -> tell
        with _acked_within(ack, ACK_BUDGET_S):
            then = _record_click(svc, body)
        then()

    return handle


def _record_click(svc: Services, body: dict[str, Any]) -> Callable[[], None]:
    """Everything an option click does before its ack: parse it, find its card, and record the
    submission (AnswerService.begin). Returns what is left to do once acked."""
    try:
        click = parse(BlockAction, body)
    except PayloadError as exc:
        return functools.partial(_malformed, svc, body, "answer", exc)
    card, _origin, problem = locate(svc, click)
    channel = click.channel_id or None

    def tell(text: str) -> None:
        svc.tell(click.user_id, text, channel=channel, response_url=click.response_url)

    if card is None:

        def refuse() -> None:
            _refused_click(svc, click, "answer", _refusal_kind(problem), _claimed_bundle(click))
            tell(problem)

        return refuse
    value = parse_button_value(click.action.value)
    question = card.bundle.question(value.question_id)
    if question is None or question.option(value.option_id) is None:

        def tampered() -> None:
            _refused_click(svc, click, "answer", "tampered", card.pending_id)
            tell(tampered_message())

        return tampered
    attempt = Attempt(
        pending_id=card.pending_id,
        user_id=click.user_id,
        action="answer",
        source="button",
        answers=(Answer(question_id=question.question_id, selected_options=[value.option_id]),),
        channel=channel if click.on_message else None,
    )
    begun = svc.answers.begin(attempt)

    def complete() -> None:
        verdict = begun if isinstance(begun, Verdict) else svc.answers.complete(begun)
        svc.tell_verdict(click.user_id, verdict, channel=channel, response_url=click.response_url)

    return complete


def _modal_opener(svc: Services, kind: str):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        action = "reject" if kind == "reject" else "answer"
        try:
            click = parse(BlockAction, body)
        except PayloadError as exc:
            _malformed(svc, body, action, exc)
            return
        card, origin, problem = locate(svc, click)
        channel = click.channel_id or None
        if card is None:
            _refused_click(svc, click, action, _refusal_kind(problem), _claimed_bundle(click))
            svc.tell(click.user_id, problem, channel=channel, response_url=click.response_url)
            return
        refusal = svc.answers.precheck(
            card, click.user_id, channel if click.on_message else None, action=kind
        )
        if refusal is not None:
            # Refused before the modal opens: audited here, as submit() audits its refusals.
            _refused_click(svc, click, action, refusal.kind, card.pending_id)
            svc.tell_verdict(
                click.user_id, refusal, channel=channel, response_url=click.response_url
            )
            return
        view = build_modal(svc, card, kind, origin=origin, response_url=click.response_url)
        try:
            svc.slack.open_view(click.trigger_id, view)
        except SlackError as exc:
            log.warning("could not open the %s modal: %s", kind, exc.error)
            svc.tell(
                click.user_id,
                "Slack did not open the form in time; please click again.",
                channel=channel,
                response_url=click.response_url,
            )

    return handle


def build_modal(
    svc: Services, card: Card, kind: str, *, origin: ModalOrigin, response_url: str = ""
) -> dict[str, Any]:
    common: dict[str, Any] = {
        "kandev_url": svc.kandev_public_url,
        "channel": card.channel,
        "ts": card.ts or "",
        "origin": origin,
        "response_url": response_url,
    }
    if kind == "reject":
        return build_reject_modal(card.bundle, card.task, **common)
    if kind == "other" and len(card.bundle.questions) == 1:
        return build_other_modal(card.bundle, card.task, card.bundle.questions[0], **common)
    return build_answer_modal(card.bundle, card.task, **common)
