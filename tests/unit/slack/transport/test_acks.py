"""Every acknowledgement is timed by interaction kind (a Bolt middleware in front of every
listener), and the log lines of an interaction name its person, channel and card."""

from __future__ import annotations

import logging
import threading
import time
from types import SimpleNamespace

import pytest
from slack_bolt import Ack, App, BoltRequest
from slack_bolt.listener import thread_runner

from kandev_slack.kits.fakeslack import FakeSlack
from kandev_slack.ops import metrics
from kandev_slack.ops.logs import AddContext, ContextExecutor
from kandev_slack.ops.urgency import Urgency
from kandev_slack.slack.transport.acks import (
    AckBudget,
    AckWatch,
    PromptAckApp,
    acked_within,
    answer,
    interaction_kind,
)
from kandev_slack.slack.transport.guard import raised_in, raised_in_bot
from kandev_slack.slack_api.web_client import make_web_client
from kandev_slack.store import Database
from tests.kit.factories import ALICE_ID, CHANNEL, make_bundle
from tests.kit.fakes import FakeSlackGateway
from tests.unit.ops.metrics_doc import served, value
from tests.unit.slack.slack_bodies import card_click, command, dispatch, eventually


def acks(kind: str) -> float:
    return value(served(metrics.exposition().decode()), "kandev_slack_ack_seconds_count", kind=kind)


def test_a_click_is_timed_and_its_lines_name_the_card_person_and_channel(
    bolt: App, posted, gateway: FakeSlackGateway, store: Database, caplog: pytest.LogCaptureFixture
) -> None:
    card = posted(make_bundle())
    found = gateway.card_of(card.pending_id)
    assert found is not None
    before = acks("block_actions")
    caplog.handler.addFilter(AddContext())
    with caplog.at_level(logging.INFO, logger="kandev_slack.usecases.answering.answers"):
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


# ---- the ack leaves when it is called (kandev_slack/slack/transport/acks.py)
# ----------------------------------


def _bare_app(fake_slack: FakeSlack, urgency: Urgency | None = None) -> App:
    return PromptAckApp(
        executor=ContextExecutor(4, thread_name_prefix="test-listener"),
        urgency=urgency,
        client=make_web_client(fake_slack.workspace.bot_token, fake_slack.api_url),
        request_verification_enabled=False,
    )


def test_the_ack_leaves_when_it_is_called_while_the_listener_goes_on(
    fake_slack: FakeSlack, monkeypatch
) -> None:
    """The response is back while the listener is still running after its ack, and nothing
    polled for it (Bolt's default runner sleeps 10 ms between looks at ``ack.response``)."""
    slept: list[float] = []
    monkeypatch.setattr(thread_runner, "time", SimpleNamespace(time=time.time, sleep=slept.append))
    listener_may_end, listener_ended = threading.Event(), threading.Event()
    app = _bare_app(fake_slack)
    before = acks("command")

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        ack(text="the list")
        listener_may_end.wait(5)
        listener_ended.set()

    response = app.dispatch(BoltRequest(body=command(""), mode="socket_mode"))

    assert (response.status, response.body) == (200, "the list")
    assert not listener_ended.is_set()
    listener_may_end.set()
    assert listener_ended.wait(5)
    assert slept == []
    assert acks("command") == before + 1


def test_a_request_is_urgent_until_it_is_acknowledged(fake_slack: FakeSlack) -> None:
    """Follow-up work (kandev_slack/ops/urgency.py) waits for every request not acknowledged
    yet; once acked, the listener's own work after the ack no longer holds it back."""
    urgency = Urgency()
    app = _bare_app(fake_slack, urgency)
    seen: list[int] = []
    listener_may_end, listener_ended = threading.Event(), threading.Event()

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        seen.append(urgency.in_flight)
        ack(text="the list")
        listener_may_end.wait(5)
        listener_ended.set()

    response = app.dispatch(BoltRequest(body=command(""), mode="socket_mode"))
    assert response.status == 200
    assert seen == [1]
    assert urgency.in_flight == 0 and not listener_ended.is_set()
    listener_may_end.set()
    assert listener_ended.wait(5)

    failing = _bare_app(fake_slack, urgency)

    @failing.command("/kandev-questions")
    def fail(ack) -> None:
        raise RuntimeError("boom")

    assert failing.dispatch(BoltRequest(body=command(""), mode="socket_mode")).status == 500
    assert urgency.in_flight == 0  # a request that failed is urgent no more either


def test_a_listener_failing_before_its_ack_answers_bolts_500(fake_slack: FakeSlack) -> None:
    app = _bare_app(fake_slack)

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        raise RuntimeError("boom")

    started = time.monotonic()
    response = app.dispatch(BoltRequest(body=command(""), mode="socket_mode"))

    assert response.status == 500
    assert time.monotonic() - started < 1  # at once, not after the ack timeout


def test_a_listener_failing_after_its_ack_keeps_the_ack(fake_slack: FakeSlack) -> None:
    app = _bare_app(fake_slack)

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        ack(text="taken")
        raise RuntimeError("boom")

    response = app.dispatch(BoltRequest(body=command(""), mode="socket_mode"))

    assert (response.status, response.body) == (200, "taken")


def test_an_event_is_acked_before_its_listener_runs(fake_slack: FakeSlack) -> None:
    app = _bare_app(fake_slack)
    listener_may_end = threading.Event()
    before = acks("event")

    @app.event("app_home_opened")
    def handle() -> None:
        listener_may_end.wait(5)

    body = {
        "type": "event_callback",
        "team_id": "T0FAKETEAM",
        "event": {"type": "app_home_opened", "user": ALICE_ID, "tab": "home"},
    }
    response = app.dispatch(BoltRequest(body=body, mode="socket_mode"))
    listener_may_end.set()

    assert response.status == 200
    assert acks("event") == before + 1


def test_a_request_no_listener_claims_is_bolts_404_at_once(fake_slack: FakeSlack) -> None:
    app = _bare_app(fake_slack)
    response = app.dispatch(BoltRequest(body=command(""), mode="socket_mode"))
    assert response.status == 404


def test_a_listener_that_never_acks_is_a_failure_after_the_timeout(
    fake_slack: FakeSlack, monkeypatch
) -> None:
    monkeypatch.setattr("kandev_slack.slack.transport.acks.ACK_TIMEOUT_S", 0.2)
    app = _bare_app(fake_slack)
    release = threading.Event()

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        release.wait(5)

    response = app.dispatch(BoltRequest(body=command(""), mode="socket_mode"))
    release.set()
    assert response.status == 500


def test_the_bot_app_answers_at_the_ack(bolt: App) -> None:
    assert isinstance(bolt, PromptAckApp) and bolt.process_before_response


def test_bolt_failing_below_the_dispatch_hop_is_not_the_bots_failure(fake_slack: FakeSlack) -> None:
    """Bolt's kwargs injection chokes on a click without actions (in a middleware, then again
    in its own error handler); the error passes through PromptAckApp.dispatch, which only hands
    the request on, so it is still Bolt's (logged as malformed input, not as a bot bug)."""
    app = _bare_app(fake_slack)
    app.error(lambda error: None)  # an error handler taking arguments, as the bot's
    body = {"type": "block_actions", "user": {"id": ALICE_ID}, "actions": []}
    with pytest.raises(IndexError) as raised:
        app.dispatch(BoltRequest(body=body, mode="socket_mode"))
    assert not raised_in_bot(raised.value)
    assert raised_in(raised.value) == "slack_bolt"


# ---- a slow listener's fallback ack, from the thread waiting for it -----------------------


class _NoTimers:
    def __init__(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("a thread was started for an ack budget")


def test_a_slow_listener_is_acked_at_its_budget_by_the_waiting_thread(
    fake_slack: FakeSlack, monkeypatch
) -> None:
    """``acked_within`` under PromptAckApp starts no thread per interaction (under a crowd a
    thread start waits for the interpreter): the request's dispatching thread, which waits for
    the ack anyway, sends the fallback ack once the budget is spent, and the listener goes on."""
    monkeypatch.setattr(threading, "Timer", _NoTimers)
    app = _bare_app(fake_slack)
    listener_may_end, listener_ended = threading.Event(), threading.Event()
    acked_by: list[str] = []

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        with acked_within(ack, 0.1) as acked:
            listener_may_end.wait(5)
            acked_by.append("listener")
            acked()
        listener_ended.set()

    started = time.monotonic()
    response = app.dispatch(BoltRequest(body=command(""), mode="socket_mode"))
    took = time.monotonic() - started

    assert response.status == 200 and response.body == ""
    assert 0.1 <= took < 2  # at the budget, well before the 3 s timeout
    assert not listener_ended.is_set() and acked_by == []
    listener_may_end.set()
    assert listener_ended.wait(5)


def test_a_listener_acking_within_its_budget_cancels_the_fallback(fake_slack: FakeSlack) -> None:
    app = _bare_app(fake_slack)
    fallbacks: list[int] = []

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        budget = AckBudget(ack, 0.05, lambda: fallbacks.append(1))
        budget.start()
        ack(text="in time")
        budget.cancel()

    response = app.dispatch(BoltRequest(body=command(""), mode="socket_mode"))
    time.sleep(0.2)

    assert (response.status, response.body) == (200, "in time")
    assert fallbacks == []


def test_an_ack_budget_outside_the_app_uses_a_timer() -> None:
    """A bare Bolt Ack (no dispatching thread waits for it): the budget still acks in time."""
    ack = Ack()
    with acked_within(ack, 0.05):
        time.sleep(0.3)
        assert ack.response is not None  # acked by the budget while the block still ran


# ---- answered in the transport's own thread (acks.answer) ---------------------------------


def test_the_ack_is_sent_from_the_transports_thread_before_the_listener_ends(
    fake_slack: FakeSlack,
) -> None:
    """No thread hop between a request and its ack: the listener runs in the thread that
    called ``answer`` (the transport's), which sends the response from inside the ack, then
    the listener goes on."""
    app = _bare_app(fake_slack)
    seen: list[tuple[str, int]] = []
    before = acks("command")

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        seen.append(("listener", threading.get_ident()))
        ack(text="the list")
        seen.append(("after its ack", threading.get_ident()))

    def respond(response) -> None:
        seen.append((f"sent {response.status} {response.body}", threading.get_ident()))

    answer(app, BoltRequest(body=command(""), mode="socket_mode"), respond)

    me = threading.get_ident()
    assert seen == [("listener", me), ("sent 200 the list", me), ("after its ack", me)]
    assert acks("command") == before + 1


def test_only_the_first_response_is_sent(fake_slack: FakeSlack) -> None:
    """A second ack, and the 500 Bolt makes of a listener failing after its ack, are not
    sent: the transport answers a request once."""
    app = _bare_app(fake_slack)

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        ack(text="first")
        ack(text="second")
        raise RuntimeError("boom")

    sent: list = []
    answer(app, BoltRequest(body=command(""), mode="socket_mode"), sent.append)
    assert [(r.status, r.body) for r in sent] == [(200, "first")]


def test_a_request_nothing_acks_gets_bolts_own_response_when_it_ends(fake_slack: FakeSlack) -> None:
    app = _bare_app(fake_slack)

    @app.command("/kandev-questions")
    def fail(ack) -> None:
        raise RuntimeError("boom")

    failed: list = []
    answer(app, BoltRequest(body=command(""), mode="socket_mode"), failed.append)
    unclaimed: list = []
    body = {"type": "block_actions", "user": {"id": ALICE_ID}, "actions": [{"action_id": "x"}]}
    answer(app, BoltRequest(body=body, mode="socket_mode"), unclaimed.append)

    assert [r.status for r in failed] == [500]
    assert [r.status for r in unclaimed] == [404]


def test_a_listener_that_never_acks_is_answered_500_at_the_timeout_while_it_runs(
    fake_slack: FakeSlack, monkeypatch
) -> None:
    monkeypatch.setattr("kandev_slack.slack.transport.acks.ACK_TIMEOUT_S", 0.2)
    urgency = Urgency()
    app = _bare_app(fake_slack, urgency)
    release = threading.Event()
    sent: list = []
    in_flight: list[int] = []

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        release.wait(5)
        in_flight.append(urgency.in_flight)
        ack(text="too late")

    def respond(response) -> None:
        sent.append(response)
        release.set()  # the 500 is sent while the listener still waits

    started = time.monotonic()
    answer(app, BoltRequest(body=command(""), mode="socket_mode"), respond)

    assert [r.status for r in sent] == [500]
    assert 0.2 <= time.monotonic() - started < 2
    assert in_flight == [0]  # answered: urgent no more, though its listener went on


def test_a_slow_listeners_fallback_ack_is_sent_by_the_watch_while_it_runs(
    fake_slack: FakeSlack, monkeypatch
) -> None:
    """``acked_within`` under ``answer``: the budget's ack comes from the app's one watch
    thread (no thread started for the interaction) while the listener is still held up."""
    monkeypatch.setattr(threading, "Timer", _NoTimers)
    app = _bare_app(fake_slack)
    held = threading.Event()
    sent: list[tuple[int, str, bool]] = []

    @app.command("/kandev-questions")
    def handle(ack) -> None:
        with acked_within(ack, 0.1) as acked:
            held.wait(5)
            acked()

    def respond(response) -> None:
        sent.append((response.status, response.body, threading.current_thread().name))
        held.set()

    started = time.monotonic()
    answer(app, BoltRequest(body=command(""), mode="socket_mode"), respond)

    assert sent == [(200, "", "ack-watch")]
    assert 0.1 <= time.monotonic() - started < 2


def test_the_watch_calls_what_is_due_and_nothing_cancelled() -> None:
    watch = AckWatch()
    called: list[str] = []
    done = threading.Event()
    cancelled = watch.after(0.05, lambda: called.append("cancelled"))
    watch.after(0.05, lambda: (called.append("due"), done.set()))
    watch.cancel(cancelled)
    watch.cancel(cancelled)  # twice: no harm

    assert done.wait(2)
    time.sleep(0.1)
    assert called == ["due"]
    finished = watch.after(10, lambda: called.append("never"))
    watch.cancel(finished)
    assert watch.held == 0  # nothing to call: it sleeps, holding no cancelled entry
