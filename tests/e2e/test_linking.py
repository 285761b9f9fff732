"""Connecting a Slack person to their own Kandev account (issue 32, points 1-3): App Home's
Connect button and ``/kandev-questions connect`` open the modal; a malformed, revoked or
expired token is a field error saying why and nothing is stored; a good one turns the modal
into "Connected", Home into "Connected to Kandev as …" with Disconnect; whoami and disconnect
say the same; a broken link shows on Home with Reconnect. In a ``required`` route an unlinked
person's click is refused with a Connect button and kept: connecting within 10 minutes offers
it (Send it / Discard, "Open the form" for a form), through a fresh admission.

The bot in this process (HTTP) on ``kandev_people``'s Kandev (auth on, real people and
tokens), SQLite; one PostgreSQL run of link and disconnect."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kandev_slack.cards import ids
from kandev_slack.cards.ids import COMMAND
from kandev_slack.kits.fakeslack import ALICE, BOB, Ephemeral, FakeSlack, SlackDriver, ViewRecord
from kandev_slack.ops.vault import Vault
from tests.e2e.helpers import (
    distinct_question,
    open_modal,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.e2e.reliability.support import still_pending
from tests.kit.harness import CHANNEL, Cast, InProcessBot, Seeder, admin_connection
from tests.unit.listing.e2e import answer_value, run_list, wait_home

CONNECT = "Connect your Kandev account"
REFUSED_CONNECT = "yours is not connected"
PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test?options=-csearch_path%3D{schema}"


def routes(tmp_path: Path, identity: str) -> str:
    path = tmp_path / f"routes-{identity}.toml"
    path.write_text(
        f'[defaults]\nchannel = "{CHANNEL}"\nidentity = "{identity}"\n', encoding="utf-8"
    )
    return str(path)


def linking_bot(factory: Any, tmp_path: Path, identity: str = "required", **env: str) -> Any:
    """The bot with every route in ``identity`` mode and a secret key to keep tokens."""
    return start_bot(
        factory,
        KANDEV_SLACK_CONFIG=routes(tmp_path, identity),
        KANDEV_SLACK_SECRET_KEY=Vault.new_key(),
        **env,
    )


def home_with(fake: FakeSlack, user: str, text: str) -> ViewRecord:
    return wait_home(fake, user, lambda v: text in v.all_text)


def open_connect_from_home(driver: SlackDriver, fake: FakeSlack, user: Any) -> ViewRecord:
    """The person opens their Home and clicks Connect: the modal."""
    driver.app_home_opened(user)
    home = home_with(fake, user.id, CONNECT)
    mark = fake.mark()
    assert driver.click_in_view(home, action_id=ids.ACTION_CONNECT, user=user).status == 200
    return open_modal(fake, ids.CALLBACK_CONNECT, mark)


def connect_by_command(driver: SlackDriver, fake: FakeSlack, user: Any) -> ViewRecord:
    """``/kandev-questions connect``: the modal."""
    mark = fake.mark()
    ack = driver.slash(COMMAND, "connect", user=user, channel=CHANNEL)
    assert ack.status == 200 and not ack.body, ack.body
    return open_modal(fake, ids.CALLBACK_CONNECT, mark)


def submit_token(driver: SlackDriver, modal: ViewRecord, token: str) -> Any:
    return driver.submit_view(modal, {ids.BLOCK_TOKEN: {ids.ACTION_TOKEN: token}})


def field_error(ack: Any) -> str:
    body = ack.json or {}
    assert body.get("response_action") == "errors", ack.body
    return str(body["errors"][ids.BLOCK_TOKEN])


def connected_view(ack: Any) -> str:
    body = ack.json or {}
    assert body.get("response_action") == "update", ack.body
    return str(body["view"]["blocks"])


def whoami(driver: SlackDriver, user: Any) -> Ephemeral:
    return run_list(driver, "whoami", user=user)


def test_connect_from_home_refuses_bad_tokens_then_links_and_disconnects(
    people_app_factory, kandev_people: Cast, fake_slack: FakeSlack, slack_driver, tmp_path
) -> None:
    cast = kandev_people
    bot = linking_bot(people_app_factory, tmp_path, "linked")
    driver = slack_driver(bot.events_url)
    modal = open_connect_from_home(driver, fake_slack, ALICE)
    assert "Settings → Account → API tokens" in modal.all_text

    # Malformed: said so, nothing stored (the modal stays open, the input empty).
    why = field_error(submit_token(driver, modal, "my password"))
    assert "not a Kandev personal access token" in why
    # Revoked (a fresh person's second token) and an expired/disabled user's: Kandev refuses.
    spent = cast.people.fresh("Spent")
    revoked = cast.people.mint(spent)
    cast.people.revoke(spent, revoked)
    assert "does not accept this token" in field_error(submit_token(driver, modal, revoked))
    cast.people.disable(spent)
    assert "does not accept" in field_error(submit_token(driver, modal, spent.token))
    assert "not connected" in whoami(driver, ALICE).all_text

    # Ana's token: the modal says whose it is; Home and whoami say the same.
    shown = connected_view(submit_token(driver, modal, cast.ana.token))
    assert "Connected to Kandev as *Ana* (ana@example.com)" in shown
    home = home_with(fake_slack, ALICE.id, "Connected to Kandev as")
    assert "Ana" in home.all_text and "Disconnect" in home.all_text
    assert "Connected to Kandev as *Ana* (ana@example.com)" in whoami(driver, ALICE).all_text
    assert "`/kandev-questions whoami`" in run_list(driver, "help", user=ALICE).all_text

    # Connecting again (the command) replaces the token (another of Ana's).
    modal = connect_by_command(driver, fake_slack, ALICE)
    assert "You are connected as *Ana*" in modal.all_text
    again = connected_view(submit_token(driver, modal, cast.people.mint(cast.ana)))
    assert "Your earlier token is forgotten" in again

    # Disconnect on Home: the link is gone; Home offers Connect again.
    home = home_with(fake_slack, ALICE.id, "Disconnect")
    assert driver.click_in_view(home, action_id=ids.ACTION_DISCONNECT, user=ALICE).status == 200
    home_with(fake_slack, ALICE.id, CONNECT)
    assert "not connected" in whoami(driver, ALICE).all_text
    gone = run_list(driver, "disconnect", user=ALICE)
    assert "nothing to disconnect" in gone.all_text
    entries = [
        e.result for e in bot.bot.store.audit_log.audit_entries(limit=50) if e.user == ALICE.id
    ]
    assert {"malformed", "refused", "connected", "disconnected", "not_linked"} <= set(entries)


def test_the_command_connects_and_a_broken_link_asks_to_reconnect(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    """``/kandev-questions connect`` opens the same modal; a token revoked after linking breaks
    the link at the next answer ("relink", with a Connect button); Home says it no longer
    works, with Reconnect."""
    cast = kandev_people
    bot = linking_bot(people_app_factory, tmp_path, "linked")
    driver = slack_driver(bot.events_url)
    person = cast.people.fresh("Rita")
    cast.people.add_member(cast.default_ws, person, "collaborator")
    token = cast.people.mint(person)

    modal = connect_by_command(driver, fake_slack, BOB)
    assert "Rita" in connected_view(submit_token(driver, modal, token))

    cast.people.revoke(person, token)
    bundle = people_seed([distinct_question(1)], title="Answered after a revoke")
    card = wait_card(fake_slack, bundle.pending_id)
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=BOB).status == 200
    told = wait_ephemeral(fake_slack, BOB.id, "no longer accepts the token")
    assert CONNECT in str(told.blocks)
    driver.app_home_opened(BOB)
    home = home_with(fake_slack, BOB.id, "Your Kandev link no longer works")
    assert "Reconnect" in home.all_text
    assert still_pending(cast.server, bundle)


def test_a_parked_click_is_offered_after_connecting_and_sent_through_admission(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    cast = kandev_people
    bot = linking_bot(people_app_factory, tmp_path, "required")
    driver = slack_driver(bot.events_url)
    bundle = people_seed([distinct_question(2)], title="Parked until connected")
    card = wait_card(fake_slack, bundle.pending_id)

    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=BOB).status == 200
    refusal = wait_ephemeral(fake_slack, BOB.id, REFUSED_CONNECT)
    assert (
        wait_final(cast.server, bundle.task_id, bundle.pending_id, "pending", timeout=1)["status"]
        == "pending"
    )
    mark = fake_slack.mark()
    assert driver.click_ephemeral(refusal, action_id=ids.ACTION_CONNECT).status == 200
    modal = open_modal(fake_slack, ids.CALLBACK_CONNECT, mark)
    connected_view(submit_token(driver, modal, cast.ana.token))

    offer = wait_ephemeral(fake_slack, BOB.id, "Before you connected, you clicked *MongoDB*")
    assert driver.click_ephemeral(offer, text="Send it").status == 200
    wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{BOB.id}>")
    assert wait_final(cast.server, bundle.task_id, bundle.pending_id, "answered")["status"] == (
        "answered"
    )
