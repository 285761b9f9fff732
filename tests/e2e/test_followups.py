"""Reminders and escalation end to end (real Kandev, fake Slack, the bot in-process except across
the restart, which needs a process; durations in seconds): reminders come in the card's thread
with their mentions and stop on resolution; the escalation card is posted and every copy shows
the answer given on either; a reminder due while the bot was down is sent exactly once."""

from __future__ import annotations

import time
from pathlib import Path

from kandev_slack.kits.fakeslack import ALICE, BOB, CallRecord, FakeSlack, PostedMessage
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    act,
    click_stale,
    db_question,
    open_modal,
    outcome_line,
    slash_reply,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_in_form,
    wait_outcome,
)
from tests.kit.harness import CHANNEL

LEADS = "C0LEADS0001"
REMINDER = "⏰ Still waiting for an answer after"
#: A reminder names the question it is about (issue 21).
NAMED = ": *“Which database should we use?”*"


def routing_file(tmp_path: Path, body: str) -> str:
    path = tmp_path / "routes.toml"
    path.write_text(f'[defaults]\nchannel = "{CHANNEL}"\n{body}', encoding="utf-8")
    return str(path)


def thread_replies(fake: FakeSlack, ts: str) -> list[CallRecord]:
    """Successful posts in the thread of the card at ``ts``, in order."""
    return [
        c
        for c in fake.calls("chat.postMessage")
        if c.ok and c.params.get("channel") == CHANNEL and c.params.get("thread_ts") == ts
    ]


def reminders(fake: FakeSlack, ts: str) -> list[CallRecord]:
    return [c for c in thread_replies(fake, ts) if str(c.params.get("text")).startswith(REMINDER)]


def wait_message(fake: FakeSlack, channel: str, timeout: float) -> PostedMessage:
    return fake.wait_for(
        lambda: next(iter(fake.messages(channel)), None), timeout, f"a message in {channel}"
    )


def test_reminders_escalation_and_an_answer_on_the_escalation_card(
    app_factory, seed, fake_slack, slack_driver, tmp_path
):
    fake_slack.add_channel(LEADS, "leads")
    config = routing_file(
        tmp_path,
        'remind_after = "2s"\nremind_every = "2s"\nmax_reminders = 50\n'
        'mention = ["S0ONCALL", "U0ANA"]\n'
        f'escalate_after = "4s"\nescalate_to = "{LEADS}"\nescalate_mention = ["S0LEADS"]\n',
    )
    bot = start_bot(app_factory, KANDEV_SLACK_CONFIG=config)
    bundle = seed([db_question()], title="Needs a person")
    card = wait_card(fake_slack, bundle.pending_id)

    first = fake_slack.wait_for(
        lambda: next(iter(reminders(fake_slack, card.ts)), None), 10 + MARGIN_S, "a reminder"
    )
    assert first.params["text"] == f"{REMINDER} 2 s{NAMED} <!subteam^S0ONCALL> <@U0ANA>"
    escalation = wait_message(fake_slack, LEADS, 10 + MARGIN_S)
    note = escalation.blocks[0]["text"]["text"]
    assert note.startswith("🔺 *Escalated* · first asked in ")  # no frozen age
    assert escalation.text.startswith("🔺 Escalated · Which database")
    assert f"<#{CHANNEL}>" in note and note.endswith("<!subteam^S0LEADS>")
    fake_slack.wait_for(
        lambda: any(
            c.params.get("text") == f"🔺 Escalated to <#{LEADS}>"
            for c in thread_replies(fake_slack, card.ts)
        ),
        5,
        "the escalation notice in the card's thread",
    )

    # Answered on the escalation card: both messages show the same outcome.
    ack = slack_driver(bot.events_url).click(LEADS, escalation.ts, text="MongoDB", user=ALICE)
    assert ack.status == 200
    edited = wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{ALICE.id}> in Slack")
    assert outcome_line(edited) == f"✅ Answered by <@{ALICE.id}> in Slack: MongoDB"
    fake_slack.wait_for(
        lambda: outcome_line(fake_slack.message(LEADS, escalation.ts)) == outcome_line(edited),
        POLL_S + MARGIN_S,
        "the escalation card's outcome",
    )
    edit_call = min(
        c.index for c in fake_slack.calls("chat.update") if c.ok and c.params["ts"] == card.ts
    )

    # No reminder after the resolution (they came every 2 s until then).
    time.sleep(5)
    assert [c.index for c in reminders(fake_slack, card.ts) if c.index > edit_call] == []
    # Each message edited once to its outcome; the escalation posted once.
    for channel, ts in ((CHANNEL, card.ts), (LEADS, escalation.ts)):
        edits = [
            c
            for c in fake_slack.calls("chat.update")
            if c.ok and c.params["channel"] == channel and c.params["ts"] == ts
        ]
        assert len(edits) == 1, (channel, edits)
    assert len(fake_slack.messages(LEADS)) == 1


def test_a_reminder_due_while_the_bot_was_down_is_sent_once(
    bot_factory, seed, fake_slack, tmp_path
):
    config = routing_file(tmp_path, 'remind_after = "3s"\nremind_every = "3s"\nmax_reminders = 3\n')
    bot = start_bot(bot_factory, KANDEV_SLACK_CONFIG=config)
    bundle = seed([db_question()], title="Asked just before a restart")
    card = wait_card(fake_slack, bundle.pending_id)
    bot.stop()
    assert reminders(fake_slack, card.ts) == []
    time.sleep(10)  # every step (3 s, 6 s, 9 s) fell due while the bot was down

    bot.start()
    fake_slack.wait_for(
        lambda: reminders(fake_slack, card.ts), 10 + MARGIN_S, "the reminder after the restart"
    )
    time.sleep(4)
    fake_slack.settle(quiet=1.5, timeout=20)
    (sent,) = reminders(fake_slack, card.ts)
    assert sent.params["text"] == f"{REMINDER} 9 s{NAMED}"


def test_a_subscriber_answers_from_the_dm_card_and_every_copy_shows_it(
    app, seed, fake_slack, slack_driver
):
    driver = slack_driver(app.events_url)
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    # The command works from the bot's DM like from a channel (the reply is ephemeral there).
    slash_reply(driver, "subscribe", "Subscribed", user=BOB)
    bundle = seed([db_question()], title="Followed by Bob")
    card = wait_card(fake_slack, bundle.pending_id)
    copy = wait_message(fake_slack, dm, POLL_S + MARGIN_S + 5)
    meta = next(b for b in copy.blocks if b.get("block_id") == "kq_meta")  # no header
    assert meta["elements"][0]["text"].startswith("🔔 Every new question you may answer")

    assert driver.click(dm, copy.ts, text="MongoDB", user=BOB).status == 200
    edited = wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{BOB.id}> in Slack")
    assert outcome_line(edited) == f"✅ Answered by <@{BOB.id}> in Slack: MongoDB"
    fake_slack.wait_for(
        lambda: outcome_line(fake_slack.message(dm, copy.ts)) == outcome_line(edited),
        POLL_S + MARGIN_S,
        "the DM card's outcome",
    )
    answered = fake_slack.wait_for(
        lambda: seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "answered",
        10,
        "Kandev's record of Bob's answer",
    )
    assert answered


def test_a_form_opened_on_the_escalation_card_answers_and_a_late_click_is_told_there(
    app_factory, seed, fake_slack, slack_driver, tmp_path
):
    fake_slack.add_channel(LEADS, "leads")
    config = routing_file(tmp_path, f'escalate_after = "1s"\nescalate_to = "{LEADS}"\n')
    bot = start_bot(app_factory, KANDEV_SLACK_CONFIG=config)
    driver = slack_driver(bot.events_url)
    bundle = seed([db_question()], title="Rejected from the leads channel")
    card = wait_card(fake_slack, bundle.pending_id)
    escalation = wait_message(fake_slack, LEADS, 10 + MARGIN_S)

    mark = fake_slack.mark()
    act(driver, LEADS, escalation.ts, "Reject…", user=ALICE)  # Alice opens the form too
    alices = open_modal(fake_slack, "kq_reject_modal", after=mark)
    mark = fake_slack.mark()
    act(driver, LEADS, escalation.ts, "Reject…", user=BOB)
    view = open_modal(fake_slack, "kq_reject_modal", after=mark)
    reason = "Ask the platform team"
    assert driver.submit_view(view, {"kq_reason": {"kq_reason": reason}}).status == 200
    edited = wait_outcome(fake_slack, card.ts, "⛔")
    assert outcome_line(edited) == f"⛔ Rejected by <@{BOB.id}> in Slack: “{reason}”"
    fake_slack.wait_for(
        lambda: outcome_line(fake_slack.message(LEADS, escalation.ts)) == outcome_line(edited),
        POLL_S + MARGIN_S,
        "the escalation card's outcome",
    )
    assert wait_final(seed.server, bundle.task_id, bundle.pending_id, "rejected")["status"] == (
        "rejected"
    )

    # Alice's form, submitted late, is told in the form; a late click (as she still sees the
    # card) in the channel of the card she used.
    assert driver.submit_view(alices, {"kq_reason": {"kq_reason": "mine"}}).status == 200
    wait_in_form(fake_slack, alices.id, "rejected this question first")
    assert click_stale(driver, LEADS, escalation.ts, text="MongoDB", user=ALICE).status == 200
    told = wait_ephemeral(fake_slack, ALICE.id, "rejected this question first")
    assert told.channel == LEADS
    assert len(fake_slack.ephemerals(user=ALICE.id)) == 1
