"""Attribution end to end (issue 32 §6), on a Kandev with several people (``kandev_people``)
and a route acting as the people who click (``identity = "linked"``): a card and the audit
name the Slack person and the Kandev account they acted with; an approval made in Kandev's web
UI names the account Kandev records (``permission_resolution.actor_user_id``) — by its linked
Slack person, else by its Kandev display name — and one made in Slack by a linked person is
theirs in Kandev's own record too (in this process over HTTP, and as a process over Socket
Mode). Someone not linked acts with the bot's account: Slack names them, Kandev credits the
bot, nobody's Kandev account is named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kandev_slack.core.approval import approval_key
from kandev_slack.inproc import InProcessBot
from kandev_slack.kits.fakeslack import ALICE, BOB, FakeSlack
from kandev_slack.ops.vault import Vault
from kandev_slack.store.records import AuditEntry
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    click_stale,
    distinct_question,
    outcome_line,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_outcome,
)
from tests.e2e.linking import linked_settings
from tests.kit.harness import CHANNEL, Cast, Person, Seeder, permission_spec
from tests.kit.polling import eventually

RM = permission_spec("Run rm -rf build", "execute", {"command": "rm -rf build", "cwd": "/repo"})


def linked_bot(factory: Any, tmp_path: Path) -> InProcessBot:
    """The bot in this process acting as the people who linked their Kandev account."""
    routes = tmp_path / "routes.toml"
    routes.write_text(f'[defaults]\nchannel = "{CHANNEL}"\nidentity = "linked"\n', encoding="utf-8")
    bot = start_bot(
        factory, KANDEV_SLACK_CONFIG=str(routes), KANDEV_SLACK_SECRET_KEY=Vault.new_key()
    )
    assert isinstance(bot, InProcessBot)
    return bot


def link(bot: InProcessBot, slack_user: str, person: Person) -> None:
    """``slack_user`` linked to ``person``'s Kandev account, straight in the store (the
    Connect modal's end result)."""
    assert bot.bot is not None
    bot.bot.store.links.link(
        slack_user, person.user_id, person.display_name, person.email, person.token
    )


def audited(bot: InProcessBot, pending_id: str, action: str, result: str) -> AuditEntry:
    assert bot.bot is not None
    store = bot.bot.store

    def found() -> AuditEntry | None:
        entries = store.audit_log.audit_entries(pending_id)
        return next((e for e in entries if (e.action, e.result) == (action, result)), None)

    return eventually(found, timeout=POLL_S + MARGIN_S)


def test_a_linked_persons_answer_names_them_and_their_kandev_account(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    cast = kandev_people
    bot = linked_bot(people_app_factory, tmp_path)
    link(bot, ALICE.id, cast.ana)
    bundle = people_seed([distinct_question(61)], title="Pick a database")
    card = wait_card(fake_slack, bundle.pending_id)

    assert (
        slack_driver(bot.events_url).click(CHANNEL, card.ts, text="PostgreSQL", user=ALICE).status
        == 200
    )
    done = wait_outcome(fake_slack, card.ts, "✅")

    assert outcome_line(done) == f"✅ Answered by <@{ALICE.id}> (Kandev: Ana) in Slack: PostgreSQL"
    assert "<@" not in done.text and "by Ana in Slack" in done.text  # the notification's text
    entry = audited(bot, bundle.pending_id, "answer", "won")
    assert (entry.user, entry.kandev_user) == (ALICE.id, cast.ana.user_id)


def test_an_approval_allowed_in_kandevs_web_ui_by_ben_names_him_by_his_kandev_name(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    cast = kandev_people
    bot = linked_bot(people_app_factory, tmp_path)
    link(bot, ALICE.id, cast.ana)
    seeded = people_seed.permission([RM], title="Ben allows it in the web UI")
    key = approval_key(seeded.request_id)
    card = wait_card(fake_slack, key)

    cast.people.allow_as(cast.ben, seeded, "allow_once")

    done = wait_outcome(fake_slack, card.ts, "✅", timeout=POLL_S * 2 + MARGIN_S)
    assert outcome_line(done) == "✅ Allowed once by Ben in Kandev"
    entry = audited(bot, key, "answered", "synced")
    assert (entry.user, entry.kandev_user) == ("bot", cast.ben.user_id)
    # A late click (Ana's, with her own account) is told who chose first.
    click_stale(slack_driver(bot.events_url), CHANNEL, card.ts, text="Reject", user=ALICE)
    told = wait_ephemeral(fake_slack, ALICE.id, "chose first")
    assert told.text == "Ben chose first in Kandev: Allowed once. Your choice was not sent."


def test_an_approval_rejected_in_kandevs_web_ui_by_a_linked_person_names_their_slack_user(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, tmp_path
) -> None:
    cast = kandev_people
    bot = linked_bot(people_app_factory, tmp_path)
    link(bot, BOB.id, cast.ben)
    seeded = people_seed.permission([RM], title="Ben rejects it in the web UI")
    key = approval_key(seeded.request_id)
    card = wait_card(fake_slack, key)

    cast.people.allow_as(cast.ben, seeded, "reject_once")

    done = wait_outcome(fake_slack, card.ts, "⛔", timeout=POLL_S * 2 + MARGIN_S)
    assert outcome_line(done) == f"⛔ Rejected by <@{BOB.id}> (Kandev: Ben) in Kandev"
    entry = audited(bot, key, "rejected", "synced")
    assert (entry.user, entry.kandev_user) == (BOB.id, cast.ben.user_id)


def test_an_approval_allowed_in_slack_by_linked_ana_is_hers_in_kandevs_audit_too(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    cast = kandev_people
    bot = linked_bot(people_app_factory, tmp_path)
    link(bot, ALICE.id, cast.ana)
    seeded = people_seed.permission([RM], title="Ana allows it in Slack")
    key = approval_key(seeded.request_id)
    card = wait_card(fake_slack, key)

    assert (
        slack_driver(bot.events_url).click(CHANNEL, card.ts, text="Allow once", user=ALICE).status
        == 200
    )

    done = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(done) == f"✅ Allowed once by <@{ALICE.id}> (Kandev: Ana) in Slack"
    resolution = eventually(lambda: cast.people.resolution(seeded))
    assert resolution["actor_user_id"] == cast.ana.user_id
    assert resolution["actor_kind"] == "personal_access_token"
    entry = audited(bot, key, "approve", "won")
    assert (entry.user, entry.kandev_user) == (ALICE.id, cast.ana.user_id)


def test_someone_not_linked_acts_with_the_bots_account_and_no_kandev_account_is_named(
    people_app_factory,
    kandev_people: Cast,
    people_seed: Seeder,
    fake_slack: FakeSlack,
    slack_driver,
    tmp_path,
) -> None:
    cast = kandev_people
    bot = linked_bot(people_app_factory, tmp_path)
    seeded = people_seed.permission([RM], title="Bob is not linked")
    key = approval_key(seeded.request_id)
    card = wait_card(fake_slack, key)

    assert (
        slack_driver(bot.events_url).click(CHANNEL, card.ts, text="Allow once", user=BOB).status
        == 200
    )

    done = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(done) == f"✅ Allowed once by <@{BOB.id}> in Slack"
    resolution = eventually(lambda: cast.people.resolution(seeded))
    assert resolution["actor_user_id"] == cast.bot.user_id  # Kandev credits the bot's account
    entry = audited(bot, key, "approve", "won")
    assert (entry.user, entry.kandev_user) == (BOB.id, None)


def test_over_socket_mode_a_linked_persons_approval_is_theirs_on_the_card_and_in_kandev(
    people_bot_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    cast = kandev_people
    settings = linked_settings(tmp_path, "", {ALICE.id: cast.ana})
    start_bot(people_bot_factory, mode="socket", **settings)
    seeded = people_seed.permission([RM], title="Ana allows it over the socket")
    card = wait_card(fake_slack, approval_key(seeded.request_id))

    ack = slack_driver(transport="socket").click(CHANNEL, card.ts, text="Allow once", user=ALICE)
    assert ack.ok

    done = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(done) == f"✅ Allowed once by <@{ALICE.id}> (Kandev: Ana) in Slack"
    resolution = eventually(lambda: cast.people.resolution(seeded))
    assert resolution["actor_user_id"] == cast.ana.user_id
