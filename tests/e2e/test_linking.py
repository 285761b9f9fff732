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

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kandev_slack.cards import ids
from kandev_slack.cards.ids import COMMAND
from kandev_slack.kits.fakeslack import ALICE, BOB, Ephemeral, FakeSlack, SlackDriver, ViewRecord
from kandev_slack.ops.vault import Vault
from tests.e2e.helpers import (
    distinct_question,
    open_modal,
    response_of,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.e2e.reliability.support import still_pending
from tests.kit.harness import CHANNEL, CONSOLE_SCRIPT, Cast, Seeder, admin_connection, free_port
from tests.unit.listing.e2e import answer_value, run_list, wait_home

CONNECT = "Connect your Kandev account"
REFUSED_CONNECT = "yours is not connected"
#: What a person might paste by mistake instead of a token: never logged either.
PASTED_PASSWORD = "correct-Horse-battery-5taple-pasted"
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
    """``/kandev-questions connect`` opens the same modal; the answer goes to Kandev as the
    person; their token revoked after that, the next answer is refused by Kandev (401): the
    "relink" verdict, told with a Connect button, nothing sent; Home says the link no longer
    works, with Reconnect."""
    cast = kandev_people
    bot = linking_bot(people_app_factory, tmp_path, "linked")
    driver = slack_driver(bot.events_url)
    person = cast.people.fresh("Rita")
    cast.people.add_member(cast.default_ws, person, "collaborator")
    token = cast.people.mint(person)
    first = people_seed([distinct_question(7)], title="Answered as Rita")
    second = people_seed([distinct_question(8)], title="Answered after a revoke")
    first_card = wait_card(fake_slack, first.pending_id)
    second_card = wait_card(fake_slack, second.pending_id)

    modal = connect_by_command(driver, fake_slack, BOB)
    assert "Rita" in connected_view(submit_token(driver, modal, token))
    assert driver.click(CHANNEL, first_card.ts, text="MongoDB", user=BOB).status == 200
    wait_outcome(fake_slack, first_card.ts, f"✅ Answered by <@{BOB.id}>")

    cast.people.revoke(person, token)
    assert driver.click(CHANNEL, second_card.ts, text="MongoDB", user=BOB).status == 200
    told = wait_ephemeral(fake_slack, BOB.id, "no longer accepts the token")
    assert ids.ACTION_CONNECT in str(told.blocks)
    results = [e.result for e in bot.bot.store.audit_log.audit_entries(second.pending_id)]
    assert "relink" in results, results  # Kandev refused it on the answer (401)
    driver.app_home_opened(BOB)
    home = home_with(fake_slack, BOB.id, "Your Kandev link no longer works")
    assert "Reconnect" in home.all_text
    assert still_pending(cast.server, second)


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


def ephemeral_now(fake: FakeSlack, offer: Ephemeral) -> Ephemeral:
    """``offer`` as its person sees it now (replaced through its response_url since)."""
    return next(
        e
        for e in fake.ephemerals(user=offer.user)
        if (e.channel, e.message_ts) == (offer.channel, offer.message_ts)
    )


def wait_replaced(fake: FakeSlack, offer: Ephemeral, contains: str) -> Ephemeral:
    return fake.wait_for(
        lambda: (now := ephemeral_now(fake, offer)).replaced and contains in now.all_text and now,
        10.0,
        f"the offer replaced by {contains!r}",
    )


def test_a_click_answered_meanwhile_is_refused_and_a_discarded_one_is_gone(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    """Send goes through a fresh admission: the card answered between the offer and Send
    refuses it (nothing sent, the winner's answer stands). Discard drops the click: a Send
    on the old offer finds nothing."""
    cast = kandev_people
    bot = linking_bot(people_app_factory, tmp_path, "required")
    driver = slack_driver(bot.events_url)
    raced = people_seed([distinct_question(3)], title="Answered meanwhile")
    dropped = people_seed([distinct_question(4)], title="Discarded")
    raced_card = wait_card(fake_slack, raced.pending_id)
    dropped_card = wait_card(fake_slack, dropped.pending_id)
    submit_token(driver, connect_by_command(driver, fake_slack, ALICE), cast.ana.token)

    assert driver.click(CHANNEL, raced_card.ts, text="MongoDB", user=BOB).status == 200
    refusal = wait_ephemeral(fake_slack, BOB.id, REFUSED_CONNECT)
    mark = fake_slack.mark()
    driver.click_ephemeral(refusal, action_id=ids.ACTION_CONNECT)
    person = cast.people.fresh("Bea")
    cast.people.add_member(cast.default_ws, person, "collaborator")
    submit_token(driver, open_modal(fake_slack, ids.CALLBACK_CONNECT, mark), person.token)
    offer = wait_ephemeral(fake_slack, BOB.id, "Before you connected")

    # Alice answers first; Bob's Send is refused by the fresh admission.
    assert driver.click(CHANNEL, raced_card.ts, text="PostgreSQL", user=ALICE).status == 200
    wait_outcome(fake_slack, raced_card.ts, f"✅ Answered by <@{ALICE.id}>")
    assert driver.click_ephemeral(offer, text="Send it").status == 200
    told = wait_replaced(fake_slack, offer, "was not sent")
    assert "Send it" not in str(told.blocks)
    final = wait_final(cast.server, raced.task_id, raced.pending_id, "answered")
    assert response_of(final, "db")["selected_options"] == ["q1_opt1"]  # Alice's PostgreSQL

    # Disconnected again, Bob's click on the other card is kept; Discard drops it.
    run_list(driver, "disconnect", user=BOB)
    assert driver.click(CHANNEL, dropped_card.ts, text="MongoDB", user=BOB).status == 200
    asked = len(fake_slack.ephemerals(user=BOB.id))
    refusal = fake_slack.wait_for(
        lambda: next(
            (
                e
                for e in fake_slack.ephemerals(user=BOB.id)[asked - 1 :]
                if REFUSED_CONNECT in e.all_text
            ),
            None,
        ),
        10.0,
        "the second refusal",
    )
    mark = fake_slack.mark()
    driver.click_ephemeral(refusal, action_id=ids.ACTION_CONNECT)
    submit_token(driver, open_modal(fake_slack, ids.CALLBACK_CONNECT, mark), person.token)
    offer = fake_slack.wait_for(
        lambda: next(
            (
                e
                for e in fake_slack.ephemerals(user=BOB.id)
                if "Before you connected" in e.all_text and "service #4" in e.all_text
            ),
            None,
        ),
        10.0,
        "the offer of the second click",
    )
    assert driver.click_ephemeral(offer, text="Discard").status == 200
    wait_replaced(fake_slack, offer, "Discarded: nothing was sent")
    assert driver.click_ephemeral(offer, text="Send it").status == 200  # the old offer, stale
    wait_replaced(fake_slack, offer, "no longer kept")
    assert still_pending(cast.server, dropped)


def test_a_parked_answer_form_from_home_is_offered_in_a_dm_to_open_again(
    people_app_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    """ "Answer…" on Home by someone not connected: refused (a Home notice), kept; Connect
    on Home, and the offer (Home has no ephemeral messages: a direct message) opens the
    form, admitted afresh."""
    cast = kandev_people
    bot = linking_bot(people_app_factory, tmp_path, "required")
    driver = slack_driver(bot.events_url)
    bundle = people_seed([distinct_question(5)], title="Answer form parked")
    wait_card(fake_slack, bundle.pending_id)
    driver.app_home_opened(BOB)
    home = home_with(fake_slack, BOB.id, "Answer form parked")
    mark = fake_slack.mark()
    driver.click_in_view(home, value=answer_value(bundle.pending_id), user=BOB)
    home = home_with(fake_slack, BOB.id, REFUSED_CONNECT)
    assert [c for c in fake_slack.calls("views.open") if c.index >= mark] == []

    driver.click_in_view(home, action_id=ids.ACTION_CONNECT, user=BOB)
    modal = open_modal(fake_slack, ids.CALLBACK_CONNECT, mark)
    person = cast.people.fresh("Dora")
    cast.people.add_member(cast.default_ws, person, "collaborator")
    connected_view(submit_token(driver, modal, person.token))

    dm = fake_slack.ctx.resolve_channel(BOB.id)
    offer = fake_slack.wait_for(
        lambda: next(iter(fake_slack.messages(dm)), None), 10.0, "the offer in Bob's DM"
    )
    assert "you clicked *Answer…*" in offer.all_text
    mark = fake_slack.mark()
    assert driver.click(dm, offer.ts, text="Open the form", user=BOB).status == 200
    form = open_modal(fake_slack, ids.CALLBACK_ANSWER, mark)
    assert form.is_open
    fake_slack.wait_for(
        lambda: "The form is open" in fake_slack.message(dm, offer.ts).all_text, 10.0, "the DM"
    )
    assert still_pending(cast.server, bundle)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """DATABASE_URL of a fresh PostgreSQL schema, dropped afterwards (skipped when PostgreSQL
    is not there, except on CI)."""
    schema = f"kandev_slack_link_{uuid.uuid4().hex[:12]}"
    with admin_connection() as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield PG_URL.format(schema=schema)
    finally:
        with admin_connection() as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.mark.postgres
def test_link_and_disconnect_on_postgresql(
    people_app_factory, kandev_people: Cast, fake_slack, slack_driver, tmp_path, pg_url: str
) -> None:
    """The same link and disconnect with the bot's database on PostgreSQL: the token is kept
    sealed there (never in clear) and deleted on Disconnect."""
    cast = kandev_people
    bot = linking_bot(people_app_factory, tmp_path, "linked", db_url=pg_url)
    driver = slack_driver(bot.events_url)
    token = cast.people.mint(cast.ana)
    assert "Ana" in connected_view(
        submit_token(driver, connect_by_command(driver, fake_slack, ALICE), token)
    )
    assert "Connected to Kandev as *Ana*" in whoami(driver, ALICE).all_text
    schema = pg_url.rsplit("%3D", 1)[1]
    with admin_connection() as admin:
        rows = admin.execute(f'SELECT * FROM "{schema}".kandev_links').fetchall()
    assert len(rows) == 1 and token not in str(rows) and token[-16:] not in str(rows)

    driver.app_home_opened(ALICE)
    home = home_with(fake_slack, ALICE.id, "Disconnect")
    driver.click_in_view(home, action_id=ids.ACTION_DISCONNECT, user=ALICE)
    home_with(fake_slack, ALICE.id, CONNECT)
    with admin_connection() as admin:
        assert admin.execute(f'SELECT count(*) FROM "{schema}".kandev_links').fetchone() == (0,)
    assert "not connected" in whoami(driver, ALICE).all_text


# ---- secrets ------------------------------------------------------------------------------


def _leaks(outputs: dict[str, str], secrets: dict[str, str]) -> dict[str, list[str]]:
    """Where each secret (or its last 16 characters: a cut one gives itself away) shows."""
    found: dict[str, list[str]] = {}
    for where, text in outputs.items():
        names = [n for n, s in secrets.items() if s in text or s[-16:] in text]
        if names:
            found[where] = names
    return found


def _check_json(env: dict[str, str]) -> str:
    result = subprocess.run(
        [str(CONSOLE_SCRIPT), "check", "--json", "--socket"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result.stdout + result.stderr


def test_no_token_shows_anywhere_after_linking_and_answering_over_socket_mode(
    people_bot_factory, kandev_people: Cast, people_seed: Seeder, fake_slack, slack_driver, tmp_path
) -> None:
    """Guarantee 8 for people's tokens: the bot as a process in Socket Mode at DEBUG, a token
    refused then one linked, an answer made with it, whoami: neither token is in any message
    or view the fake Slack recorded, any Slack call, the bot's log, /healthz, /metrics,
    ``kandev-slack check --json`` or the SQLite file (it is sealed there)."""
    cast = kandev_people
    person = cast.people.fresh("Sam")
    cast.people.add_member(cast.default_ws, person, "collaborator")
    linked, refused = cast.people.mint(person), cast.people.mint(person)
    cast.people.revoke(person, refused)
    port = free_port()
    db = tmp_path / "bot.db"
    bot = linking_bot(
        people_bot_factory,
        tmp_path,
        "required",
        mode="socket",
        LOG_LEVEL="DEBUG",
        METRICS_PORT=str(port),
        db_url=f"sqlite:///{db}",
    )
    driver = slack_driver(transport="socket")
    bundle = people_seed([distinct_question(6)], title="Answered with a linked token")
    card = wait_card(fake_slack, bundle.pending_id, timeout=15)

    modal = open_connect_from_home(driver, fake_slack, BOB)
    assert "not a Kandev" in field_error(submit_token(driver, modal, PASTED_PASSWORD))
    assert "does not accept this token" in field_error(submit_token(driver, modal, refused))
    assert "Sam" in connected_view(submit_token(driver, modal, linked))
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=BOB).ok
    wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{BOB.id}>", timeout=15)
    assert wait_final(cast.server, bundle.task_id, bundle.pending_id, "answered")["status"]
    assert "Sam" in whoami(driver, BOB).all_text
    base = f"http://127.0.0.1:{port}"
    outputs = {
        "healthz": httpx.get(f"{base}/healthz", timeout=5).text,
        "metrics": httpx.get(f"{base}/metrics", timeout=5).text,
        "check --json": _check_json(bot.env),
    }
    assert "kandev_slack_linked_people 1" in outputs["metrics"], outputs["metrics"]
    bot.stop()
    outputs["bot log"] = bot.logs()
    outputs["every Slack call"] = json.dumps([c.params for c in fake_slack.calls()], default=str)
    outputs["every view"] = json.dumps(
        [[v.definition, v.history] for v in fake_slack.views_opened()]
        + [fake_slack.home(BOB.id).definition],  # type: ignore[union-attr]
        default=str,
    )
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    outputs["every message"] = json.dumps(
        [[m.text, m.blocks, m.versions] for c in (CHANNEL, dm) for m in fake_slack.messages(c)]
        + [[e.text, e.blocks] for e in fake_slack.ephemerals()]
        + [p.body for p in fake_slack.response_posts()],
        default=str,
    )
    outputs["database"] = "".join(
        path.read_bytes().decode("latin-1") for path in (db, Path(f"{db}-wal")) if path.exists()
    )
    assert "DEBUG" in outputs["bot log"], "the run was not at DEBUG level"
    assert "kandev links" in outputs["check --json"], outputs["check --json"]
    secrets = {
        "linked token": linked,
        "refused token": refused,
        "a pasted password": PASTED_PASSWORD,
    }
    assert _leaks(outputs, secrets) == {}
