"""The message shortcut "Reject agent question" end to end: on a card (reject modal, reason
required and at most 2,000 code points, recorded in Kandev, card edited), on a resolved card and
on someone's message (an explanation, no modal, nothing sent); and who may answer (routing
answerers) applies to the shortcut and to the list's "Answer…" alike."""

from __future__ import annotations

from kandev_slack.cards.ids import ACTION_ANSWER_MODAL
from kandev_slack.kits.fakeslack import ALICE, BOB, Delivery, payloads
from tests.e2e.helpers import (
    assert_sending,
    assert_terminal_controls,
    db_question,
    open_modal,
    outcome_line,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.kit.harness import CHANNEL
from tests.unit.listing.e2e import answer_value, run_list

SHORTCUT = "reject_question"
REJECT_MODAL = "kq_reject_modal"


def test_shortcut_on_a_card_rejects_with_a_reason(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Reject me via the shortcut")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    mark = fake_slack.mark()
    ack = driver.message_shortcut(SHORTCUT, CHANNEL, card.ts, user=ALICE)
    assert ack.status == 200 and ack.elapsed < 3.0
    view = open_modal(fake_slack, REJECT_MODAL, after=mark)
    assert view.user == ALICE.id
    assert '"o":"shortcut"' in view.private_metadata
    assert "Reject me via the shortcut" in view.all_text

    # A reason is required, and at most 2,000 code points (emoji count one, as Kandev counts).
    ack = driver.submit_view(view, {"kq_reason": {"kq_reason": "  \n "}})
    assert (ack.json or {}).get("response_action") == "errors", ack.body
    too_long = "🙅" * 2001
    ack = driver.submit_view(
        view, {"kq_reason": {"kq_reason": too_long}}, enforce_client_rules=False
    )
    assert (ack.json or {}).get("response_action") == "errors", ack.body
    assert "2,001" in ack.json["errors"]["kq_reason"]
    assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"

    reason = "🙅 " + "Not this sprint. " * 117  # 2,000 code points with the emoji
    reason = reason[:2000]
    ack = driver.submit_view(view, {"kq_reason": {"kq_reason": reason}})
    assert_sending(ack)

    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "rejected")
    assert final["status"] == "rejected"
    result = seed.server.agent_result(bundle.task_id, timeout=10)
    assert result is not None and result["tool"]["parsed"]["reject_reason"] == reason.strip()
    edited = wait_outcome(fake_slack, card.ts, "⛔")
    assert outcome_line(edited).startswith(f"⛔ Rejected by <@{ALICE.id}> in Slack: “🙅 Not this")
    assert_terminal_controls(edited)


def test_shortcut_on_a_resolved_card_states_the_outcome(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Already answered")
    card = wait_card(fake_slack, bundle.pending_id)
    assert seed.server.answer(bundle.pending_id, {"db": "q1_opt1"}).status_code == 200
    wait_outcome(fake_slack, card.ts, "✅")
    fake_slack.settle(quiet=0.5, timeout=10)

    mark = fake_slack.mark()
    ack = slack_driver(bot.events_url).message_shortcut(SHORTCUT, CHANNEL, card.ts, user=BOB)
    assert ack.status == 200 and ack.elapsed < 3.0
    told = wait_ephemeral(fake_slack, BOB.id, "already closed")
    assert told.channel == CHANNEL
    assert told.text == (
        "This question is already closed: ✅ Answered in Kandev: PostgreSQL. Nothing to reject."
    )
    fake_slack.settle(quiet=1.0, timeout=10)
    assert not any(c.method == "views.open" for c in fake_slack.calls()[mark:])
    assert outcome_line(fake_slack.message(CHANNEL, card.ts)) == "✅ Answered in Kandev: PostgreSQL"
    assert bot.logs().count("answer_question") == 0


def test_shortcut_on_another_message_explains(app_factory, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    message = fake_slack.post_user_message(CHANNEL, BOB.id, "Lunch at noon?")

    mark = fake_slack.mark()
    ack = slack_driver(bot.events_url).message_shortcut(SHORTCUT, CHANNEL, message.ts, user=ALICE)
    assert ack.status == 200 and ack.elapsed < 3.0
    told = wait_ephemeral(fake_slack, ALICE.id, "only works on")
    assert "Kandev question cards" in told.all_text
    fake_slack.settle(quiet=1.0, timeout=10)
    assert not any(c.method == "views.open" for c in fake_slack.calls()[mark:])
    assert len(fake_slack.ephemerals(user=ALICE.id)) == 1


def test_only_answerers_may_reject_or_answer_from_the_list(
    app_factory, seed, fake_slack, slack_driver, tmp_path
):
    config = tmp_path / "routing.toml"
    config.write_text(f'[defaults]\nchannel = "{CHANNEL}"\nanswerers = ["{ALICE.id}"]\n')
    bot = start_bot(app_factory, KANDEV_SLACK_CONFIG=str(config))
    bundle = seed([db_question()], title="Only Alice may answer")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    mark = fake_slack.mark()
    driver.message_shortcut(SHORTCUT, CHANNEL, card.ts, user=BOB)
    wait_ephemeral(fake_slack, BOB.id, "not on the list of people who may answer")

    # Bob's listing does not even show it (nobody sees what they may not answer)…
    listing = run_list(driver, "only alice", user=BOB)
    assert "Only Alice may answer" not in listing.all_text
    # …and an "Answer…" click for it from a list (one shown before, say) is refused all the same.
    forged = payloads.block_actions(
        driver.ws,
        driver.user(BOB),
        container={
            "type": "message",
            "message_ts": listing.message_ts,
            "channel_id": listing.channel,
            "is_ephemeral": True,
        },
        actions=[
            {
                "type": "button",
                "action_id": ACTION_ANSWER_MODAL,
                "block_id": "kq_list_item",
                "value": answer_value(bundle.pending_id),
                "action_ts": "1700000000.000001",
            }
        ],
        trigger_id=fake_slack.issue_trigger(BOB.id),
        response_url=fake_slack.issue_response_url(
            listing.channel, BOB.id, listing.message_ts, is_ephemeral=True
        ),
        channel=driver.ws.channels[listing.channel],
    )
    assert driver.transport.deliver(
        "interactive", forged, accepts_response_payload=False, delivery=Delivery()
    ).ok
    fake_slack.wait_for(
        lambda: (
            len([e for e in fake_slack.ephemerals(user=BOB.id) if "not on the list" in e.text]) == 2
        ),
        10,
        "the second refusal",
    )
    fake_slack.settle(quiet=1.0, timeout=10)
    assert not any(c.method == "views.open" for c in fake_slack.calls()[mark:])
    assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"

    # Alice may: the shortcut opens the reject modal for her.
    mark = fake_slack.mark()
    driver.message_shortcut(SHORTCUT, CHANNEL, card.ts, user=ALICE)
    assert open_modal(fake_slack, REJECT_MODAL, after=mark).user == ALICE.id
