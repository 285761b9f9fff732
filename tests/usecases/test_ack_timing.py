"""Every acknowledgement is timed by interaction kind (a Bolt middleware in front of every
listener), and the log lines of an interaction name its person, channel and card."""

from __future__ import annotations

import logging

import pytest
from slack_bolt import App

from bot import metrics
from bot.logs import AddContext
from bot.slack.ack_timing import interaction_kind
from bot.store import Store
from tests.factories import ALICE_ID, CHANNEL, make_bundle
from tests.fakes import FakeSlackGateway
from tests.ops.metrics_doc import served, value
from tests.usecases.slack_bodies import card_click, dispatch, eventually


def acks(kind: str) -> float:
    return value(served(metrics.exposition().decode()), "kandev_slack_ack_seconds_count", kind=kind)


def test_a_click_is_timed_and_its_lines_name_the_card_person_and_channel(
    bolt: App, posted, gateway: FakeSlackGateway, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    card = posted(make_bundle())
    found = gateway.card_of(card.pending_id)
    assert found is not None
    before = acks("block_actions")
    caplog.handler.addFilter(AddContext())
    with caplog.at_level(logging.INFO, logger="bot.answers"):
        status, _ = dispatch(bolt, card_click(found[2], CHANNEL, card.ts, text="MongoDB"))
        assert status == 200
        eventually(lambda: [e for e in store.audit_entries(card.pending_id) if e.result == "won"])
    assert acks("block_actions") == before + 1
    [line] = [r for r in caplog.records if r.getMessage().startswith(f"answer from {ALICE_ID}")]
    assert line.log_context["pending_id"] == card.pending_id  # type: ignore[attr-defined]
    assert line.log_context["user"] == ALICE_ID  # type: ignore[attr-defined]
    assert line.log_context["channel"] == CHANNEL  # type: ignore[attr-defined]


def test_interaction_kinds() -> None:
    assert interaction_kind({"type": "block_actions"}) == "block_actions"
    assert interaction_kind({"type": "view_submission"}) == "view_submission"
    assert interaction_kind({"type": "message_action"}) == "shortcut"
    assert interaction_kind({"command": "/kandev-questions", "text": ""}) == "command"
    assert interaction_kind({"type": "event_callback"}) == "event"
    assert interaction_kind(["not", "a", "dict"]) == "event"
