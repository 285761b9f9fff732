"""The task's assignee end to end (issue 32 §8), on a Kandev with several people
(``kandev_people``): in a route with ``notify_assignee = true``, the person a task is assigned
to in Kandev (``assignee_user_id``), when they linked that Kandev account, gets the DM card of
its questions and approvals (answerable there, as themselves) and is the one its reminders
mention, instead of the route's ``mention``. Nobody else's DM changes: an assignee who never
linked, or a route without the key, gets nothing; quiet hours hold the assignee's DM card as
any other.

People are linked straight in the store before the bot starts (the Connect modal's end result),
and tasks are assigned before the bot first reads them (the bot keeps a task for 45 s)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from kandev_slack.cards import ids
from kandev_slack.core.approval import approval_key
from kandev_slack.kits.fakeslack import ALICE, BOB, CallRecord, FakeSlack, PostedMessage
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    distinct_question,
    outcome_line,
    start_bot,
    wait_card,
    wait_outcome,
)
from tests.e2e.linking import linked_settings
from tests.kit.harness import CHANNEL, Cast, Seeder, permission_spec
from tests.kit.polling import eventually

ASSIGNED = "📌 A task assigned to you in Kandev"
REMINDER = "⏰ Still waiting for an answer after"
SUMMARY = "🌙 While you were away:"
RM = permission_spec("Run rm -rf build", "execute", {"command": "rm -rf build", "cwd": "/repo"})
#: How long the quiet hours of the quiet test last from now (a bound the test waits past).
QUIET_S = 25


def dm_of(fake: FakeSlack, user: str) -> str:
    return fake.ctx.resolve_channel(user)


def note_of(message: PostedMessage) -> str:
    """A DM card's note: it leads the card's grey line (kandev_slack/cards/parts/copy.py)."""
    meta = next(b for b in message.blocks if b.get("block_id") == ids.BLOCK_META)
    return str(meta["elements"][0]["text"])


def decided(bot: Any, *pending_ids: str) -> bool:
    """Whether the DM cards of these (posted) cards were decided."""
    undecided = {c.pending_id for c in bot.bot.store.followups.unnotified_posted()}
    return not undecided & set(pending_ids)


def reminders(fake: FakeSlack, ts: str) -> list[CallRecord]:
    return [
        c
        for c in fake.calls("chat.postMessage")
        if c.ok
        and c.params.get("thread_ts") == ts
        and str(c.params.get("text")).startswith(REMINDER)
    ]


def test_the_linked_assignee_gets_the_dm_card_of_a_question_and_answers_there(
    people_app_factory,
    kandev_people: Cast,
    people_seed: Seeder,
    fake_slack: FakeSlack,
    slack_driver,
    tmp_path,
) -> None:
    cast = kandev_people
    settings = linked_settings(tmp_path, "notify_assignee = true\n", {ALICE.id: cast.ana})
    bundle = people_seed([distinct_question(71)], title="Ana's task")
    cast.people.assign(bundle.task_id, cast.ana)
    bot = start_bot(people_app_factory, **settings)
    card = wait_card(fake_slack, bundle.pending_id)

    dm = dm_of(fake_slack, ALICE.id)
    copy = fake_slack.wait_for(
        lambda: next(iter(fake_slack.messages(dm)), None), POLL_S + MARGIN_S, "Ana's DM card"
    )
    assert note_of(copy).startswith(f"{ASSIGNED} — first asked in <#{CHANNEL}>")
    assert bundle.pending_id in str(copy.metadata)
    assert fake_slack.messages(dm_of(fake_slack, BOB.id)) == []  # nobody else's DM

    ack = slack_driver(bot.events_url).click(dm, copy.ts, text="MongoDB", user=ALICE)
    assert ack.status == 200
    done = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(done) == f"✅ Answered by <@{ALICE.id}> (Kandev: Ana) in Slack: MongoDB"
    fake_slack.wait_for(
        lambda: outcome_line(fake_slack.message(dm, copy.ts)) == outcome_line(done),
        POLL_S + MARGIN_S,
        "the DM card's outcome",
    )


def test_the_linked_assignee_gets_the_dm_card_of_an_approval(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack: FakeSlack, tmp_path
) -> None:
    cast = kandev_people
    settings = linked_settings(tmp_path, "notify_assignee = true\n", {ALICE.id: cast.ana})
    seeded = people_seed.permission([RM], title="Ana's approval")
    cast.people.assign(seeded.task_id, cast.ana)
    start_bot(people_app_factory, **settings)
    wait_card(fake_slack, approval_key(seeded.request_id))

    dm = dm_of(fake_slack, ALICE.id)
    copy = fake_slack.wait_for(
        lambda: next(iter(fake_slack.messages(dm)), None), POLL_S + MARGIN_S, "Ana's DM card"
    )
    assert note_of(copy).startswith(ASSIGNED)
    assert approval_key(seeded.request_id) in str(copy.metadata)


def test_no_dm_card_for_an_assignee_never_linked_nor_in_a_route_without_the_key(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack: FakeSlack, tmp_path
) -> None:
    cast = kandev_people
    routes = (
        "notify_assignee = true\n"
        f'[[route]]\nlabels = ["no-dm"]\nchannel = "{CHANNEL}"\nnotify_assignee = false\n'
    )
    settings = linked_settings(tmp_path, routes, {ALICE.id: cast.ana})
    bens = people_seed([distinct_question(72)], title="Ben never linked")
    cast.people.assign(bens.task_id, cast.ben)
    quiet_route = people_seed([distinct_question(73)], title="No DM here", labels=["no-dm"])
    cast.people.assign(quiet_route.task_id, cast.ana)
    bot = start_bot(people_app_factory, **settings)
    wait_card(fake_slack, bens.pending_id)
    wait_card(fake_slack, quiet_route.pending_id)

    eventually(lambda: decided(bot, bens.pending_id, quiet_route.pending_id), POLL_S + MARGIN_S)
    # Decided with no DM card: none recorded (a DM card is recorded with that decision).
    store = bot.bot.store
    assert store.cards.messages_of(bens.pending_id) == []
    assert store.cards.messages_of(quiet_route.pending_id) == []
    assert fake_slack.messages(dm_of(fake_slack, ALICE.id)) == []
    assert fake_slack.messages(dm_of(fake_slack, BOB.id)) == []


def test_reminders_mention_the_linked_assignee_instead_of_the_routes_mention(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack: FakeSlack, tmp_path
) -> None:
    cast = kandev_people
    routes = f'notify_assignee = true\nremind_after = "1s"\nmention = ["{BOB.id}"]\n'
    settings = linked_settings(tmp_path, routes, {ALICE.id: cast.ana})
    assigned = people_seed([distinct_question(74)], title="Assigned to Ana")
    cast.people.assign(assigned.task_id, cast.ana)
    unassigned = people_seed([distinct_question(75)], title="Assigned to nobody")
    bens = people_seed([distinct_question(76)], title="Assigned to Ben, not linked")
    cast.people.assign(bens.task_id, cast.ben)
    start_bot(people_app_factory, **settings)
    cards = {
        bundle.pending_id: wait_card(fake_slack, bundle.pending_id)
        for bundle in (assigned, unassigned, bens)
    }

    def reminder(pending_id: str) -> str:
        ts = cards[pending_id].ts
        found = fake_slack.wait_for(
            lambda: next(iter(reminders(fake_slack, ts)), None),
            5 + MARGIN_S,
            f"the reminder of {pending_id}",
        )
        return str(found.params["text"])

    ana_s = reminder(assigned.pending_id)
    assert ana_s.endswith(f" <@{ALICE.id}>") and f"<@{BOB.id}>" not in ana_s
    assert reminder(unassigned.pending_id).endswith(f" <@{BOB.id}>")
    bens_reminder = reminder(bens.pending_id)
    assert bens_reminder.endswith(f" <@{BOB.id}>") and f"<@{ALICE.id}>" not in bens_reminder


def test_quiet_hours_hold_the_assignees_dm_card_for_their_summary(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack: FakeSlack, tmp_path
) -> None:
    cast = kandev_people
    now = datetime.now(UTC)
    hours = f"{now - timedelta(hours=1):%H:%M:%S}-{now + timedelta(seconds=QUIET_S):%H:%M:%S}"
    routes = f'notify_assignee = true\nquiet_hours = "{hours}"\nquiet_tz = "UTC"\n'
    settings = linked_settings(tmp_path, routes, {ALICE.id: cast.ana})
    bundle = people_seed([distinct_question(77)], title="Asked while Ana sleeps")
    cast.people.assign(bundle.task_id, cast.ana)
    bot = start_bot(people_app_factory, QUIET_CHECK_S="0.2", **settings)
    wait_card(fake_slack, bundle.pending_id)
    dm = dm_of(fake_slack, ALICE.id)

    eventually(lambda: decided(bot, bundle.pending_id), POLL_S + MARGIN_S)
    assert bot.bot.store.cards.messages_of(bundle.pending_id) == []  # held, not recorded
    assert fake_slack.messages(dm) == []
    summary = fake_slack.wait_for(
        lambda: next(iter(fake_slack.messages(dm)), None),
        QUIET_S + 10 + MARGIN_S,
        "Ana's summary once the quiet hours end",
    )
    assert summary.text == f"{SUMMARY} 1 item waits"
    time.sleep(1)
    assert len(fake_slack.messages(dm)) == 1  # the summary only: the held card is in it
