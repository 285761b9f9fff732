"""A digest's "Answer…" (kandev_slack/surfaces/digest.py): its message is not a card, so the
click names its item by the button's value, as a listing's does (via "list"); a click on a
card's own message stays a card's (recognised by channel and ts)."""

from __future__ import annotations

from datetime import timedelta

from kandev_slack.cards import ids
from kandev_slack.core.domain import TaskInfo
from kandev_slack.slack.parsing import requests
from kandev_slack.slack.parsing.requests import Interaction
from kandev_slack.slack_api.gateway import Message
from kandev_slack.surfaces.digest import DigestView, render_digest
from kandev_slack.surfaces.waiting import Waiting
from tests.kit.factories import KANDEV_URL, NOW, make_bundle, make_question
from tests.unit.slack.slack_bodies import card_click


def test_a_digest_answer_click_names_its_item_like_a_listing() -> None:
    bundle = make_bundle(
        make_question(1), pending_id="p-digest", created_at=NOW - timedelta(hours=2)
    )
    item = Waiting(listed=bundle, task=TaskInfo(task_id=bundle.task_id, title="Digest me"))
    rendered = render_digest(DigestView("person", (item,), 1, NOW, KANDEV_URL))
    message = Message(text=rendered["text"], blocks=rendered["blocks"])
    body = card_click(message, "C0QUESTION", "1700000000.000900", action_id=ids.ACTION_ANSWER_MODAL)
    assert body["actions"][0]["block_id"].startswith(ids.BLOCK_DIGEST)
    parsed = requests.click(body, "answer")
    assert isinstance(parsed, Interaction)
    assert parsed.request.via == "list" and parsed.request.pending_id == "p-digest"
    assert parsed.request.channel is None and parsed.request.ts is None
    # the same click on a block that is not a digest's is a card's
    body["actions"][0]["block_id"] = "kq_title"
    card = requests.click(body, "answer")
    assert isinstance(card, Interaction) and card.request.via == "card"
