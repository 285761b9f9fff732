"""Reply in a card's thread to answer (issue 22, point 1): a reply is never sent by itself; its
author alone is asked "Send “…” as your answer to <question>?" in the thread, and Send goes
through the same admission and answer pipeline as a button click (audited as a thread reply).
Real Kandev, the fake Slack over HTTP, message events signed as Slack sends them."""

from __future__ import annotations

import threading
import time

from kandev_slack.kits.fakeslack import ALICE, BOB, Ephemeral, FakeSlack
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    db_question,
    outcome_line,
    response_of,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.kit.harness import CHANNEL, question

PROMPT = "as your answer to *Database*?"


def _prompt(fake: FakeSlack, user: str, thread_ts: str) -> Ephemeral:
    prompt = wait_ephemeral(fake, user, PROMPT)
    assert prompt.thread_ts == thread_ts and prompt.channel in (CHANNEL, prompt.channel)
    return prompt


def _replied(driver, fake: FakeSlack, thread_ts: str, text: str, user) -> Ephemeral:
    """``user`` replies ``text`` in the card's thread: the Send prompt they get."""
    driver.reply_in_thread(CHANNEL, thread_ts, text, user=user)
    return _prompt(fake, user.id, thread_ts)


def _current(fake: FakeSlack, prompt: Ephemeral) -> Ephemeral:
    [now] = [e for e in fake.ephemerals(user=prompt.user) if e.message_ts == prompt.message_ts]
    return now


def _wait_replaced(fake: FakeSlack, prompt: Ephemeral, contains: str) -> Ephemeral:
    return fake.wait_for(
        lambda: next(
            (
                e
                for e in [_current(fake, prompt)]
                if e.replaced and contains in e.all_text and not e.all_text.startswith("Sending")
            ),
            None,
        ),
        10,
        f"the prompt replaced by {contains!r}",
    )


def _posted(app_factory, seed, fake_slack, slack_driver, title: str, **env: str):
    """The bot (HTTP), a driver, a one-question bundle titled ``title`` and its card."""
    bot = start_bot(app_factory, **env)
    driver = slack_driver(bot.events_url)
    bundle = seed([db_question()], title=title)
    return bot, driver, bundle, wait_card(fake_slack, bundle.pending_id)


def _answered_with(seed, bundle) -> dict:
    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert final["status"] == "answered"
    return response_of(final, "db")


def test_a_reply_naming_an_option_by_number_is_sent_after_send(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot, driver, bundle, card = _posted(
        app_factory, seed, fake_slack, slack_driver, "Reply by number"
    )

    ack, _ = driver.reply_in_thread(CHANNEL, card.ts, " 2 ", user=ALICE)
    assert ack.status == 200
    prompt = _prompt(fake_slack, ALICE.id, card.ts)
    assert "Send “MongoDB” as your answer to *Database*?" in prompt.all_text
    assert fake_slack.ephemerals(user=BOB.id) == []
    # Nothing is sent by the reply itself.
    time.sleep(0.5)
    assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"

    sent_at = time.monotonic()
    assert driver.click_ephemeral(prompt, text="Send").status == 200
    assert _answered_with(seed, bundle)["selected_options"] == ["q1_opt2"]
    assert time.monotonic() - sent_at < 10
    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(edited) == f"✅ Answered by <@{ALICE.id}> in Slack: MongoDB"
    _wait_replaced(fake_slack, prompt, "✅ Sent “MongoDB” as your answer.")
    entries = [e for e in bot.bot.store.audit_log.audit_entries(bundle.pending_id)]
    results = [e.result for e in entries if e.source == "slack:thread_reply"]
    assert results == ["won", "offered"], entries  # newest first


def test_a_reply_equal_to_a_label_in_any_case_is_that_option(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot, driver, bundle, card = _posted(
        app_factory, seed, fake_slack, slack_driver, "Reply by label"
    )

    prompt = _replied(driver, fake_slack, card.ts, "postgresql", BOB)
    assert "“PostgreSQL”" in prompt.all_text
    driver.click_ephemeral(prompt, text="Send")
    assert _answered_with(seed, bundle)["selected_options"] == ["q1_opt1"]


def test_any_other_reply_is_sent_as_free_text(app_factory, seed, fake_slack, slack_driver) -> None:
    bot, driver, bundle, card = _posted(
        app_factory, seed, fake_slack, slack_driver, "Reply as free text"
    )

    prompt = _replied(
        driver, fake_slack, card.ts, "Use the existing cluster &amp; its backups", ALICE
    )
    assert "free text" in prompt.all_text
    driver.click_ephemeral(prompt, text="Send")
    answer = _answered_with(seed, bundle)
    assert answer["custom_text"] == "Use the existing cluster & its backups"
    assert not answer.get("selected_options")


def test_cancel_sends_nothing_and_removes_the_prompt(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot, driver, bundle, card = _posted(
        app_factory, seed, fake_slack, slack_driver, "Reply cancelled"
    )

    prompt = _replied(driver, fake_slack, card.ts, "1", ALICE)
    assert driver.click_ephemeral(prompt, text="Cancel").status == 200
    fake_slack.wait_for(lambda: _current(fake_slack, prompt).deleted, 10, "the prompt deleted")
    # A late Send on the stale prompt sends nothing either.
    driver.click_ephemeral(prompt, text="Send")
    time.sleep(1.0)
    assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"
    assert outcome_line(fake_slack.message(CHANNEL, card.ts)) is None
    entries = bot.bot.store.audit_log.audit_entries(bundle.pending_id)
    results = [e.result for e in entries if e.source == "slack:thread_reply"]
    assert results == ["cancelled", "offered"]


def test_someone_who_may_not_answer_gets_nothing_sent(
    app_factory, seed, fake_slack, slack_driver, tmp_path
) -> None:
    config = tmp_path / "routing.toml"
    config.write_text(f'[defaults]\nchannel = "{CHANNEL}"\nanswerers = ["{ALICE.id}"]\n')
    bot = start_bot(app_factory, KANDEV_SLACK_CONFIG=str(config))
    driver = slack_driver(bot.events_url)
    bundle = seed([db_question()], title="Bob may not answer")
    card = wait_card(fake_slack, bundle.pending_id)

    driver.reply_in_thread(CHANNEL, card.ts, "I think Mongo, ask Alice", user=BOB)  # a chat
    driver.reply_in_thread(CHANNEL, card.ts, "MongoDB", user=BOB)  # seems to answer
    told = wait_ephemeral(fake_slack, BOB.id, "not sent as an answer")
    assert told.thread_ts == card.ts and not told.blocks[1:]
    time.sleep(0.5)
    assert len(fake_slack.ephemerals(user=BOB.id)) == 1  # the chat got nothing
    assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"
    entries = bot.bot.store.audit_log.audit_entries(bundle.pending_id)
    assert any(e.source == "slack:thread_reply" and e.result == "forbidden" for e in entries)


def test_a_multi_question_card_points_to_answer(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot = start_bot(app_factory)
    driver = slack_driver(bot.events_url)
    second = question("env", "Env", "Where?", ("Staging", "s"), ("Production", "p"))
    bundle = seed([db_question(), second], title="Two questions")
    card = wait_card(fake_slack, bundle.pending_id)

    driver.reply_in_thread(CHANNEL, card.ts, "1", user=ALICE)
    told = wait_ephemeral(fake_slack, ALICE.id, "*Answer…*")
    assert told.thread_ts == card.ts and "several questions" in told.text


def test_a_redelivered_event_makes_one_prompt_and_one_answer(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot, driver, bundle, card = _posted(
        app_factory, seed, fake_slack, slack_driver, "Redelivered reply"
    )

    _, callback = driver.reply_in_thread(CHANNEL, card.ts, "2", user=ALICE)
    prompt = _prompt(fake_slack, ALICE.id, card.ts)
    assert driver.redeliver(callback, retry_num=1).status == 200
    assert driver.redeliver(callback, retry_num=2).status == 200
    time.sleep(1.0)
    assert len(fake_slack.ephemerals(user=ALICE.id)) == 1
    driver.click_ephemeral(prompt, text="Send")
    assert _answered_with(seed, bundle)["selected_options"] == ["q1_opt2"]
    sent = [c for c in seed.server.final_status(bundle.task_id, bundle.pending_id)["questions"]]
    assert sent == ["db"]


def test_a_double_click_on_send_answers_once(app_factory, seed, fake_slack, slack_driver) -> None:
    bot, driver, bundle, card = _posted(
        app_factory, seed, fake_slack, slack_driver, "Double click on Send"
    )
    prompt = _replied(driver, fake_slack, card.ts, "1", ALICE)

    barrier = threading.Barrier(2)
    acks = []

    def click() -> None:
        barrier.wait()
        acks.append(driver.click_ephemeral(prompt, text="Send").status)

    threads = [threading.Thread(target=click) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15)
    assert acks == [200, 200]
    assert _answered_with(seed, bundle)["selected_options"] == ["q1_opt1"]
    _wait_replaced(fake_slack, prompt, "✅ Sent")
    fake_slack.settle(quiet=1.0, timeout=10)
    answers = [
        e
        for e in bot.bot.store.audit_log.audit_entries(bundle.pending_id)
        if e.source == "slack:thread_reply"
    ]
    assert [e.result for e in answers] == ["won", "offered"]
    assert len(fake_slack.ephemerals(user=ALICE.id)) == 1


def test_a_reply_in_the_thread_of_another_message_is_ignored(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot, driver, bundle, card = _posted(
        app_factory, seed, fake_slack, slack_driver, "Other threads"
    )

    driver.reply_in_thread(CHANNEL, "1700000000.000001", "2", user=ALICE)  # not a card
    driver.reply_in_thread(CHANNEL, card.ts, "2", user=ALICE, event={"bot_id": "B0OTHER"})
    driver.reply_in_thread(CHANNEL, card.ts, "2", user=ALICE, event={"subtype": "message_changed"})
    time.sleep(POLL_S + MARGIN_S / 2)
    assert fake_slack.ephemerals(user=ALICE.id) == []


def test_a_reply_in_a_dm_card_s_thread_answers_too(app, seed, fake_slack, slack_driver) -> None:
    driver = slack_driver(app.events_url)
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    driver.slash("/kandev-questions", "subscribe", user=BOB, channel=BOB.id)
    bundle = seed([db_question()], title="Answered in the DM thread")
    card = wait_card(fake_slack, bundle.pending_id)
    copy = fake_slack.wait_for(
        lambda: next(iter(fake_slack.messages(dm)), None), POLL_S + MARGIN_S + 5, "the DM card"
    )

    driver.reply_in_thread(dm, copy.ts, "MongoDB", user=BOB)
    prompt = wait_ephemeral(fake_slack, BOB.id, PROMPT)
    assert (prompt.channel, prompt.thread_ts) == (dm, copy.ts)
    driver.click_ephemeral(prompt, text="Send")
    assert _answered_with(seed, bundle)["selected_options"] == ["q1_opt2"]
    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(edited) == f"✅ Answered by <@{BOB.id}> in Slack: MongoDB"


def test_a_thread_reply_answers_in_socket_mode_too(bot_factory, seed, fake_slack, slack_driver):
    start_bot(bot_factory, mode="socket")
    driver = slack_driver(transport="socket")
    bundle = seed([db_question()], title="Thread reply over the socket")
    card = wait_card(fake_slack, bundle.pending_id)

    _, callback = driver.reply_in_thread(CHANNEL, card.ts, "mongodb", user=BOB)
    prompt = _prompt(fake_slack, BOB.id, card.ts)
    driver.redeliver(callback)  # Socket Mode's retry_attempt: still one prompt
    assert driver.click_ephemeral(prompt, text="Send").ok
    assert _answered_with(seed, bundle)["selected_options"] == ["q1_opt2"]
    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(edited) == f"✅ Answered by <@{BOB.id}> in Slack: MongoDB"
    assert len(fake_slack.ephemerals(user=BOB.id)) == 1


def test_a_reply_reaches_the_agent_as_typed_not_as_slack_markup(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot, driver, bundle, card = _posted(
        app_factory, seed, fake_slack, slack_driver, "Reply with mentions and links"
    )
    # What Slack sends for "@bob knows: see the runbook & @here in #ops" (a formatted link).
    sent = (
        f"<@{BOB.id}> knows: see <https://example.com/run?a=1&amp;b=2|the runbook> &amp; "
        f"<!here> in <#{CHANNEL}|ops>, or <http://example.com|example.com>"
    )
    typed = (
        "@bob knows: see the runbook (https://example.com/run?a=1&b=2) & @here in #ops, "
        "or example.com"
    )
    prompt = _replied(driver, fake_slack, card.ts, sent, ALICE)
    assert "“@bob knows: see the runbook (https://example.com/run?a=1&amp;b=2)" in prompt.all_text
    driver.click_ephemeral(prompt, text="Send")
    assert _answered_with(seed, bundle)["custom_text"] == typed


def test_send_sends_the_reply_as_edited_since_its_prompt(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot, driver, bundle, card = _posted(app_factory, seed, fake_slack, slack_driver, "Edited")
    _, callback = driver.reply_in_thread(CHANNEL, card.ts, "1", user=ALICE)
    first = _prompt(fake_slack, ALICE.id, card.ts)
    assert "“PostgreSQL”" in first.all_text

    driver.edit_message(callback, "mongodb")
    again = wait_ephemeral(fake_slack, ALICE.id, "You edited your reply")
    assert again.thread_ts == card.ts and "“MongoDB”" in again.all_text
    driver.click_ephemeral(first, text="Send")  # the prompt seen first sends it as it is now
    assert _answered_with(seed, bundle)["selected_options"] == ["q1_opt2"]
    _wait_replaced(fake_slack, first, "✅ Sent “MongoDB” as your answer.")


def test_a_reply_deleted_since_its_prompt_sends_nothing(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot, driver, bundle, card = _posted(app_factory, seed, fake_slack, slack_driver, "Deleted")
    _, callback = driver.reply_in_thread(CHANNEL, card.ts, "2", user=ALICE)
    prompt = _prompt(fake_slack, ALICE.id, card.ts)
    assert driver.delete_message(callback).status == 200

    def withdrawn() -> bool | None:
        entries = bot.bot.store.audit_log.audit_entries(bundle.pending_id)
        return any(e.result == "withdrawn" for e in entries) or None

    fake_slack.wait_for(withdrawn, 10, "the reply withdrawn")
    driver.click_ephemeral(prompt, text="Send")
    _wait_replaced(fake_slack, prompt, "Your reply was deleted, so nothing was sent.")
    time.sleep(0.5)
    assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"
    assert outcome_line(fake_slack.message(CHANNEL, card.ts)) is None


def test_a_file_or_a_me_reply_is_not_offered_and_its_author_is_told(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot, driver, bundle, card = _posted(app_factory, seed, fake_slack, slack_driver, "Files")
    driver.share_file_in_thread(CHANNEL, card.ts, "2", user=ALICE)
    told = wait_ephemeral(fake_slack, ALICE.id, "it is a file")
    assert told.thread_ts == card.ts and "reply in this thread" in told.all_text
    assert not told.blocks[1:]  # no Send button
    driver.me_in_thread(CHANNEL, card.ts, "thinks it is MongoDB", user=BOB)
    told = wait_ephemeral(fake_slack, BOB.id, "it is a /me message")
    assert told.thread_ts == card.ts
    time.sleep(0.5)
    assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"


def test_a_message_to_the_app_is_answered_with_where_to_answer(
    app_factory, fake_slack, slack_driver
) -> None:
    bot = start_bot(app_factory)
    driver = slack_driver(bot.events_url)
    ack, callback = driver.message_app("hi, what is waiting?", user=ALICE)
    assert ack.status == 200
    told = wait_ephemeral(fake_slack, ALICE.id, "I don't read direct messages")
    assert told.channel == callback["event"]["channel"] and told.thread_ts is None
    assert "/kandev-questions" in told.all_text and "*Home*" in told.all_text
    # Slack's copy of the same event says nothing more.
    driver.redeliver(callback)
    time.sleep(0.5)
    assert len(fake_slack.ephemerals(user=ALICE.id)) == 1
