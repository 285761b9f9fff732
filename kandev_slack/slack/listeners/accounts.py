"""A person's own Kandev account: the Connect / Disconnect buttons, the connect modal, and the
offer of a click made before connecting (parse, ack, delegate, tell;
kandev_slack/slack/presenters/accounts.py). ``/kandev-questions connect | whoami |
disconnect`` are answered by the command's listener (commands.py), delegating to the same."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App, BoltRequest

from kandev_slack.cards import ids
from kandev_slack.slack.parsing import requests
from kandev_slack.slack.parsing.accounts import account_click, parked_choice
from kandev_slack.slack.presenters.accounts import Accounts
from kandev_slack.slack.services import Services
from kandev_slack.slack.transport.acks import acked_within

#: How long "Send it" may spend recording the kept click before it is acked anyway (as an
#: option click: kandev_slack/slack/listeners/actions.py).
ACK_BUDGET_S = 1.0


def register(app: App, svc: Services) -> None:
    accounts = svc.accounts
    if accounts is None:  # not wired (some tests): the buttons fall to the fallback listener
        return
    app.action(ids.ACTION_CONNECT)(_connect_clicked(accounts))
    app.action(ids.ACTION_DISCONNECT)(_disconnect_clicked(accounts))
    app.view(ids.CALLBACK_CONNECT)(_connect_submitted(accounts))
    app.view(ids.CALLBACK_CONNECTED)(lambda ack: ack())
    app.action(ids.ACTION_PARKED_SEND)(_parked_sent(accounts))
    app.action(ids.ACTION_PARKED_DISCARD)(_parked_discarded(accounts))


def _connect_clicked(accounts: Accounts):
    """Connect / Reconnect: the modal opens (its trigger is valid 3 s: at once)."""

    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        click = account_click(body)
        if click is not None:
            accounts.open_connect(click)

    return handle


def _disconnect_clicked(accounts: Accounts):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        click = account_click(body)
        if click is not None:
            accounts.disconnect_clicked(click)

    return handle


def _connect_submitted(accounts: Accounts):
    """The token: answered in the ack (a field error, "Connected") or, Kandev being slow,
    "Checking…" then by views.update."""

    def handle(ack: Ack, body: dict[str, Any]) -> None:
        accounts.submitted(ack, body)

    return handle


def _parked_sent(accounts: Accounts):
    def handle(ack: Ack, body: dict[str, Any], request: BoltRequest) -> None:
        choice = parked_choice(body)
        if choice is None:
            ack()
            return
        redelivery = requests.retry_num(request.headers) >= 1
        with acked_within(ack, ACK_BUDGET_S) as acked:
            accounts.send_parked(acked, choice, redelivery=redelivery)

    return handle


def _parked_discarded(accounts: Accounts):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        choice = parked_choice(body)
        if choice is not None:
            accounts.discard_parked(choice)

    return handle
