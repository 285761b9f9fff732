"""Guarantees 5, 6 and 14: every reply to an answer call has a definite outcome, and the person
is told the truth about it (the real Kandev behind a fault-injecting proxy, the bot as a
process, clicks through the fake Slack).

- Replies outside Kandev's table (403, an HTML 404, a long 429, an HTML 200) finish the click
  with "not recorded" (the 429 with its wait), are audited, and leave the card answerable: a
  later click records the answer. A short 429 is waited out and the answer goes through.
- A call that reached Kandev but whose reply never came back (connection cut after forwarding,
  or a reply slower than the client's read timeout) is never reported "not recorded": the person
  hears that Kandev did not confirm, and once Kandev answers again the bot settles it (re-sending
  is safe) and the card shows the person's answer.
- The same content Kandev refused before is refused again in words, not silently.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kandev_slack.kits.fakeslack import ALICE, BOB
from kandev_slack.usecases.leases import SUBMISSION_LEASE_S
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    buttons,
    db_question,
    outcome_line,
    response_of,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.e2e.reliability.deliveries import submissions, tool_answers
from tests.e2e.reliability.support import audit_of, still_pending
from tests.kit.harness import CHANNEL, Fault

NOT_RECORDED = "not* recorded"
NOT_CONFIRMED = "did not confirm"
#: The bot's own Kandev client: attempts per call and the read timeout of each
#: (kandev_slack/app.py).
ATTEMPTS = 3
READ_TIMEOUT_S = 10.0
#: Until crash recovery takes over a submission nobody is sending any more, plus a poll.
TAKEOVER_S = SUBMISSION_LEASE_S + POLL_S + MARGIN_S + 5


def _bot(app_factory, proxy):
    return start_bot(app_factory, KANDEV_URL=proxy.base_url, KANDEV_HINTS="off")


def _told(fake, user: str, contains: str) -> list[str]:
    return [e.all_text for e in fake.ephemerals(user=user) if contains in e.all_text]


def _answerable(fake, ts: str) -> bool:
    message = fake.message(CHANNEL, ts)
    return outcome_line(message) is None and "MongoDB" in buttons(message)


@pytest.mark.fault("respond answers outside Kandev's table (403, HTML 404/200, 429)", guarantee=5)
def test_replies_outside_the_table_are_not_recorded_and_the_card_stays_answerable(
    app_factory, seed, kandev_proxy, fake_slack, slack_driver, tmp_path: Path, reliability
):
    bot = _bot(app_factory, kandev_proxy)
    faults = {
        "403": Fault.reply(403, '{"error":"forbidden by policy"}'),
        "html 404": Fault.reply(404, "<html><body>Not Found</body></html>"),
        "429 for two minutes": Fault.reply(429, "slow down", {"Retry-After": "120"}),
        "html 200": Fault.reply(200, "<html><body>Welcome to nginx!</body></html>"),
    }
    bundles = {name: seed([db_question()], title=f"Kandev answers {name}") for name in faults}
    brief = seed([db_question()], title="Kandev asks for a one-second pause")
    cards = {name: wait_card(fake_slack, b.pending_id) for name, b in bundles.items()}
    brief_card = wait_card(fake_slack, brief.pending_id)
    driver = slack_driver(bot.events_url)

    for name, fault in faults.items():
        kandev_proxy.inject(bundles[name].pending_id, fault)
    kandev_proxy.inject(brief.pending_id, Fault.reply(429, "", {"Retry-After": "1"}, times=1))
    for clicked, name in enumerate(faults, 1):
        ack = driver.click(CHANNEL, cards[name].ts, text="MongoDB", user=ALICE)
        assert ack.status == 200 and ack.elapsed < 3.0, (name, ack)
        fake_slack.wait_for(
            lambda n=clicked: len(_told(fake_slack, ALICE.id, NOT_RECORDED)) >= n or None,
            15,
            f"the not-recorded message for {name}",
        )
    ack = driver.click(CHANNEL, brief_card.ts, text="MongoDB", user=BOB)
    assert ack.status == 200 and ack.elapsed < 3.0
    wait_outcome(fake_slack, brief_card.ts, f"✅ Answered by <@{BOB.id}> in Slack", 10)

    told = _told(fake_slack, ALICE.id, NOT_RECORDED)
    db = tmp_path / "bot.db"
    audits = {name: audit_of(db, b.pending_id) for name, b in bundles.items()}
    left_open = {name: still_pending(seed.server, b) for name, b in bundles.items()}
    answerable = {name: _answerable(fake_slack, cards[name].ts) for name in faults}
    in_flight = {
        name: [s for s in submissions(f"sqlite:///{db}", b.pending_id) if not s.finished]
        for name, b in bundles.items()
    }

    # Each card can still be answered: the same click goes through once the fault is gone.
    for name, b in bundles.items():
        kandev_proxy.clear(b.pending_id)
        driver.click(CHANNEL, cards[name].ts, text="MongoDB", user=ALICE)
        wait_outcome(fake_slack, cards[name].ts, f"✅ Answered by <@{ALICE.id}> in Slack", 15)
    finals = {
        name: wait_final(seed.server, b.task_id, b.pending_id, "answered")
        for name, b in bundles.items()
    }
    agents = {
        name: tool_answers(seed.server.agent_result(b.task_id, timeout=10))
        for name, b in bundles.items()
    }

    survived = (
        len(told) == len(faults)
        and all(left_open.values())
        and all(answerable.values())
        and not any(in_flight.values())
    )
    reliability.record(
        "Kandev answers 403 / HTML 404 / long 429 / HTML 200 to an answer",
        survived=survived,
        lost=sum(1 for n in agents.values() if n == 0),
        duplicates=sum(max(n - 1, 0) for n in agents.values()),
    )
    reliability.record("Kandev answers 429 with a short Retry-After", survived=True)
    assert len(told) == len(faults), told
    assert any("try again in 120 seconds" in t for t in told), told
    assert all(left_open.values()), left_open
    assert all(answerable.values()), answerable
    assert not any(in_flight.values()), in_flight
    for name, entries in audits.items():
        first = next(e for e in entries if e.source == "slack:button")
        expected = (ALICE.id, "slack:button", "not_recorded")
        assert (first.user, first.source, first.result) == expected, (name, first)
    details = {
        n: next(e.detail for e in a if e.source == "slack:button") for n, a in audits.items()
    }
    assert "HTTP 403" in details["403"]
    assert "retry after 120s" in details["429 for two minutes"]
    for name, final in finals.items():
        assert response_of(final, "db")["selected_options"] == ["q1_opt2"], name
    assert set(agents.values()) == {1}, agents
    assert not _told(fake_slack, BOB.id, NOT_RECORDED)
    assert len(kandev_proxy.answer_calls(brief.pending_id, delivered_only=False)) == 2


def _settled_by_recovery(
    fault: Fault, fault_name: str, app_factory, seed, kandev_proxy, fake_slack, slack_driver, db
) -> dict:
    bot = _bot(app_factory, kandev_proxy)
    bundle = seed([db_question()], title=f"Reply lost: {fault_name}")
    card = wait_card(fake_slack, bundle.pending_id)
    kandev_proxy.inject(bundle.pending_id, fault)
    ack = slack_driver(bot.events_url).click(CHANNEL, card.ts, text="MongoDB", user=ALICE)
    assert ack.status == 200 and ack.elapsed < 3.0

    wait_ephemeral(fake_slack, ALICE.id, NOT_CONFIRMED, timeout=ATTEMPTS * READ_TIMEOUT_S + 20)
    recorded = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    unfinished = [s for s in submissions(f"sqlite:///{db}", bundle.pending_id) if not s.finished]
    kandev_proxy.clear(bundle.pending_id)  # Kandev's replies come back

    wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{ALICE.id}> in Slack", TAKEOVER_S)
    wait_ephemeral(fake_slack, ALICE.id, "recorded in Kandev", timeout=10)
    time.sleep(POLL_S)
    fake_slack.settle(quiet=1.0, timeout=15)
    return {
        "recorded": response_of(recorded, "db")["selected_options"],
        "unfinished_while_unconfirmed": len(unfinished),
        "not_recorded": _told(fake_slack, ALICE.id, NOT_RECORDED),
        "agent": tool_answers(seed.server.agent_result(bundle.task_id, timeout=10)),
        "audit": [
            (e.source, e.result)
            for e in audit_of(db, bundle.pending_id)
            if e.source in ("slack:button", "recovery")
        ],
        "left": [s for s in submissions(f"sqlite:///{db}", bundle.pending_id) if not s.finished],
        "sent": len(kandev_proxy.answer_calls(bundle.pending_id)),
    }


def _assert_settled(seen: dict) -> None:
    assert seen["recorded"] == ["q1_opt2"]
    assert seen["not_recorded"] == []  # never told "not recorded" for a recorded answer
    assert seen["unfinished_while_unconfirmed"] == 1  # kept for crash recovery to settle
    assert seen["agent"] == 1
    assert seen["audit"][0] == ("slack:button", "unconfirmed"), seen["audit"]
    assert seen["audit"][-1] == ("recovery", "won"), seen["audit"]
    assert seen["left"] == []


@pytest.mark.fault("connection cut after Kandev got the answer", guarantee=6)
def test_a_connection_cut_after_kandev_recorded_the_answer_is_settled_not_guessed(
    app_factory, seed, kandev_proxy, fake_slack, slack_driver, tmp_path: Path, reliability
):
    seen = _settled_by_recovery(
        Fault.cut_after_forwarding(),
        "connection cut",
        app_factory,
        seed,
        kandev_proxy,
        fake_slack,
        slack_driver,
        tmp_path / "bot.db",
    )
    reliability.record(
        "connection cut after forwarding every attempt of an answer",
        survived=not seen["not_recorded"] and not seen["left"],
        lost=int(seen["agent"] == 0),
        duplicates=max(seen["agent"] - 1, 0),
    )
    _assert_settled(seen)
    assert seen["sent"] == ATTEMPTS + 1  # the bot's attempts, then one settling re-send


@pytest.mark.fault("Kandev's reply slower than the read timeout", guarantee=6)
def test_a_reply_slower_than_the_read_timeout_is_settled_not_guessed(
    app_factory, seed, kandev_proxy, fake_slack, slack_driver, tmp_path: Path, reliability
):
    seen = _settled_by_recovery(
        Fault.slow(READ_TIMEOUT_S + 1.5, times=ATTEMPTS),
        "slow reply",
        app_factory,
        seed,
        kandev_proxy,
        fake_slack,
        slack_driver,
        tmp_path / "bot.db",
    )
    reliability.record(
        "every attempt's reply slower than the client's read timeout",
        survived=not seen["not_recorded"] and not seen["left"],
        lost=int(seen["agent"] == 0),
        duplicates=max(seen["agent"] - 1, 0),
    )
    _assert_settled(seen)


@pytest.mark.fault("the same content Kandev refused, sent again", guarantee=14)
def test_a_refused_answer_sent_again_is_refused_again_in_words(
    app_factory, seed, kandev_proxy, fake_slack, slack_driver, tmp_path: Path, reliability
):
    bot = _bot(app_factory, kandev_proxy)
    bundle = seed([db_question()], title="Refused twice")
    card = wait_card(fake_slack, bundle.pending_id)
    refusal = json.dumps({"error": 'answer 1 references unknown option_id "q1_opt2"'})
    kandev_proxy.inject(bundle.pending_id, Fault.reply(400, refusal))
    driver = slack_driver(bot.events_url)

    driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE)
    wait_ephemeral(fake_slack, ALICE.id, "did not accept")
    driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE)
    fake_slack.wait_for(
        lambda: len(_told(fake_slack, ALICE.id, "did not accept")) >= 2 or None,
        10,
        "the refusal repeated",
    )
    time.sleep(POLL_S)
    fake_slack.settle(quiet=1.0, timeout=15)

    told = _told(fake_slack, ALICE.id, "did not accept")
    calls = kandev_proxy.answer_calls(bundle.pending_id, delivered_only=False)
    results = [
        e.result
        for e in audit_of(tmp_path / "bot.db", bundle.pending_id)
        if e.source == "slack:button"
    ]
    reliability.record(
        "a resubmission of refused content",
        survived=len(told) == 2 and len(calls) == 1,
        duplicates=max(len(calls) - 1, 0),
    )
    assert len(told) == 2 and told[0] == told[1], told
    assert "unknown option_id" in told[1]
    assert len(calls) == 1  # the same content is not sent to Kandev again
    assert results == ["invalid", "invalid"]
    assert _answerable(fake_slack, card.ts)
    assert still_pending(seed.server, bundle)
