"""Button clicks on cards (and on the listing / App Home): parse, ack, delegate, tell
(kandev_slack/usecases/answering/interactions.py runs the pipeline,
kandev_slack/slack/presenters/tell.py shows each result)."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App, BoltRequest

from kandev_slack.cards import ids
from kandev_slack.cards.wording import Action
from kandev_slack.slack.parsing import requests
from kandev_slack.slack.parsing.forms import FormKind, action_of, other_fields_update
from kandev_slack.slack.services import Services
from kandev_slack.slack.transport.acks import acked_within

#: How long an option click may spend recording its submission before it is acked anyway
#: (Slack allows 3 s; see ``acked_within``).
ACK_BUDGET_S = 1.0


def register(app: App, svc: Services) -> None:
    app.action(ids.ACTION_OPTION_PATTERN)(_option_clicked(svc, "answer"))
    app.action(ids.ACTION_APPROVE_PATTERN)(_option_clicked(svc, "approve"))
    app.action(ids.ACTION_OTHER)(_form_opener(svc, "other"))
    app.action(ids.ACTION_ANSWER_MODAL)(_form_opener(svc, "answer"))
    app.action(ids.ACTION_REJECT)(_form_opener(svc, "reject"))
    app.action(ids.ACTION_SKIP)(_skip_clicked(svc))
    app.action(ids.ACTION_CLAIM)(_claim_clicked(svc, release=False))
    app.action(ids.ACTION_RELEASE)(_claim_clicked(svc, release=True))
    app.action(ids.ACTION_SNOOZE)(_snooze_chosen(svc))
    app.action(ids.ACTION_UNSNOOZE)(_unsnooze_clicked(svc))
    app.action(ids.ACTION_ANSWER_ALL)(_answer_all_clicked(svc))
    app.action(ids.ACTION_ANSWER_ALL_NO)(_answer_all_declined(svc))
    app.action(ids.ACTION_OPEN)(_link_clicked)
    app.action(ids.ACTION_CONVERSATION)(_conversation_opened(svc))
    app.action(ids.ACTION_APPROVAL_VIEW)(_whole_opened(svc))
    app.action(ids.ACTION_MORE)(_more_chosen(svc))
    app.action(ids.ACTION_SKIP_CONFIRM)(_skip_confirmed(svc))
    app.action(ids.ACTION_SKIP_KEEP)(_skip_kept(svc))
    app.action(ids.ACTION_CHOICE)(_choice_made(svc))


def _choice_made(svc: Services):
    """An option picked in an answer form (its radio groups report at once): show the
    "Your own answer" field under a question answered "Other…", and only there."""

    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        update = other_fields_update(body)
        if update is not None:
            svc.notifier.update_view(*update)

    return handle


def _link_clicked(ack: Ack) -> None:
    """A URL button still sends an action; Slack only needs the ack."""
    ack()


def _option_clicked(svc: Services, action: Action):
    """A one-click choice: a question's option ("answer") or an approval's ("approve")."""
    return _one_click(svc, action, option=True)


def _skip_clicked(svc: Services):
    """Skip: a rejection in one click, with Kandev's own reason (no form)."""
    return _one_click(svc, "reject", option=False)


def _one_click(svc: Services, action: Action, *, option: bool):
    """A click that is the whole answer: an option, or Skip (``option=False``)."""

    def handle(ack: Ack, body: dict[str, Any], request: BoltRequest) -> None:
        # parse / admit / record (local, durable) -> ack -> Kandev -> tell
        with acked_within(ack, ACK_BUDGET_S) as acked:
            retries = requests.retry_num(request.headers)
            click = requests.click(body, action, option=option, retries=retries)
            reply = svc.click_reply(acked, click.where, view_id=requests.modal_of(click))
            if option:
                svc.interactions.click(click, reply)
            else:
                svc.interactions.skip(click, reply)

    return handle


def _claim_clicked(svc: Services, *, release: bool):
    """ "I'm on it" / "Take over" (``release`` False) or "Release": one write, then the ack."""
    action: Action = "release" if release else "claim"

    def handle(ack: Ack, body: dict[str, Any], request: BoltRequest) -> None:
        with acked_within(ack, ACK_BUDGET_S) as acked:
            retries = requests.retry_num(request.headers)
            click = requests.click(body, action, retries=retries)
            svc.interactions.claim(click, svc.click_reply(acked, click.where), release=release)

    return handle


def _snooze_chosen(svc: Services):
    """A "Snooze…" option chosen (DM card, Home item): one write, then the ack."""

    def handle(ack: Ack, body: dict[str, Any], request: BoltRequest) -> None:
        with acked_within(ack, ACK_BUDGET_S) as acked:
            retries = requests.retry_num(request.headers)
            chosen = requests.snooze_choice(body, retries=retries)
            svc.interactions.snooze(chosen, svc.click_reply(acked, chosen.where))

    return handle


def _answer_all_clicked(svc: Services):
    """Send on the offer to answer every identical question: each member recorded (through
    the one pipeline) before the ack, as an option click is."""

    def handle(ack: Ack, body: dict[str, Any], request: BoltRequest) -> None:
        with acked_within(ack, ACK_BUDGET_S) as acked:
            pending_id, where, detail = requests.offer_click(body)
            members = requests.offer_members(body)
            redelivery = requests.retry_num(request.headers) >= 1
            svc.answer_all(
                acked, pending_id, where, detail=detail, redelivery=redelivery, members=members
            )

    return handle


def _unsnooze_clicked(svc: Services):
    """ "Unsnooze" (a snoozed DM card, Home's snoozed section): one write, then the ack."""

    def handle(ack: Ack, body: dict[str, Any], request: BoltRequest) -> None:
        with acked_within(ack, ACK_BUDGET_S) as acked:
            retries = requests.retry_num(request.headers)
            click = requests.click(body, "unsnooze", retries=retries)
            svc.interactions.snooze(click, svc.click_reply(acked, click.where), undo=True)

    return handle


def _answer_all_declined(svc: Services):
    """No thanks: the offer goes away."""

    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        pending_id, where, _detail = requests.offer_click(body)
        svc.decline_all(pending_id, where)

    return handle


def _conversation_opened(svc: Services):
    """Open the Conversation view at once ("Loading…"), fill it in the reading lane."""

    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        svc.open_conversation(requests.click(body, "view"))

    return handle


def _whole_opened(svc: Services):
    """An approval's full view: the whole command and, while it waits, its options."""

    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        svc.open_whole(requests.click(body, "view"))

    return handle


def _form_opener(svc: Services, kind: FormKind):
    def handle(ack: Ack, body: dict[str, Any], request: BoltRequest) -> None:
        ack()
        retries = requests.retry_num(request.headers)
        svc.open_form(requests.click(body, action_of(kind), retries=retries), kind)

    return handle


def _more_chosen(svc: Services):
    """An option of a card's "More" overflow: the same use-case as the button it replaces
    (Skip… first asks to confirm); an option this app did not make is refused as a tampered
    button is."""
    claim = _claim_clicked(svc, release=False)
    release = _claim_clicked(svc, release=True)
    reject = _form_opener(svc, "reject")
    conversation = _conversation_opened(svc)

    def handle(ack: Ack, body: dict[str, Any], request: BoltRequest) -> None:
        match requests.more_choice(body):
            case "claim":
                claim(ack, body, request)
            case "release":
                release(ack, body, request)
            case "reject":
                reject(ack, body, request)
            case "conversation":
                conversation(ack, body)
            case "skip":
                ack()
                svc.ask_skip(requests.click(body, "reject"))
            case _:
                ack()
                svc.open_form(requests.click(body, "reject"), "reject")

    return handle


def _skip_confirmed(svc: Services):
    """ "Skip it" on the confirm of Skip…: the rejection as the Skip button sends it."""

    def handle(ack: Ack, body: dict[str, Any], request: BoltRequest) -> None:
        with acked_within(ack, ACK_BUDGET_S) as acked:
            retries = requests.retry_num(request.headers)
            click = requests.skip_confirmed(body, retries=retries)
            svc.interactions.skip(click, svc.click_reply(acked, click.where))
        svc.end_confirm(click.where)

    return handle


def _skip_kept(svc: Services):
    """ "Keep" on the confirm of Skip…: nothing is sent, the confirm goes away."""

    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        svc.end_confirm(requests.where_of(body))

    return handle
