"""kandev_slack/slack/listeners/actions.py on a real Bolt App: a click is parsed, acked, delegated
to
admission and the answer use-case, and what happened is told where the person is."""

from __future__ import annotations

import threading
from dataclasses import replace

from slack_bolt import App

from kandev_slack.cards import ids, words
from kandev_slack.cards.parts.head import secondary_actions
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import CardState
from kandev_slack.kits.fakeslack import BOB
from kandev_slack.store import Database
from tests.kit.factories import ALICE_ID, CHANNEL, make_bundle
from tests.kit.fakes import FakeKandev, FakeSlackGateway
from tests.unit.slack.slack_bodies import (
    RESPONSE_URL,
    TRIGGER_ID,
    card_choice,
    card_click,
    dispatch,
    eventually,
    home_click,
    listing_click,
    shortcut,
)

MONGO = Answer(question_id="q1", selected_options=["q1_opt2"])
POSTGRES = Answer(question_id="q1", selected_options=["q1_opt1"])


def on_card(posted, gateway: FakeSlackGateway):
    """A posted card and its message as Slack shows it."""
    card = posted(make_bundle())
    found = gateway.card_of(card.pending_id)
    assert found is not None
    return card, found[2]


def ephemerals(gateway: FakeSlackGateway, user: str = ALICE_ID) -> list[dict]:
    return [call for call in gateway.called("chat.postEphemeral") if call["user"] == user]


def test_an_option_click_is_acked_and_answers_in_kandev(
    bolt: App, posted, gateway: FakeSlackGateway, fake_kandev: FakeKandev, store: Database
) -> None:
    card, message = on_card(posted, gateway)

    status, acked = dispatch(bolt, card_click(message, CHANNEL, card.ts, text="MongoDB"))

    assert (status, acked) == (200, "")
    eventually(
        lambda: [e for e in store.audit_log.audit_entries(card.pending_id) if e.result == "won"]
    )
    assert fake_kandev.called("answer")[0]["answers"] == [MONGO]
    assert store.cards.get(card.pending_id).state is CardState.ANSWERED  # type: ignore[union-attr]
    assert ephemerals(gateway) == []  # the card says it all


def test_a_click_that_lost_in_kandev_is_told_in_the_cards_channel(
    bolt: App, posted, gateway: FakeSlackGateway, fake_kandev: FakeKandev
) -> None:
    card, message = on_card(posted, gateway)
    fake_kandev.resolve_in_kandev(card.pending_id, [POSTGRES])

    dispatch(bolt, card_click(message, CHANNEL, card.ts, text="MongoDB"))

    [told] = eventually(lambda: ephemerals(gateway))
    assert told["channel"] == CHANNEL
    assert told["text"].startswith("Answered in Kandev first: PostgreSQL.")


def test_a_forged_button_value_is_refused_audited_and_told(
    bolt: App, posted, gateway: FakeSlackGateway, fake_kandev: FakeKandev, store: Database
) -> None:
    card, message = on_card(posted, gateway)

    status, _ = dispatch(bolt, card_click(message, CHANNEL, card.ts, text="MongoDB", value="{}"))

    assert status == 200
    [told] = eventually(lambda: ephemerals(gateway))
    assert told["text"] == words.unusable_message("tampered", form=False)
    assert fake_kandev.called("answer") == []
    assert store.audit_log.audit_entries(limit=1)[0].result == "tampered"


def test_a_malformed_click_is_refused_and_told(
    bolt: App, posted, gateway: FakeSlackGateway, fake_kandev: FakeKandev, store: Database
) -> None:
    card, message = on_card(posted, gateway)
    body = card_click(message, CHANNEL, card.ts, text="MongoDB", value=42)  # not a string

    status, _ = dispatch(bolt, body)

    assert status == 200
    [told] = eventually(lambda: ephemerals(gateway))
    assert told["text"] == words.unusable_message("malformed", form=False)
    assert fake_kandev.called("answer") == []
    assert store.audit_log.audit_entries(limit=1)[0].result == "malformed"


def test_a_click_on_a_resolved_card_is_refused_where_the_person_is(
    bolt: App, posted, gateway: FakeSlackGateway, fake_kandev: FakeKandev, store: Database
) -> None:
    card, message = on_card(posted, gateway)
    dispatch(bolt, card_click(message, CHANNEL, card.ts, text="PostgreSQL", user=BOB))
    eventually(lambda: store.cards.get(card.pending_id).state is CardState.ANSWERED)  # type: ignore[union-attr]

    dispatch(bolt, card_click(message, CHANNEL, card.ts, text="MongoDB"))

    [told] = eventually(lambda: ephemerals(gateway))
    assert told["channel"] == CHANNEL
    assert told["text"].startswith(f"<@{BOB.id}> answered first in Slack: PostgreSQL.")
    assert len(fake_kandev.called("answer")) == 1

    # The first click's "won" may be audited after the second is refused: look at the late one.
    def results() -> list[str] | None:
        found = [e.result for e in store.audit_log.audit_entries(limit=10)]
        return found if "won" in found else None

    assert eventually(results).count("resolved_already") == 1


def test_reject_opens_the_reject_form_for_that_card(
    bolt: App, posted, gateway: FakeSlackGateway
) -> None:
    card, message = on_card(posted, gateway)

    status, acked = dispatch(bolt, card_choice(message, CHANNEL, card.ts, label="Reject…"))

    assert (status, acked) == (200, "")
    [opened] = eventually(lambda: gateway.called("views.open"))
    assert opened["trigger_id"] == TRIGGER_ID
    view = opened["view"]
    assert view["callback_id"] == ids.CALLBACK_REJECT
    meta = ids.parse_modal_metadata(view["private_metadata"])
    assert (meta.pending_id, meta.channel, meta.ts, meta.origin) == (
        card.pending_id,
        CHANNEL,
        card.ts,
        "card",
    )
    assert meta.response_url == RESPONSE_URL


def test_a_form_slack_will_not_open_is_told(bolt: App, posted, gateway: FakeSlackGateway) -> None:
    card, message = on_card(posted, gateway)
    gateway.fail("views.open", "expired_trigger_id")

    dispatch(bolt, card_click(message, CHANNEL, card.ts, action_id=ids.ACTION_OTHER))

    [told] = eventually(lambda: ephemerals(gateway))
    assert told["text"] == words.form_not_opened_message()


def test_a_form_the_person_may_not_use_is_not_opened_and_they_are_told(
    bolt: App, posted, gateway: FakeSlackGateway, store: Database
) -> None:
    card, message = on_card(posted, gateway)
    gateway.private_channels[CHANNEL] = frozenset({BOB.id})
    listed = [
        {
            "type": "actions",
            "block_id": "kq_list_item",
            "elements": [
                {
                    "type": "button",
                    "action_id": ids.ACTION_ANSWER_MODAL,
                    "text": {"type": "plain_text", "text": "Answer…"},
                    "value": ids.ButtonValue(pending_id=card.pending_id).encode(),
                }
            ],
        }
    ]

    dispatch(bolt, listing_click(listed, CHANNEL, action_id=ids.ACTION_ANSWER_MODAL))

    [told] = eventually(lambda: ephemerals(gateway))
    assert told["text"] == words.forbidden_message()
    assert gateway.called("views.open") == []
    assert store.audit_log.audit_entries(limit=1)[0].result == "forbidden"


def test_answer_on_the_home_tab_opens_the_form_for_a_bundle_not_posted_yet(
    bolt: App, services, fake_kandev: FakeKandev, gateway: FakeSlackGateway
) -> None:
    bundle = fake_kandev.add(make_bundle())
    home = services.home.build(ALICE_ID)

    dispatch(bolt, home_click(home, action_id=ids.ACTION_ANSWER_MODAL))

    [opened] = eventually(lambda: gateway.called("views.open"))
    meta = ids.parse_modal_metadata(opened["view"]["private_metadata"])
    assert (meta.pending_id, meta.ts, meta.origin) == (bundle.pending_id, "", "home")


def test_open_in_kandev_is_only_acked(bolt: App, posted, gateway: FakeSlackGateway) -> None:
    card, message = on_card(posted, gateway)
    calls = len(gateway.calls)

    # The link button of a card posted before the "More" overflow (and of a resolved card).
    old = replace(message, blocks=[secondary_actions("https://kandev.example.test/t/x")])
    status, acked = dispatch(bolt, card_click(old, CHANNEL, card.ts, action_id=ids.ACTION_OPEN))

    assert (status, acked) == (200, "")
    assert len(gateway.calls) == calls


def test_the_shortcut_and_home_actions_ack_before_any_slack_call(
    bolt: App, services, posted, fake_kandev: FakeKandev, gateway: FakeSlackGateway, monkeypatch
) -> None:
    """The message shortcut and the App Home's "Answer…" ack first (the trigger stays valid
    3 s): a Slack that does not answer views.open does not hold their ack."""
    card = posted(make_bundle())
    home = services.home.build(ALICE_ID)
    slack_answers = threading.Event()
    open_view = gateway.open_view
    monkeypatch.setattr(
        gateway, "open_view", lambda *a, **k: slack_answers.wait(10) and open_view(*a, **k)
    )
    try:
        for body in (
            shortcut(CHANNEL, card.ts),
            home_click(home, action_id=ids.ACTION_ANSWER_MODAL),
        ):
            assert dispatch(bolt, body) == (200, "")
        assert gateway.called("views.open") == []
    finally:
        slack_answers.set()
    eventually(lambda: len(gateway.called("views.open")) == 2)


def _fill(lane) -> list:
    """Every place of ``lane`` taken (released by the caller)."""
    places = []
    while (place := lane.reserve()) is not None:
        places.append(place)
    return places


def test_a_click_while_the_answering_lane_is_full_is_told_busy_and_records_nothing(
    bolt: App, services, posted, gateway: FakeSlackGateway, fake_kandev: FakeKandev, store: Database
) -> None:
    card, message = on_card(posted, gateway)
    places = _fill(services.answering)
    try:
        status, acked = dispatch(bolt, card_click(message, CHANNEL, card.ts, text="MongoDB"))
        [told] = eventually(lambda: ephemerals(gateway))
    finally:
        for place in places:
            place.release()

    assert (status, acked) == (200, "")
    assert told["text"] == words.busy_message()
    assert (
        fake_kandev.called("answer") == []
        and store.submissions.submissions_for(card.pending_id) == []
    )


def test_the_conversation_opens_at_once_and_is_filled_in(
    bolt: App, posted, gateway: FakeSlackGateway
) -> None:
    card, message = on_card(posted, gateway)

    status, _ = dispatch(bolt, card_choice(message, CHANNEL, card.ts, label="Conversation"))

    assert status == 200
    [opened] = eventually(lambda: gateway.called("views.open"))
    assert "Loading" in str(opened["view"])
    [filled] = eventually(lambda: gateway.called("views.update"))
    assert filled["view_id"] and "Loading" not in str(filled["view"])


def test_skip_from_the_overflow_asks_first_and_sends_nothing_until_skip_it(
    bolt: App, posted, gateway: FakeSlackGateway, fake_kandev: FakeKandev
) -> None:
    card, message = on_card(posted, gateway)

    status, _ = dispatch(bolt, card_choice(message, CHANNEL, card.ts, label="Skip…"))

    assert status == 200
    [asked] = eventually(lambda: ephemerals(gateway))
    labels = [e["text"]["text"] for b in asked["blocks"] for e in b.get("elements", [])]
    assert labels == ["Skip it", "Keep"]
    assert fake_kandev.called("reject") == []
    confirm = listing_click(asked["blocks"], CHANNEL, text="Skip it")
    assert dispatch(bolt, confirm)[0] == 200
    [sent] = eventually(lambda: fake_kandev.called("reject"))
    assert card.pending_id in str(sent)
