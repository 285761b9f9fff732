"""Answer every identical question at once (issue 22, point 5), end to end (real Kandev, the
fake Slack): agents asking the same one question show each other on their cards; whoever
answers one is offered, only them, to send the same choice to the others; Send answers each
bundle on its own through the one admission and answer pipeline (permission per bundle,
audited with source ``answer_all``), every card is edited to its own outcome, and the person
is told how many were sent. In both Slack modes."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from kandev_slack.kits.fakeslack import (
    ALICE,
    BOB,
    Delivery,
    Ephemeral,
    FakeSlack,
    PostedMessage,
    find_element,
    payloads,
)
from kandev_slack.kits.kandevkit import SeededBundle
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    choice_and_text_blocks,
    db_question,
    open_modal,
    outcome_line,
    response_of,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.kit.harness import CHANNEL

OFFER = "to the 2 other agents that asked this too?"


def group_line(message: PostedMessage, block_id: str = "kq_thread") -> str | None:
    """A first card's line counting the identical items waiting in its thread (``kq_also_from``:
    a thread card's "Also from" line; None: it has none)."""
    for block in message.blocks:
        if block.get("block_id") == block_id:
            return str(block["elements"][0]["text"])
    return None


def assert_in_thread(fake: FakeSlack, ts: str, first_ts: str) -> PostedMessage:
    """The card at ``ts`` is in the thread of the card at ``first_ts``, headed "Also from"."""
    message = fake.message(CHANNEL, ts)
    assert message.thread_ts == first_ts
    assert (group_line(message, "kq_also_from") or "").startswith("↪️ Also from <")
    assert group_line(message) is None
    return message


def wait_group(fake: FakeSlack, ts: str, starts: str | None) -> PostedMessage:
    """The card at ``ts`` once its group line starts with ``starts`` (None: has none)."""

    def shown() -> PostedMessage | None:
        message = fake.message(CHANNEL, ts)
        line = group_line(message)
        if starts is None:
            return message if line is None else None
        return message if line is not None and line.startswith(starts) else None

    return fake.wait_for(shown, POLL_S + 2 * MARGIN_S, f"the group line {starts!r} on {ts}")


def _three(seed, fake: FakeSlack, prefix: str, **options) -> list[tuple[SeededBundle, str]]:
    """Three agents asking the same question: (bundle, card ts) each, once the first card is
    in the channel counting the two others, whose cards are in its thread."""
    bundles = [seed([db_question()], title=f"{prefix} {n}", **options) for n in (1, 2, 3)]
    posted = [(b, wait_card(fake, b.pending_id).ts) for b in bundles]
    first_ts = posted[0][1]
    wait_group(fake, first_ts, "🧵 2 more agents asked this: <")
    assert fake.message(CHANNEL, first_ts).thread_ts is None
    for _, ts in posted[1:]:
        assert_in_thread(fake, ts, first_ts)
    return posted


def _replaced(fake: FakeSlack, offer: Ephemeral, contains: str) -> Ephemeral:
    def current() -> Ephemeral | None:
        [now] = [e for e in fake.ephemerals(user=offer.user) if e.message_ts == offer.message_ts]
        return now if now.replaced and contains in now.all_text else None

    return fake.wait_for(current, 15, f"the offer replaced by {contains!r}")


def _answer_all_entries(bot, pending_id: str) -> list[str]:
    entries = bot.bot.store.audit_log.audit_entries(pending_id)
    return [e.result for e in entries if e.source == "answer_all"]


def test_three_agents_one_answer_sent_to_all(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    (first, ts1), (second, ts2), (third, ts3) = _three(seed, fake_slack, "Same question")
    line = group_line(fake_slack.message(CHANNEL, ts1)) or ""
    assert "Same question 2" in line and "Same question 3" in line and "/t/" in line
    driver = slack_driver(bot.events_url)

    assert driver.click(CHANNEL, ts1, text="PostgreSQL", user=ALICE).status == 200
    wait_final(seed.server, first.task_id, first.pending_id, "answered")
    offer = wait_ephemeral(fake_slack, ALICE.id, OFFER)
    assert offer.text == f"Send “PostgreSQL” {OFFER}"
    assert offer.channel == CHANNEL
    # The two others still wait in its thread: the answered card keeps counting them.
    assert (group_line(fake_slack.message(CHANNEL, ts1)) or "").startswith("🧵 2 more agents")
    # Nothing is sent to the others before Send.
    assert seed.server.final_status(second.task_id, second.pending_id)["status"] == "pending"

    ack = driver.click_ephemeral(offer, text="Send to all 2")
    assert ack.status == 200 and ack.elapsed < 3.0
    for bundle, ts in ((second, ts2), (third, ts3)):
        final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
        assert response_of(final, "db")["selected_options"] == ["q1_opt1"]
        edited = wait_outcome(fake_slack, ts, "✅")
        assert outcome_line(edited) == f"✅ Answered by <@{ALICE.id}> in Slack: PostgreSQL"
        assert edited.thread_ts == ts1 and group_line(edited) is None
        assert _answer_all_entries(bot, bundle.pending_id) == ["won"]
    wait_group(fake_slack, ts1, None)  # none waits in its thread any more
    _replaced(fake_slack, offer, "✅ Sent “PostgreSQL” to 2 agents.")
    assert fake_slack.ephemerals(user=BOB.id) == []
    # The answers sent to all offer nothing more: Alice's one message is the offer, replaced.
    assert [e.message_ts for e in fake_slack.ephemerals(user=ALICE.id)] == [offer.message_ts]


def test_a_double_click_on_send_sends_each_answer_once(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    (first, ts1), (second, _), (third, _) = _three(seed, fake_slack, "Double click")
    driver = slack_driver(bot.events_url)
    driver.click(CHANNEL, ts1, text="MongoDB", user=BOB)
    offer = wait_ephemeral(fake_slack, BOB.id, OFFER)

    acks = []
    clicks = [
        threading.Thread(
            target=lambda: acks.append(driver.click_ephemeral(offer, text="Send to all 2"))
        )
        for _ in range(2)
    ]
    for click in clicks:
        click.start()
    for click in clicks:
        click.join()
    assert [a.status for a in acks] == [200, 200]
    for bundle in (second, third):
        final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
        assert response_of(final, "db")["selected_options"] == ["q1_opt2"]
    summary = _replaced(fake_slack, offer, "✅ Sent “MongoDB” to 2 agents.")
    # Slack's copy of the click, later, sends nothing either (and says nothing more).
    again = Delivery(retry_num=1, retry_reason="http_timeout")
    assert driver.click_ephemeral(offer, text="Send to all 2", delivery=again).status == 200
    time.sleep(1.0)
    for bundle in (second, third):
        results = _answer_all_entries(bot, bundle.pending_id)
        # One send; the second click's copy was recorded as the same submission (duplicate)
        # or refused as answered by Bob already; none reached Kandev again (no "lost").
        assert results.count("won") == 1 and len(results) == 3, results
        assert set(results) <= {"won", "duplicate", "already_answered", "redelivered"}, results
        assert results[0] == "redelivered"  # newest first: Slack's copy, refused quietly
    [now] = [e for e in fake_slack.ephemerals(user=BOB.id) if e.message_ts == offer.message_ts]
    assert now.all_text == summary.all_text  # the first summary stands


def test_one_answered_meanwhile_in_kandev_is_reported(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    (first, ts1), (second, ts2), (third, ts3) = _three(seed, fake_slack, "Meanwhile")
    driver = slack_driver(bot.events_url)
    driver.click(CHANNEL, ts1, text="PostgreSQL", user=ALICE)
    offer = wait_ephemeral(fake_slack, ALICE.id, OFFER)

    # Someone answers the third in Kandev's web UI before Alice clicks Send.
    assert seed.server.answer(third.pending_id, {"db": "q1_opt2"}).status_code == 200
    assert outcome_line(wait_outcome(fake_slack, ts3, "✅")) == "✅ Answered in Kandev: MongoDB"

    driver.click_ephemeral(offer, text="Send to all 2")
    wait_final(seed.server, second.task_id, second.pending_id, "answered")
    _replaced(
        fake_slack,
        offer,
        "✅ Sent “PostgreSQL” to 1 agent. 1 was answered meanwhile in Kandev.",
    )
    final = seed.server.final_status(third.task_id, third.pending_id)
    assert response_of(final, "db")["selected_options"] == ["q1_opt2"]  # Kandev's answer stands
    assert outcome_line(fake_slack.message(CHANNEL, ts3)) == "✅ Answered in Kandev: MongoDB"
    assert _answer_all_entries(bot, third.pending_id) == ["resolved_already"]


def test_a_bundle_the_person_may_not_answer_is_not_sent(
    app_factory, seed, fake_slack, slack_driver, tmp_path: Path
):
    routes = tmp_path / "routes.toml"
    routes.write_text(
        f'[defaults]\nchannel = "{CHANNEL}"\n\n'
        f'[[route]]\nlabels = ["database"]\nchannel = "{CHANNEL}"\nanswerers = ["{ALICE.id}"]\n',
        encoding="utf-8",
    )
    bot = start_bot(app_factory, KANDEV_SLACK_CONFIG=str(routes))
    open_one = seed([db_question()], title="Anyone 1")
    also_open = seed([db_question()], title="Anyone 2")
    guarded = seed([db_question()], title="DBAs only", labels=["database"])
    ts = {
        b.pending_id: wait_card(fake_slack, b.pending_id).ts for b in (open_one, also_open, guarded)
    }
    wait_group(fake_slack, ts[open_one.pending_id], "🧵 2 more agents asked this: <")
    driver = slack_driver(bot.events_url)

    driver.click(CHANNEL, ts[open_one.pending_id], text="PostgreSQL", user=BOB)
    offer = wait_ephemeral(fake_slack, BOB.id, OFFER)
    driver.click_ephemeral(offer, text="Send to all 2")
    wait_final(seed.server, also_open.task_id, also_open.pending_id, "answered")
    summary = _replaced(
        fake_slack, offer, "✅ Sent “PostgreSQL” to 1 agent. You may not answer 1: <"
    )
    assert "|DBAs only>" in summary.all_text
    time.sleep(0.5)
    assert seed.server.final_status(guarded.task_id, guarded.pending_id)["status"] == "pending"
    assert outcome_line(fake_slack.message(CHANNEL, ts[guarded.pending_id])) is None
    assert _answer_all_entries(bot, guarded.pending_id) == ["forbidden"]


def test_no_thanks_sends_nothing_and_removes_the_offer(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    (first, ts1), (second, _), _third = _three(seed, fake_slack, "No thanks")
    driver = slack_driver(bot.events_url)
    driver.click(CHANNEL, ts1, text="PostgreSQL", user=ALICE)
    offer = wait_ephemeral(fake_slack, ALICE.id, OFFER)
    assert driver.click_ephemeral(offer, text="No thanks").status == 200

    def deleted() -> bool:
        [now] = [
            e for e in fake_slack.ephemerals(user=ALICE.id) if e.message_ts == offer.message_ts
        ]
        return now.deleted

    fake_slack.wait_for(deleted, 10, "the offer deleted")
    assert seed.server.final_status(second.task_id, second.pending_id)["status"] == "pending"
    assert _answer_all_entries(bot, first.pending_id) == ["declined"]


def test_answer_all_over_socket_mode(bot_factory, seed, fake_slack, slack_driver):
    start_bot(bot_factory, mode="socket")
    bundles = [seed([db_question()], title=f"Socket {n}") for n in (1, 2)]
    cards = [wait_card(fake_slack, b.pending_id).ts for b in bundles]
    wait_group(fake_slack, cards[0], "🧵 1 more agent asked this: <")
    assert_in_thread(fake_slack, cards[1], cards[0])
    driver = slack_driver(transport="socket")
    assert driver.click(CHANNEL, cards[0], text="MongoDB", user=BOB).ok
    offer = wait_ephemeral(fake_slack, BOB.id, "to the other agent that asked this too?")
    assert driver.click_ephemeral(offer, text="Send to it").ok
    final = wait_final(seed.server, bundles[1].task_id, bundles[1].pending_id, "answered")
    assert response_of(final, "db")["selected_options"] == ["q1_opt2"]
    edited = wait_outcome(fake_slack, cards[1], "✅")
    assert outcome_line(edited) == f"✅ Answered by <@{BOB.id}> in Slack: MongoDB"
    _replaced(fake_slack, offer, "✅ Sent “MongoDB” to 1 agent.")


def test_free_text_from_the_form_is_sent_to_all_as_it_is(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory)
    (first, ts1), (second, ts2), (third, _) = _three(seed, fake_slack, "Own words")
    driver = slack_driver(bot.events_url)
    mark = fake_slack.mark()
    driver.click(CHANNEL, ts1, text="Other answer…", user=ALICE)
    view = open_modal(fake_slack, "kq_other_modal", after=mark)
    [(_choice, text_block)] = choice_and_text_blocks(view)
    driver.submit_view(view, {text_block: {"kq_text": "Use the *existing* cluster"}})
    wait_final(seed.server, first.task_id, first.pending_id, "answered")
    offer = wait_ephemeral(fake_slack, ALICE.id, OFFER)
    assert offer.text == f"Send “Use the *existing* cluster” {OFFER}"
    assert offer.channel == CHANNEL

    driver.click_ephemeral(offer, text="Send to all 2")
    for bundle in (second, third):
        final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
        assert response_of(final, "db")["custom_text"] == "Use the *existing* cluster"
        assert not response_of(final, "db").get("selected_options")
    _replaced(fake_slack, offer, "✅ Sent “Use the *existing* cluster” to 2 agents.")


def test_someone_else_replaying_the_offer_sends_nothing_and_is_audited(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory)
    (first, ts1), (second, _), (third, _) = _three(seed, fake_slack, "Replayed")
    driver = slack_driver(bot.events_url)
    driver.click(CHANNEL, ts1, text="PostgreSQL", user=ALICE)
    offer = wait_ephemeral(fake_slack, ALICE.id, OFFER)

    # Bob's client sends Alice's button (its value names the card Alice's answer won).
    ref = find_element(offer.blocks, text="Send to all 2", types=frozenset({"button"}))
    bob = driver.user(BOB)
    payload = payloads.block_actions(
        driver.ws,
        bob,
        container={
            "type": "message",
            "message_ts": offer.message_ts,
            "channel_id": CHANNEL,
            "is_ephemeral": True,
        },
        actions=[payloads.action_item(ref)],
        trigger_id=fake_slack.issue_trigger(bob.id),
        response_url=fake_slack.issue_response_url(
            CHANNEL, bob.id, offer.message_ts, is_ephemeral=True
        ),
        channel=driver.ws.channels[CHANNEL],
    )
    ack = driver.transport.deliver(
        "interactive", payload, accepts_response_payload=False, delivery=driver.delivery
    )
    assert ack.status == 200
    time.sleep(1.0)
    for bundle in (second, third):
        assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"
    entries = bot.bot.store.audit_log.audit_entries(first.pending_id)
    assert [(e.user, e.result) for e in entries if e.source == "answer_all"] == [
        (BOB.id, "tampered")
    ]


def test_an_answer_sent_from_a_thread_reply_is_offered_in_that_thread(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory)
    (first, ts1), (second, _), (third, _) = _three(seed, fake_slack, "Replied")
    driver = slack_driver(bot.events_url)
    driver.reply_in_thread(CHANNEL, ts1, "mongodb", user=ALICE)
    prompt = wait_ephemeral(fake_slack, ALICE.id, "as your answer to *Database*?")
    driver.click_ephemeral(prompt, text="Send")
    wait_final(seed.server, first.task_id, first.pending_id, "answered")
    offer = wait_ephemeral(fake_slack, ALICE.id, OFFER)
    assert offer.thread_ts == ts1 and offer.text == f"Send “MongoDB” {OFFER}"

    driver.click_ephemeral(offer, text="Send to all 2")
    for bundle in (second, third):
        final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
        assert response_of(final, "db")["selected_options"] == ["q1_opt2"]
    _replaced(fake_slack, offer, "✅ Sent “MongoDB” to 2 agents.")


def test_send_answers_exactly_the_agents_the_offer_named(
    app_factory, seed, fake_slack, slack_driver
):
    """An agent asking the same question after the offer was made is not answered by it: Send
    answers the ones the offer counted, no others."""
    bot = start_bot(app_factory)
    (first, ts1), (second, _), (third, _) = _three(seed, fake_slack, "Named")
    driver = slack_driver(bot.events_url)
    driver.click(CHANNEL, ts1, text="PostgreSQL", user=ALICE)
    offer = wait_ephemeral(fake_slack, ALICE.id, OFFER)
    late = seed([db_question()], title="Named 4")
    late_ts = wait_card(fake_slack, late.pending_id).ts
    # The first card is answered: an identical question asked now starts a card of its own.
    assert fake_slack.message(CHANNEL, late_ts).thread_ts is None
    assert group_line(fake_slack.message(CHANNEL, late_ts), "kq_also_from") is None

    driver.click_ephemeral(offer, text="Send to all 2")
    for bundle in (second, third):
        wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    _replaced(fake_slack, offer, "✅ Sent “PostgreSQL” to 2 agents.")
    time.sleep(1.0)
    assert seed.server.final_status(late.task_id, late.pending_id)["status"] == "pending"
    assert outcome_line(fake_slack.message(CHANNEL, late_ts)) is None
    assert _answer_all_entries(bot, late.pending_id) == []
