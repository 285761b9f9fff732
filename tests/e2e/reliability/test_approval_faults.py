"""Guarantees 1, 5 and 7 for approvals (the real Kandev behind a fault-injecting proxy, clicks
through the fake Slack): a resolve whose reply is lost — the connection cut after Kandev got
it, or a reply slower than the client waits — is settled by reading the transcript, never by
sending it again, and credits the clicker; a resolve that never reached Kandev leaves the card
answerable; a click Slack delivers twice reaches Kandev once; a Slack click racing an MCP
resolve has exactly one winner, shown on the card, and the loser is told."""

from __future__ import annotations

import threading

import pytest

from kandev_slack.core.approval import approval_key
from kandev_slack.kits.fakeslack import ALICE, BOB, Delivery
from tests.e2e.helpers import click_payload, outcome_line, start_bot, wait_card, wait_outcome
from tests.e2e.reliability.support import audit_of
from tests.kit.harness import CHANNEL, Fault, Permissions, permission_spec

RM = permission_spec("Run rm -rf build", "execute", {"command": "rm -rf build", "cwd": "/repo/app"})
ALLOWED_BY_ALICE = f"✅ Allowed once by <@{ALICE.id}> in Slack"


def _bot(app_factory, proxy):
    return start_bot(app_factory, KANDEV_URL=proxy.base_url, KANDEV_HINTS="off")


@pytest.mark.fault("an approval's resolve reply lost (cut, too slow)", guarantee=5)
def test_a_lost_resolve_reply_is_settled_from_the_transcript_never_resent(
    app_factory, seed, kandev_proxy, fake_slack, slack_driver, reliability
):
    bot = _bot(app_factory, kandev_proxy)
    driver = slack_driver(bot.events_url)
    kandev = Permissions(seed.server)
    faults = {"cut after forwarding": Fault.cut_after_forwarding(), "slow reply": Fault.slow(12)}
    outcomes = {}
    for name, fault in faults.items():
        seeded = seed.permission([RM], title=f"Resolve reply {name}")
        key = approval_key(seeded.request_id)
        card = wait_card(fake_slack, key)
        kandev_proxy.inject(key, fault)
        assert driver.click(CHANNEL, card.ts, text="Allow once", user=ALICE).status == 200
        wait_outcome(fake_slack, card.ts, ALLOWED_BY_ALICE, timeout=40)
        kandev_proxy.clear(key)
        outcomes[name] = (
            len(kandev_proxy.answer_calls(key, delivered_only=False)),
            [g["outcome"] for g in kandev.agent_outcomes(seeded.task_id)],
        )
    survived = all(
        calls == 1 and got == [{"outcome": "selected", "optionId": "allow_once"}]
        for calls, got in outcomes.values()
    )
    reliability.record(
        "an approval's resolve reply lost: settled from the transcript",
        survived=survived,
        lost=sum(1 for _, got in outcomes.values() if not got),
        duplicates=sum(max(calls - 1, 0) for calls, _ in outcomes.values()),
    )
    for name, (calls, got) in outcomes.items():
        assert calls == 1, (name, calls)  # settled by reading, never sent again
        assert got == [{"outcome": "selected", "optionId": "allow_once"}], (name, got)


@pytest.mark.fault("an approval's resolve never reaching Kandev", guarantee=5)
def test_a_resolve_that_never_reached_kandev_leaves_the_card_answerable(
    app_factory, seed, kandev_proxy, fake_slack, slack_driver, reliability
):
    bot = _bot(app_factory, kandev_proxy)
    driver = slack_driver(bot.events_url)
    seeded = seed.permission([RM], title="Resolve refused by a gateway")
    key = approval_key(seeded.request_id)
    card = wait_card(fake_slack, key)
    kandev_proxy.inject(key, Fault.reply(503, "upstream down"))
    driver.click(CHANNEL, card.ts, text="Allow once", user=ALICE)
    told = fake_slack.wait_for(
        lambda: next((e for e in fake_slack.ephemerals(user=ALICE.id)), None),
        30,
        "what Alice is told",
    )
    still = outcome_line(fake_slack.message(CHANNEL, card.ts)) is None
    listed = [p["request_id"] for p in Permissions(seed.server).list(seeded.task_id)]
    kandev_proxy.clear(key)
    driver.click(CHANNEL, card.ts, text="Allow once", user=ALICE)
    wait_outcome(fake_slack, card.ts, ALLOWED_BY_ALICE, timeout=20)
    got = Permissions(seed.server).agent_outcomes(seeded.task_id)
    reliability.record(
        "an approval's resolve never reached Kandev: answerable again",
        survived=still and listed == [seeded.request_id] and len(got) == 1,
        lost=0 if got else 1,
        duplicates=max(len(got) - 1, 0),
    )
    assert "not* recorded" in told.all_text and "request is still open" in told.all_text
    assert still and listed == [seeded.request_id]
    assert [g["outcome"]["optionId"] for g in got] == ["allow_once"]


@pytest.mark.fault("an approval click delivered twice; racing an MCP resolve", guarantee=1)
def test_a_redelivered_click_resolves_once_and_a_race_has_one_winner(
    app_factory, seed, fake_slack, slack_driver, tmp_path, reliability
):
    bot = start_bot(app_factory)
    driver = slack_driver(bot.events_url)
    kandev = Permissions(seed.server)

    # Slack delivers the same click again (its retry): one resolve, one outcome.
    seeded = seed.permission([RM], title="Clicked once, delivered twice")
    key = approval_key(seeded.request_id)
    card = wait_card(fake_slack, key)
    payload = click_payload(driver, CHANNEL, card.ts, text="Allow once", user=ALICE)
    first = driver.transport.deliver(
        "interactive", payload, accepts_response_payload=False, delivery=Delivery()
    )
    again = driver.transport.deliver(
        "interactive",
        payload,
        accepts_response_payload=False,
        delivery=Delivery(retry_num=1, retry_reason="http_timeout"),
    )
    assert first.status == 200 and again.status == 200
    wait_outcome(fake_slack, card.ts, ALLOWED_BY_ALICE, timeout=15)
    fake_slack.settle(quiet=1.0, timeout=10)
    once = kandev.agent_outcomes(seeded.task_id)
    sent = [e for e in audit_of(tmp_path / "bot.db", key) if e.result == "won"]

    # Bob clicks while an agent resolves over MCP: exactly one wins, the card shows it.
    raced = seed.permission([RM], title="Slack against MCP")
    raced_key = approval_key(raced.request_id)
    raced_card = wait_card(fake_slack, raced_key)
    start = threading.Barrier(2)
    mcp: dict[str, object] = {}

    def resolve_over_mcp() -> None:
        start.wait()
        try:
            mcp["reply"] = kandev.resolve(raced, "reject_once")
        except Exception as exc:  # the loser's tool error
            mcp["error"] = str(exc)

    thread = threading.Thread(target=resolve_over_mcp)
    thread.start()
    start.wait()
    driver.click(CHANNEL, raced_card.ts, text="Allow once", user=BOB)
    thread.join(timeout=20)
    final = fake_slack.wait_for(
        lambda: outcome_line(fake_slack.message(CHANNEL, raced_card.ts)),
        20,
        "the raced card's outcome",
    )
    got = kandev.agent_outcomes(raced.task_id)
    winner = got[0]["outcome"]["optionId"]
    shown_right = (
        final.startswith(f"✅ Allowed once by <@{BOB.id}> in Slack")
        if winner == "allow_once"
        else final.startswith("⛔ Rejected in Kandev")
    )
    if winner != "allow_once":
        told = fake_slack.wait_for(
            lambda: next(iter(fake_slack.ephemerals(user=BOB.id)), None), 15, "Bob told"
        )
        assert "chose first: Rejected" in told.all_text
    reliability.record(
        "an approval click delivered twice",
        survived=len(once) == 1 and len(sent) == 1,
        duplicates=max(len(once) - 1, 0),
    )
    reliability.record(
        "a Slack approval racing an MCP resolve", survived=len(got) == 1 and shown_right
    )
    assert len(once) == 1 and len(sent) == 1, (once, sent)
    assert len(got) == 1 and shown_right, (got, final, mcp)
