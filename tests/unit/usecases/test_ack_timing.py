"""Every acknowledgement is timed by interaction kind (a Bolt middleware in front of every
listener), and the log lines of an interaction name its person, channel and card."""

from __future__ import annotations

import logging
import threading
import time
from types import SimpleNamespace

import pytest
from slack_bolt import App, BoltRequest
from slack_bolt.listener import thread_runner

from bot.ops import metrics
from bot.ops.logs import AddContext
from bot.slack.ack_timing import TimedAck, install_ack_timing, interaction_kind
from bot.slack.ack_wait import AckWaitingRunner, install_ack_waiting
from bot.slack_api.gateway import make_web_client
from bot.store import Store
from tests.kit.factories import ALICE_ID, CHANNEL, make_bundle
from tests.kit.fakes import FakeSlackGateway
from tests.kit.fakeslack import FakeSlack
from tests.unit.ops.metrics_doc import served, value
from tests.unit.slack.slack_bodies import card_click, command, dispatch, eventually


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
    with caplog.at_level(logging.INFO, logger="bot.usecases.answers"):
        status, _ = dispatch(bolt, card_click(found[2], CHANNEL, card.ts, text="MongoDB"))
        assert status == 200
        eventually(
            lambda: [e for e in store.audit_log.audit_entries(card.pending_id) if e.result == "won"]
        )
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


# ---- no polling for the ack (bot/slack/ack_wait.py) -------------------------------------------


def _bare_app(fake_slack: FakeSlack) -> App:
    app = App(
        client=make_web_client(fake_slack.workspace.bot_token, fake_slack.api_url),
        request_verification_enabled=False,
        process_before_response=False,
    )
    install_ack_timing(app)
    install_ack_waiting(app)
    return app


def test_the_ack_leaves_when_it_is_set_not_at_bolts_next_poll(
    fake_slack: FakeSlack, monkeypatch
) -> None:
    """Bolt 1.30 polls ``ack.response`` every 10 ms (time.sleep in its runner); the bot's runner
    waits on the ack's event instead. The listener acks only once the runner is waiting, so a
    runner that polled would have to sleep first."""
    listener_may_ack = threading.Event()
    slept: list[float] = []

    def bolts_sleep(seconds: float) -> None:
        slept.append(seconds)
        listener_may_ack.set()

    monkeypatch.setattr(thread_runner, "time", SimpleNamespace(time=time.time, sleep=bolts_sleep))
    waited: list[float] = []
    event_wait = TimedAck.wait

    def waiting(self: TimedAck, timeout: float) -> bool:
        waited.append(timeout)
        listener_may_ack.set()
        return event_wait(self, timeout)

    monkeypatch.setattr(TimedAck, "wait", waiting)
    app = _bare_app(fake_slack)

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        listener_may_ack.wait(5)
        ack(text="the list")

    response = app.dispatch(BoltRequest(body=command(""), mode="socket_mode"))

    assert (response.status, response.body) == (200, "the list")
    assert slept == [] and len(waited) == 1
    assert isinstance(app.listener_runner, AckWaitingRunner)


def test_a_listener_failing_before_its_ack_signals_bolts_500(
    fake_slack: FakeSlack, monkeypatch
) -> None:
    """Bolt sets the 500 response itself (not through ack()); that too ends the wait."""
    ended: list[bool] = []
    event_wait = TimedAck.wait
    monkeypatch.setattr(
        TimedAck, "wait", lambda self, timeout: ended.append(event_wait(self, timeout)) or True
    )
    app = _bare_app(fake_slack)

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        raise RuntimeError("boom")

    response = app.dispatch(BoltRequest(body=command(""), mode="socket_mode"))

    assert response.status == 500
    assert ended == [True]  # signalled, not timed out


def test_the_bot_app_runs_its_listeners_without_polling(bolt: App) -> None:
    assert isinstance(bolt.listener_runner, AckWaitingRunner)
