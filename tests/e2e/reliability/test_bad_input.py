"""Guarantee 6: bad input is refused clearly and never changes anything.

Forged, missing or stale signatures get 401 before anything else happens (no Kandev answer, no
Slack write, no audit entry). Malformed payloads, unknown action / callback ids, tampered button
values and private_metadata, and oversized text get a clear refusal (an HTTP 4xx for what Slack
never sends, else an ephemeral message or a modal field error), never a 500; the bot stays
healthy and a later honest click still answers.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from slack_sdk import WebClient

from kandev_slack.kits.fakeslack import (
    ALICE,
    FORM,
    Ack,
    Delivery,
    PostedMessage,
    SlackDriver,
    find_element,
    payloads,
)
from tests.e2e.helpers import (
    act,
    db_question,
    input_blocks,
    open_modal,
    start_bot,
    wait_card,
    wait_final,
    wait_outcome,
)
from tests.e2e.reliability.support import audit_of, slack_writes, still_pending
from tests.kit.harness import CHANNEL

OTHER_MODAL = "kq_other_modal"
REJECT_MODAL = "kq_reject_modal"


def _db(bot) -> Any:
    return bot.env["DATABASE_URL"].removeprefix("sqlite:///")


def _click_payload(
    driver: SlackDriver, card: PostedMessage, *, action: dict[str, Any]
) -> dict[str, Any]:
    """A block_actions payload for a click on ``card`` whose action item is ``action``."""
    fake, ws = driver.fake, driver.ws
    return payloads.block_actions(
        ws,
        driver.user(ALICE),
        container={
            "type": "message",
            "message_ts": card.ts,
            "channel_id": card.channel,
            "is_ephemeral": False,
        },
        actions=[action],
        trigger_id=fake.issue_trigger(ALICE.id),
        response_url=fake.issue_response_url(card.channel, ALICE.id, card.ts),
        channel=ws.channels[card.channel],
        message=card.to_slack(include_metadata=False),
    )


def _button(card: PostedMessage, text: str) -> dict[str, Any]:
    ref = find_element(card.blocks, text=text, types=frozenset({"button"}))
    return payloads.action_item(ref)


def _interactive(driver: SlackDriver, payload: Any, **delivery: Any) -> Ack:
    body = urlencode({"payload": json.dumps(payload)}).encode()
    return driver.transport.post(body, FORM, Delivery(**delivery))


@pytest.mark.fault("forged / missing / stale signatures", guarantee=6)
def test_bad_signatures_are_refused_without_side_effects(
    bot_factory,  # noqa: F811
    seed,
    fake_slack,
    slack_driver,
    reliability,
):
    bot = start_bot(bot_factory)
    bundle = seed([db_question()], title="Signed only")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)
    fake_slack.settle(quiet=0.5, timeout=10)
    audit_before = len(audit_of(_db(bot)))
    mark = fake_slack.mark()

    honest_click = _click_payload(driver, card, action=_button(card, "MongoDB"))
    statuses = []
    for mode in ("forged", "missing", "stale"):
        statuses.append(_interactive(driver, honest_click, signature=mode).status)
        # Garbage bodies are refused on the signature too, before anyone parses them.
        garbage = driver.transport.post(b"payload=%7Bnot-json", FORM, Delivery(signature=mode))
        statuses.append(garbage.status)
        event = payloads.app_home_opened(driver.user(ALICE), "D0ALICE", None)
        statuses.append(
            driver.transport.post(
                json.dumps(payloads.event_callback(driver.ws, event)).encode(),
                "application/json",
                Delivery(signature=mode),
            ).status
        )
    assert statuses == [401] * 9, statuses

    fake_slack.settle(quiet=1.0, timeout=10)
    assert slack_writes(fake_slack, mark) == []
    assert fake_slack.response_posts() == []
    assert still_pending(seed.server, bundle)
    assert len(audit_of(_db(bot))) == audit_before
    assert bot.health()[0] == 200
    reliability.record(
        "forged / missing / stale signatures",
        guarantee=6,
        survived=True,
        lost=0 if still_pending(seed.server, bundle) else 1,
    )


MALFORMED_INTERACTIONS: list[Any] = [
    [],
    "just a string",
    42,
    {},
    {"type": "block_actions"},
    {"type": "block_actions", "user": 5, "actions": "x"},
    {"type": "block_actions", "user": "U0ALICE001", "actions": [{"action_id": 7}]},
    {"type": "block_actions", "user": {"id": "U0ALICE001"}, "actions": []},
    {"type": "block_actions", "user": {"id": "U0ALICE001"}, "actions": ["kq_option:0"]},
    {"type": "block_actions", "user": {"id": "U0ALICE001"}, "actions": [{"value": "{}"}]},
    {"type": "block_actions", "user": {}, "actions": [{"action_id": "kq_option:0"}]},
    {"type": "block_actions", "user": {"id": "U0ALICE001"}, "actions": [{"action_id": None}]},
    {
        "type": "block_actions",
        "user": {"id": "U0ALICE001"},
        "container": "C0QUESTION",
        "actions": [{"action_id": "kq_option:0", "value": '{"p":"x"}'}],
    },
    {"type": "view_submission"},
    {"type": "view_submission", "user": {"id": "U0ALICE001"}, "view": "kq_answer_modal"},
    {"type": "view_submission", "user": {"id": "U0ALICE001"}, "view": {"callback_id": 5}},
    {
        "type": "view_submission",
        "user": {"id": "U0ALICE001"},
        "view": {
            "callback_id": "kq_answer_modal",
            "private_metadata": "not json",
            "state": {"values": []},
        },
    },
    {
        "type": "view_submission",
        "user": {"id": "U0ALICE001"},
        "view": {"callback_id": "kq_reject_modal", "private_metadata": '{"p": 1}', "state": "x"},
    },
    {"type": "view_closed", "user": None, "view": None},
    {"type": "message_action", "callback_id": "reject_question", "user": {"id": "U0ALICE001"}},
    {"type": "shortcut", "callback_id": 3},
    {"type": "interactive_message", "actions": {}},
    {"type": 17, "user": {"id": "U0ALICE001"}},
]

MALFORMED_RAW: list[tuple[bytes, str]] = [
    (b"payload=%7Bnot-json", FORM),
    (b"payload=", FORM),
    (b"payload=%5B1%2C2", FORM),
    ("\u00e9\u0000garbage".encode(), FORM),
    (b"{not json", "application/json"),
    (b'{"type": "event_callback", "event": "x"}', "application/json"),
    (b'{"type": "event_callback", "event": {"type": 5, "user": []}}', "application/json"),
    (b'{"type": "url_verification"}', "application/json"),
    (b"[1, 2, 3]", "application/json"),
    (b"command=%2Fkandev-questions", FORM),
    (b"command=%2Fkandev-questions&user_id=&text=%00%FF", FORM),
    (b"", FORM),
]


@pytest.mark.fault("malformed payloads", guarantee=6)
def test_malformed_payloads_get_a_clear_refusal_and_never_a_500(
    bot_factory,  # noqa: F811
    seed,
    fake_slack,
    slack_driver,
    reliability,
):
    bot = start_bot(bot_factory)
    bundle = seed([db_question()], title="Still answerable")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    answers: list[tuple[str, int]] = []
    for payload in MALFORMED_INTERACTIONS:
        answers.append((json.dumps(payload)[:80], _interactive(driver, payload).status))
    for body, content_type in MALFORMED_RAW:
        answers.append((repr(body)[:80], driver.transport.post(body, content_type).status))
    server_errors = [(what, status) for what, status in answers if status >= 500]
    assert server_errors == [], server_errors
    # Refused as malformed (400) or unhandled (404), or acked by the listener that explains.
    assert {status for _, status in answers} <= {200, 400, 404}, answers
    assert sum(status == 400 for _, status in answers) >= len(MALFORMED_RAW) // 2, answers

    assert bot.proc is not None and bot.proc.poll() is None, "the bot died"
    assert bot.health()[0] == 200
    assert still_pending(seed.server, bundle)
    assert "Traceback" not in bot.logs()
    # A later honest click still works.
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE).status == 200
    wait_outcome(fake_slack, card.ts, "✅ Answered by")
    reliability.record(
        "malformed payloads",
        guarantee=6,
        survived=True,
        detail=f"{len(answers)} malformed requests, statuses {sorted({s for _, s in answers})}",
    )


@pytest.mark.fault("tampered values, unknown ids, oversized text", guarantee=6)
def test_tampered_and_unknown_input_is_refused_clearly(
    bot_factory,  # noqa: F811
    seed,
    fake_slack,
    slack_driver,
    reliability,
):
    bot = start_bot(bot_factory)
    mine = seed([db_question()], title="This card")
    other = seed([db_question()], title="Another card")
    card = wait_card(fake_slack, mine.pending_id)
    wait_card(fake_slack, other.pending_id)
    driver = slack_driver(bot.events_url)
    button = _button(card, "MongoDB")
    value = json.loads(button["value"])

    def click_with(action: dict[str, Any], expect: str) -> None:
        before = len(fake_slack.ephemerals(user=ALICE.id))
        ack = _interactive(driver, _click_payload(driver, card, action=action))
        assert ack.status == 200, (action, ack)
        fake_slack.wait_for(
            lambda: len(fake_slack.ephemerals(user=ALICE.id)) > before, 10, f"refusal of {action}"
        )
        told = fake_slack.ephemerals(user=ALICE.id)[-1]
        assert expect in told.all_text, (action, told.all_text)

    # Another bundle's pending_id on this card, an option that is not in the bundle, garbage.
    click_with({**button, "value": json.dumps({**value, "p": other.pending_id})}, "not made by")
    click_with({**button, "value": json.dumps({**value, "o": "q1_opt9"})}, "not made by")
    click_with({**button, "value": json.dumps({**value, "q": "nope"})}, "not made by")
    click_with({**button, "value": "{garbage"}, "not made by")
    click_with({**button, "value": "x" * 5000}, "not made by")
    click_with({**button, "value": ""}, "not made by")
    # An action id this app never rendered (an old card, another app's button).
    click_with({**button, "action_id": "kq_from_the_future"}, "not")
    click_with({**button, "action_id": "legacy_button"}, "not")

    # A modal whose private_metadata names another bundle than the inputs it carries.
    mark = fake_slack.mark()
    assert driver.click(CHANNEL, card.ts, text="Other answer…", user=ALICE).status == 200
    view = open_modal(fake_slack, OTHER_MODAL, after=mark)
    blocks = list(input_blocks(view))
    text_block = next(b for b in blocks if b.startswith("kq_text:"))
    tampered_meta = json.loads(view.private_metadata)
    tampered_meta["p"] = other.pending_id
    tampered = payloads.view_submission(
        driver.ws,
        driver.user(ALICE),
        {
            **view.to_slack({text_block: {"kq_text": {"type": "plain_text_input", "value": "hi"}}}),
            "private_metadata": json.dumps(tampered_meta),
        },
        fake_slack.issue_trigger(ALICE.id),
    )
    ack = _interactive(driver, tampered)
    assert ack.status == 200, ack
    assert (ack.json or {}).get("response_action") == "errors", ack.body
    assert set((ack.json or {})["errors"]) <= set(blocks), ack.json

    # Oversized free text: a field error, the modal stays open, nothing sent.
    ack = driver.submit_view(
        view, {text_block: {"kq_text": "x" * 5000}}, user=ALICE, enforce_client_rules=False
    )
    assert ack.status == 200
    assert (ack.json or {}).get("response_action") == "errors", ack.body
    assert "5,000" in json.dumps(ack.json), ack.json
    assert fake_slack.view(view.id).is_open

    # Oversized reject reason.
    mark = fake_slack.mark()
    assert act(driver, CHANNEL, card.ts, "Reject…", user=ALICE).status == 200
    reject = open_modal(fake_slack, REJECT_MODAL, after=mark)
    reason_block = next(iter(input_blocks(reject)))
    ack = driver.submit_view(
        reject, {reason_block: {"kq_reason": "y" * 4001}}, user=ALICE, enforce_client_rules=False
    )
    assert (ack.json or {}).get("response_action") == "errors", ack.body

    # A modal this app does not know (an old version's, another app's callback id).
    web = WebClient(token=fake_slack.workspace.bot_token, base_url=fake_slack.api_url)
    legacy = web.views_open(
        trigger_id=fake_slack.issue_trigger(ALICE.id),
        view={
            "type": "modal",
            "callback_id": "legacy_modal",
            "title": {"type": "plain_text", "text": "Old form"},
            "submit": {"type": "plain_text", "text": "Send"},
            "blocks": [
                {
                    "type": "input",
                    "block_id": "legacy_input",
                    "label": {"type": "plain_text", "text": "Anything"},
                    "element": {"type": "plain_text_input", "action_id": "legacy_text"},
                }
            ],
        },
    )["view"]["id"]
    ack = driver.submit_view(legacy, {"legacy_input": {"legacy_text": "hello"}}, user=ALICE)
    assert ack.status == 200, ack
    assert (ack.json or {}).get("response_action") == "errors", ack.body
    assert set(ack.json["errors"]) == {"legacy_input"}

    # Nothing reached Kandev; the bot is healthy; an honest click still answers.
    assert still_pending(seed.server, mine) and still_pending(seed.server, other)
    assert bot.health()[0] == 200
    assert "Traceback" not in bot.logs()
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE).status == 200
    final = wait_final(seed.server, mine.task_id, mine.pending_id, "answered")
    assert final["status"] == "answered"
    assert still_pending(seed.server, other)
    reliability.record(
        "tampered values, unknown ids, oversized text",
        guarantee=6,
        survived=True,
        lost=0 if final["status"] == "answered" else 1,
    )


@pytest.mark.fault("malformed Socket Mode envelopes", guarantee=6)
def test_malformed_socket_mode_envelopes_are_acked_and_harmless(
    bot_factory,  # noqa: F811
    seed,
    fake_slack,
    slack_driver,
    reliability,
):
    start_bot(bot_factory, mode="socket")
    bundle = seed([db_question()], title="Over Socket Mode")
    card = wait_card(fake_slack, bundle.pending_id)
    socket = fake_slack.socket
    acked = 0
    for payload in MALFORMED_INTERACTIONS:
        if not isinstance(payload, dict):
            continue  # Slack's envelopes always carry an object
        socket.send_envelope("interactive", payload, timeout=5)  # raises if never acked
        acked += 1
    for event in ({"type": 5}, {"type": "app_home_opened", "user": {"id": []}}, {}):
        socket.send_envelope("events_api", {"type": "event_callback", "event": event}, timeout=5)
        acked += 1
    assert still_pending(seed.server, bundle)
    driver = slack_driver(transport="socket")
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE).ok
    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert final["status"] == "answered"
    reliability.record(
        "malformed Socket Mode envelopes",
        guarantee=6,
        survived=True,
        lost=0 if final["status"] == "answered" else 1,
        detail=f"{acked} envelopes acked",
    )
