"""An approval's full view: "Review and decide…" opens it; an option chosen in it (a button
in a modal) is parsed like a click on the card, carrying its option, the card named by the
modal's metadata."""

from __future__ import annotations

from datetime import timedelta

from slack_bolt import App

from kandev_slack.cards import ids
from kandev_slack.cards.ids import ModalMetadata
from kandev_slack.core.approval import Approval, ToolAction, ToolOption
from kandev_slack.core.domain import Card, NewCard
from kandev_slack.kinds.approval.cards.rows import approvals_blocks
from kandev_slack.kinds.approval.cards.view import whole_view
from kandev_slack.kits.fakeslack import ALICE, find_element, payloads
from kandev_slack.slack.parsing import requests
from kandev_slack.slack.parsing.requests import Interaction
from kandev_slack.store import Database
from tests.kit.factories import KANDEV_URL, NOW, make_task
from tests.kit.fakes import FakeSlackGateway
from tests.unit.slack.slack_bodies import (
    TRIGGER_ID,
    VIEW_ID,
    WS,
    dispatch,
    eventually,
    home_click,
)


def _card() -> Card:
    item = Approval(
        task_id="t-1",
        session_id="s-1",
        request_id="r-1",
        pending_id="p-1",
        created_at=NOW - timedelta(seconds=5),
        action=ToolAction(type="command", command="rm -rf build", cwd="/repo"),
        options=(
            ToolOption(option_id="allow_once", name="Allow once", kind="allow_once"),
            ToolOption(option_id="reject_once", name="Reject", kind="reject_once"),
        ),
    )
    return Card(
        pending_id=item.item_id,
        task_id="t-1",
        session_id="s-1",
        channel="C0QUESTION",
        ts="1700000000.000100",
        item=item,
        task=make_task("t-1"),
        created_at=NOW,
        updated_at=NOW,
    )


def test_an_option_in_the_full_view_carries_its_option_and_names_the_card() -> None:
    """Before: a button in a modal lost its option (only Conversation's "Answer…" was one),
    so the full view could not resolve an approval."""
    card = _card()
    meta = ModalMetadata(
        pending_id=card.pending_id, channel=card.channel, ts=card.ts or "", origin="home"
    )
    view = whole_view(card, kandev_url=KANDEV_URL, metadata=meta.encode(), waiting=True)
    ref = find_element(view["blocks"], text="Allow once")
    body = payloads.block_actions(
        WS,
        ALICE,
        container={"type": "view", "view_id": VIEW_ID},
        actions=[payloads.action_item(ref)],
        trigger_id=TRIGGER_ID,
        response_url=None,
        view={**view, "id": VIEW_ID},
    )
    parsed = requests.click(body, "approve", option=True)
    assert isinstance(parsed, Interaction) and parsed.in_modal
    request = parsed.request
    assert request.option == ("", "allow_once")
    assert (request.pending_id, request.channel, request.ts) == (card.pending_id, *meta_of(card))
    assert request.via == "home" and request.form


def meta_of(card: Card) -> tuple[str, str | None]:
    return card.channel, card.ts


def test_review_on_home_opens_the_full_view_of_that_approval(
    bolt: App, store: Database, gateway: FakeSlackGateway
) -> None:
    """ "Review and decide…" (a Home row): acked, admitted, the full view opened with the whole
    command and the options."""
    card = _card()
    assert store.cards.record_card(NewCard(card.approval, card.task, card.channel))
    rows = approvals_blocks([(card, None)], kandev_url=KANDEV_URL, limit=3)
    home = {"type": "home", "blocks": rows}

    status, _ = dispatch(bolt, home_click(home, action_id=ids.ACTION_APPROVAL_VIEW))

    assert status == 200
    [opened] = eventually(lambda: gateway.called("views.open"))
    view = opened["view"]
    assert view["callback_id"] == ids.CALLBACK_APPROVAL_VIEW
    assert "rm -rf build" in str(view["blocks"])
    labels = [
        e["text"]["text"] for b in view["blocks"] if b["type"] == "actions" for e in b["elements"]
    ]
    assert labels == ["Allow once", "Reject"]
