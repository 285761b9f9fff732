"""Guarantee 7: who may answer. KANDEV_SLACK_CONFIG restricts a route to some user ids and a
user group (resolved with usergroups.users.list on the fake). A refused person is told why
ephemerally and nothing reaches Kandev (buttons, opening a modal, submitting one); an allowed
person (directly or through the group) answers; a click claiming another channel than the
card's is refused; every attempt, allowed or not, is in the bot's audit log."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kandev_slack.kits.fakeslack import ALICE, BOB, Delivery, SlackUser, find_element, payloads
from tests.e2e.helpers import (
    act,
    db_question,
    open_modal,
    skip,
    start_bot,
    wait_card,
    wait_final,
    wait_in_form,
    wait_outcome,
)
from tests.e2e.reliability.support import audit_of, still_pending
from tests.kit.harness import CHANNEL

CAROL = SlackUser(id="U0CAROL003", name="carol", real_name="Carol Oncall")
ONCALL = "S0ONCALL01"
OTHER_MODAL = "kq_other_modal"
FORBIDDEN = "not on the list"


def _routing_file(tmp_path: Path, workspace_id: str) -> Path:
    path = tmp_path / "kandev-slack.toml"
    path.write_text(
        "[defaults]\n"
        f'channel = "{CHANNEL}"\n'
        "\n"
        "[[route]]\n"
        f'workspace = "{workspace_id}"\n'
        f'channel = "{CHANNEL}"\n'
        f'answerers = ["{ALICE.id}", "{ONCALL}"]\n'
    )
    return path


@pytest.mark.fault("answers from people not allowed to answer", guarantee=7)
def test_only_configured_answerers_reach_kandev_and_every_attempt_is_audited(
    app_factory,  # noqa: F811
    seed,
    fake_slack,
    slack_driver,
    tmp_path,
    reliability,
):
    fake_slack.add_user(CAROL)
    fake_slack.set_usergroup(ONCALL, [CAROL.id])
    config = _routing_file(tmp_path, seed.server.workspace_id)
    bot = start_bot(app_factory, KANDEV_SLACK_CONFIG=str(config))
    db = Path(bot.env["DATABASE_URL"].removeprefix("sqlite:///"))
    first = seed([db_question()], title="Refused first")
    second = seed([db_question()], title="Carol's")
    third = seed([db_question()], title="Alice's")
    cards = {b.pending_id: wait_card(fake_slack, b.pending_id) for b in (first, second, third)}
    driver = slack_driver(bot.events_url)
    c1 = cards[first.pending_id]

    def refused(user: SlackUser, count: int) -> None:
        fake_slack.wait_for(
            lambda: (
                len([e for e in fake_slack.ephemerals(user=user.id) if FORBIDDEN in e.all_text])
                >= count
            ),
            10,
            f"refusal #{count} for {user.id}",
        )

    # Bob is neither listed nor in the group: a button, "Other answer…", "Reject…", "Skip",
    # "I'm on it" and the "Reject agent question" message shortcut.
    mark = fake_slack.mark()
    assert driver.click(CHANNEL, c1.ts, text="MongoDB", user=BOB).status == 200
    refused(BOB, 1)
    assert driver.click(CHANNEL, c1.ts, text="Other answer…", user=BOB).status == 200
    refused(BOB, 2)
    assert act(driver, CHANNEL, c1.ts, "Reject…", user=BOB).status == 200
    refused(BOB, 3)
    assert skip(driver, CHANNEL, c1.ts, user=BOB).status == 200
    refused(BOB, 4)
    assert act(driver, CHANNEL, c1.ts, "👀 I'm on it", user=BOB).status == 200
    refused(BOB, 5)
    assert driver.message_shortcut("reject_question", CHANNEL, c1.ts, user=BOB).status == 200
    refused(BOB, 6)
    assert [c for c in fake_slack.calls("views.open") if c.index >= mark] == []

    # A modal Alice opened, submitted as Bob: refused at submission too, in the form.
    mark = fake_slack.mark()
    assert driver.click(CHANNEL, c1.ts, text="Other answer…", user=ALICE).status == 200
    view = open_modal(fake_slack, OTHER_MODAL, after=mark)
    text_block = next(
        b["block_id"]
        for b in view.blocks
        if b.get("type") == "input" and b["block_id"].startswith("kq_text:")
    )
    ack = driver.submit_view(view, {text_block: {"kq_text": "Bob's idea"}}, user=BOB)
    assert ack.status == 200
    wait_in_form(fake_slack, view.id, FORBIDDEN)  # the form turns into the refusal
    assert still_pending(seed.server, first)

    # Alice's click claiming another channel than the card's: refused, nothing sent.
    ref = find_element(c1.blocks, text="MongoDB", types=frozenset({"button"}))
    forged = payloads.block_actions(
        driver.ws,
        driver.user(ALICE),
        container={
            "type": "message",
            "message_ts": c1.ts,
            "channel_id": "C0PLATFORM",
            "is_ephemeral": False,
        },
        actions=[payloads.action_item(ref)],
        trigger_id=fake_slack.issue_trigger(ALICE.id),
        response_url=fake_slack.issue_response_url("C0PLATFORM", ALICE.id, c1.ts),
        channel=driver.ws.channels["C0PLATFORM"],
    )
    assert driver.transport.deliver(
        "interactive", forged, accepts_response_payload=False, delivery=Delivery()
    ).ok
    fake_slack.wait_for(
        lambda: any(f"<#{CHANNEL}>" in e.all_text for e in fake_slack.ephemerals(user=ALICE.id)),
        10,
        "the wrong-channel refusal",
    )
    assert still_pending(seed.server, first)

    # Carol answers through the on-call group; Alice (listed by id) through the modal.
    c2 = cards[second.pending_id]
    assert driver.click(CHANNEL, c2.ts, text="PostgreSQL", user=CAROL).status == 200
    assert wait_final(seed.server, second.task_id, second.pending_id, "answered")["status"] == (
        "answered"
    )
    wait_outcome(fake_slack, c2.ts, f"✅ Answered by <@{CAROL.id}>")
    assert fake_slack.calls("usergroups.users.list"), "the group was resolved through Slack"
    c3 = cards[third.pending_id]
    mark = fake_slack.mark()
    assert driver.click(CHANNEL, c3.ts, text="Other answer…", user=ALICE).status == 200
    view3 = open_modal(fake_slack, OTHER_MODAL, after=mark)
    text3 = next(
        b["block_id"]
        for b in view3.blocks
        if b.get("type") == "input" and b["block_id"].startswith("kq_text:")
    )
    assert driver.submit_view(view3, {text3: {"kq_text": "SQLite is enough"}}, user=ALICE).ok
    assert wait_final(seed.server, third.task_id, third.pending_id, "answered")["status"] == (
        "answered"
    )
    assert still_pending(seed.server, first), "nothing from Bob (or the forged click) got through"

    # Every attempt is in the audit log: who, which bundle, what, and how it ended. The
    # modal's outcome is audited once Kandev answered, after its "Sending…" ack: wait for it.
    def attempts() -> list[tuple]:
        return [
            (e.pending_id, e.user, e.action, e.result)
            for e in audit_of(db)
            if e.user != "bot" and e.action in ("answer", "reject", "claim")
        ]

    deadline = time.monotonic() + 10
    while len(entries := attempts()) < 10 and time.monotonic() < deadline:
        time.sleep(0.05)
    expected = [
        (first.pending_id, BOB.id, "answer", "forbidden"),  # button
        (first.pending_id, BOB.id, "answer", "forbidden"),  # "Other answer…" (not opened)
        (first.pending_id, BOB.id, "reject", "forbidden"),  # "Reject…" (not opened)
        (first.pending_id, BOB.id, "reject", "forbidden"),  # "Skip" (nothing sent)
        (first.pending_id, BOB.id, "claim", "forbidden"),  # "I'm on it" (the card unchanged)
        (first.pending_id, BOB.id, "reject", "forbidden"),  # message shortcut (not opened)
        (first.pending_id, BOB.id, "answer", "forbidden"),  # modal submission
        (first.pending_id, ALICE.id, "answer", "wrong_channel"),
        (second.pending_id, CAROL.id, "answer", "won"),
        (third.pending_id, ALICE.id, "answer", "won"),
    ]
    assert entries == expected, json.dumps(entries, indent=1)
    sources = [e.source for e in audit_of(db) if e.user == BOB.id]
    assert sources[-1].startswith("slack:modal"), sources
    reliability.record(
        "answers from people not allowed to answer",
        guarantee=7,
        survived=True,
        lost=0,
        duplicates=0,
        detail=f"{len(expected)} attempts audited",
    )
