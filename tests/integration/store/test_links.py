"""People's own Kandev accounts in the store (SQLite and PostgreSQL): a link reads back as
written, its token never in clear in the database; keys rotate without losing a link; a token
no key opens reads as a broken link, never an error; a reconnect racing a 401 is never marked
broken; a parked click is taken once, and only while it is fresh by the database's clock."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from sqlalchemy import event, select

from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database, KandevLink, NoSecretKey, StoreError
from kandev_slack.store.schema import metadata
from tests.kit.fakes import FakeClock

ANA, BOB, CAROL = "U0ANA00001", "U0BOB00002", "U0CAROL003"
ANA_TOKEN = "kandev_pat_0a1b2c3d_" + "A" * 20 + "-_" + "z" * 21
ANA_NEW_TOKEN = "kandev_pat_0a1b2c3d_" + "N" * 43
BOB_TOKEN = "kandev_pat_deadbeef_" + "b" * 43

OLD_KEY, NEW_KEY = Vault.new_key(), Vault.new_key()


@pytest.fixture
def vaulted(open_store: Callable[..., Database], clock: FakeClock) -> Database:
    return open_store(clock=clock, vault=Vault.from_keys(OLD_KEY))


def reopen(open_store: Callable[..., Database], clock: FakeClock, keys: str | None) -> Database:
    """The same database opened by a replica with other keys (None: no key at all)."""
    return open_store(clock=clock, vault=Vault.from_keys(keys) if keys is not None else None)


def every_value(store: Database) -> list[str]:
    """The text of every column of every row of every table."""
    values: list[str] = []
    with store.sql.engine.connect() as conn:
        for table in metadata.sorted_tables:
            for row in conn.execute(select(table)):
                values += [str(value) for value in row]
    return values


def test_a_link_reads_back_as_written_and_by_its_kandev_user(
    vaulted: Database, clock: FakeClock
) -> None:
    assert vaulted.links.get(ANA) is None
    vaulted.links.link(ANA, "kd-ana", "Ana Lima", "ana@example.com", ANA_TOKEN)
    link = vaulted.links.get(ANA)
    assert link == KandevLink(
        slack_user_id=ANA,
        kandev_user_id="kd-ana",
        display_name="Ana Lima",
        email="ana@example.com",
        token=ANA_TOKEN,
        linked_at=clock.now,
        broken_at=None,
    )
    assert not link.broken
    assert vaulted.links.by_kandev_user("kd-ana") == link
    assert vaulted.links.by_kandev_user("kd-nobody") is None
    vaulted.links.link(BOB, "kd-bob", None, None, BOB_TOKEN)  # Kandev gave no name nor email
    bob = vaulted.links.get(BOB)
    assert bob is not None and (bob.display_name, bob.email, bob.token) == ("", "", BOB_TOKEN)
    assert [x.slack_user_id for x in vaulted.links.all_links()] == [ANA, BOB]
    assert vaulted.links.counts() == (2, 0)


def test_no_token_is_shown_by_a_link_nor_stored_in_clear(vaulted: Database) -> None:
    vaulted.links.link(ANA, "kd-ana", "Ana", "ana@example.com", ANA_TOKEN)
    vaulted.links.link(BOB, "kd-bob", "Bob", "bob@example.com", BOB_TOKEN)
    vaulted.links.park_click(ANA, "p1", {"action": "answer", "text": "PostgreSQL"})
    link = vaulted.links.get(ANA)
    assert link is not None
    for shown in (repr(link), str(link), f"{link}", repr(vaulted.links.all_links())):
        assert ANA_TOKEN not in shown and "0a1b2c3d" not in shown and "token" not in shown
    values = every_value(vaulted)
    assert any(value == "kd-ana" for value in values)  # the scan does read the links
    for token in (ANA_TOKEN, BOB_TOKEN):
        secret = token[len("kandev_pat_0a1b2c3d_") :]
        assert len(secret) == 43
        assert not [v for v in values if token in v or secret in v or "kandev_pat_" in v]


def test_linking_again_replaces_the_token_and_mends_a_broken_link(
    vaulted: Database, clock: FakeClock
) -> None:
    vaulted.links.link(ANA, "kd-ana", "Ana", "ana@example.com", ANA_TOKEN)
    assert vaulted.links.mark_broken(ANA, ANA_TOKEN)
    broken = vaulted.links.get(ANA)
    assert broken is not None and broken.broken and broken.broken_at == clock.now
    assert vaulted.links.counts() == (0, 1)
    clock.advance(60)
    vaulted.links.link(ANA, "kd-ana2", "Ana L.", "ana@example.org", ANA_NEW_TOKEN)
    mended = vaulted.links.get(ANA)
    assert mended is not None and not mended.broken
    assert (mended.kandev_user_id, mended.display_name, mended.email, mended.token) == (
        "kd-ana2",
        "Ana L.",
        "ana@example.org",
        ANA_NEW_TOKEN,
    )
    assert mended.linked_at == clock.now
    assert vaulted.links.by_kandev_user("kd-ana") is None  # the old account is no one's now
    assert vaulted.links.counts() == (1, 0)


def test_a_reconnect_racing_a_401_is_never_marked_broken(vaulted: Database) -> None:
    vaulted.links.link(ANA, "kd-ana", "Ana", "ana@example.com", ANA_TOKEN)
    # Ana's click used ANA_TOKEN; she connected anew before its 401 came back
    vaulted.links.link(ANA, "kd-ana", "Ana", "ana@example.com", ANA_NEW_TOKEN)
    assert not vaulted.links.mark_broken(ANA, ANA_TOKEN)
    link = vaulted.links.get(ANA)
    assert link is not None and not link.broken and link.token == ANA_NEW_TOKEN
    assert not vaulted.links.mark_broken(BOB, BOB_TOKEN)  # never linked
    assert not vaulted.links.mark_broken(ANA, "")
    # the current token refused: broken, once and for all, whoever says it first
    with ThreadPoolExecutor(6) as pool:
        said = list(pool.map(lambda _: vaulted.links.mark_broken(ANA, ANA_NEW_TOKEN), range(6)))
    assert said == [True] * 6
    assert vaulted.links.counts() == (0, 1)


def test_mark_broken_loses_to_a_reconnect_between_its_read_and_its_write(
    vaulted: Database,
) -> None:
    """The fence is the sealed token read: a Connect committed by another replica between
    that read and the write is left alone (PostgreSQL; on SQLite a write transaction holds
    the file, so no write can come between)."""
    engine = vaulted.sql.engine
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite serialises write transactions: no write comes between")
    vaulted.links.link(ANA, "kd-ana", "Ana", "ana@example.com", ANA_TOKEN)
    reconnected: list[bool] = []

    def reconnect_first(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        if statement.lstrip().startswith("UPDATE kandev_links") and not reconnected:
            reconnected.append(True)  # another replica's Connect, in its own transaction
            with ThreadPoolExecutor(1) as other:
                other.submit(
                    vaulted.links.link, ANA, "kd-ana", "Ana", "ana@example.com", ANA_NEW_TOKEN
                ).result()

    event.listen(engine, "before_cursor_execute", reconnect_first)
    try:
        assert not vaulted.links.mark_broken(ANA, ANA_TOKEN)
    finally:
        event.remove(engine, "before_cursor_execute", reconnect_first)
    assert reconnected
    link = vaulted.links.get(ANA)
    assert link is not None and not link.broken and link.token == ANA_NEW_TOKEN


def test_unlink_forgets_the_token_and_the_parked_click(vaulted: Database) -> None:
    vaulted.links.link(ANA, "kd-ana", "Ana", "ana@example.com", ANA_TOKEN)
    vaulted.links.park_click(ANA, "p1", {"action": "answer"})
    assert vaulted.links.unlink(ANA)
    assert vaulted.links.get(ANA) is None
    assert vaulted.links.take_parked_click(ANA, 600) is None
    assert not vaulted.links.unlink(ANA)
    assert vaulted.links.counts() == (0, 0)
    assert not [v for v in every_value(vaulted) if "kandev_pat_" in v or "kd-ana" in v]


def test_no_link_without_a_key_and_stored_links_read_broken(
    open_store: Callable[..., Database], clock: FakeClock, vaulted: Database
) -> None:
    vaulted.links.link(ANA, "kd-ana", "Ana", "ana@example.com", ANA_TOKEN)
    keyless = reopen(open_store, clock, None)
    with pytest.raises(NoSecretKey, match="KANDEV_SLACK_SECRET_KEY is not set") as caught:
        keyless.links.link(BOB, "kd-bob", "Bob", "bob@example.com", BOB_TOKEN)
    assert isinstance(caught.value, StoreError) and BOB_TOKEN not in str(caught.value)
    assert keyless.links.get(BOB) is None
    ana = keyless.links.get(ANA)
    assert ana is not None and ana.broken and ana.token == ""
    assert not keyless.links.mark_broken(ANA, ANA_TOKEN)
    assert keyless.links.reseal_all() == 0
    assert keyless.links.counts() == (1, 0)  # as stored: a key put back opens it again


def test_bad_input_is_refused_by_name(vaulted: Database) -> None:
    with pytest.raises(ValueError, match="needs a token"):
        vaulted.links.link(ANA, "kd-ana", "Ana", "a@x", "")
    with pytest.raises(ValueError, match="Slack user id and a Kandev user id"):
        vaulted.links.link(ANA, "", "Ana", "a@x", ANA_TOKEN)
    with pytest.raises(ValueError, match="Slack user id and a pending id"):
        vaulted.links.park_click(ANA, "", {})
    with pytest.raises(TypeError, match="payload is a dict, not list"):
        vaulted.links.park_click(ANA, "p1", [])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not JSON serializable"):
        vaulted.links.park_click(ANA, "p1", {"at": object()})
    with pytest.raises(ValueError, match="max_age_s"):
        vaulted.links.take_parked_click(ANA, -1)
    assert vaulted.links.get(ANA) is None and vaulted.links.take_parked_click(ANA, 60) is None


# ---- keys ---------------------------------------------------------------------------------


def test_a_key_rotates_without_losing_a_link(
    open_store: Callable[..., Database], clock: FakeClock, vaulted: Database
) -> None:
    vaulted.links.link(ANA, "kd-ana", "Ana", "ana@example.com", ANA_TOKEN)
    vaulted.links.link(BOB, "kd-bob", "Bob", "bob@example.com", BOB_TOKEN)
    assert vaulted.links.reseal_all() == 0  # already under the newest (only) key
    before = {v for v in every_value(vaulted) if v.startswith("gAAAA")}
    assert len(before) == 2

    # the new key first, the old one after it: the old seals still open
    rotated = reopen(open_store, clock, f"{NEW_KEY}, {OLD_KEY}")
    ana = rotated.links.get(ANA)
    assert ana is not None and ana.token == ANA_TOKEN and not ana.broken
    # a link made now is sealed under the new key
    rotated.links.link(CAROL, "kd-carol", "Carol", "carol@example.com", "kandev_pat_c")
    assert rotated.links.reseal_all() == 2  # Ana's and Bob's; Carol's is new already
    assert rotated.links.reseal_all() == 0
    after = {v for v in every_value(rotated) if v.startswith("gAAAA")}
    assert len(after) == 3 and not after & before

    # the old key dropped: every link still opens
    new_only = reopen(open_store, clock, NEW_KEY)
    assert {x.slack_user_id: x.token for x in new_only.links.all_links()} == {
        ANA: ANA_TOKEN,
        BOB: BOB_TOKEN,
        CAROL: "kandev_pat_c",
    }
    assert not any(x.broken for x in new_only.links.all_links())
    # and a replica still on the old key alone reads them as broken, not as an error
    old_only = reopen(open_store, clock, OLD_KEY)
    assert all(x.broken and x.token == "" for x in old_only.links.all_links())


def test_a_token_no_key_opens_is_a_broken_link_said_once(
    open_store: Callable[..., Database],
    clock: FakeClock,
    vaulted: Database,
    caplog: pytest.LogCaptureFixture,
) -> None:
    vaulted.links.link(ANA, "kd-ana", "Ana", "ana@example.com", ANA_TOKEN)
    wrong = reopen(open_store, clock, NEW_KEY)
    with caplog.at_level(logging.WARNING, logger="kandev_slack.store.people.links"):
        link = wrong.links.get(ANA)
        again = wrong.links.by_kandev_user("kd-ana")
        assert wrong.links.reseal_all() == 0
    assert link is not None and link.broken and link.token == ""
    assert link.broken_at == clock.now  # since now, by the database's clock
    assert again == link
    assert (link.kandev_user_id, link.display_name, link.email) == (
        "kd-ana",
        "Ana",
        "ana@example.com",
    )
    assert not wrong.links.mark_broken(ANA, ANA_TOKEN)  # nothing to compare with
    said = [r.getMessage() for r in caplog.records]
    assert len([m for m in said if ANA in m]) == 1, said  # once per person, not per read
    assert any("sealed under a key no longer in KANDEV_SLACK_SECRET_KEY" in m for m in said)
    assert not [m for m in said if "kandev_pat_" in m or "0a1b2c3d" in m]
    # the right key back: the link works again, nothing was lost
    right = reopen(open_store, clock, f"{NEW_KEY},{OLD_KEY}")
    mended = right.links.get(ANA)
    assert mended is not None and mended.token == ANA_TOKEN and not mended.broken


def test_a_working_link_is_found_first_by_its_kandev_user(
    vaulted: Database, clock: FakeClock
) -> None:
    vaulted.links.link(ANA, "kd-shared", "Ana", "ana@example.com", ANA_TOKEN)
    clock.advance(1)
    vaulted.links.link(BOB, "kd-shared", "Ana", "ana@example.com", BOB_TOKEN)
    found = vaulted.links.by_kandev_user("kd-shared")
    assert found is not None and found.slack_user_id == BOB  # the latest
    assert vaulted.links.mark_broken(BOB, BOB_TOKEN)
    found = vaulted.links.by_kandev_user("kd-shared")
    assert found is not None and found.slack_user_id == ANA  # a working one first


# ---- parked clicks ------------------------------------------------------------------------


def test_a_parked_click_is_taken_once_while_fresh(vaulted: Database, clock: FakeClock) -> None:
    payload = {"action": "answer", "answers": [{"question_id": "q1", "text": "PostgreSQL"}]}
    vaulted.links.park_click(ANA, "p1", payload)
    clock.advance(599)
    assert vaulted.links.take_parked_click(ANA, 600) == ("p1", payload)
    assert vaulted.links.take_parked_click(ANA, 600) is None  # taken
    # a newer click replaces the one parked before
    vaulted.links.park_click(ANA, "p1", {"action": "reject"})
    vaulted.links.park_click(ANA, "p2", {"action": "approve", "option_id": "allow_once"})
    assert vaulted.links.take_parked_click(ANA, 600) == (
        "p2",
        {"action": "approve", "option_id": "allow_once"},
    )


def test_an_old_parked_click_is_deleted_not_offered(vaulted: Database, clock: FakeClock) -> None:
    vaulted.links.park_click(ANA, "p1", {"action": "answer"})
    vaulted.links.park_click(BOB, "p2", {"action": "answer"})
    clock.advance(601)
    assert vaulted.links.take_parked_click(ANA, 600) is None
    assert vaulted.links.take_parked_click(ANA, 10_000) is None  # gone, not just hidden
    assert vaulted.links.take_parked_click(BOB, 10_000) == ("p2", {"action": "answer"})


def test_people_taking_one_parked_click_at_once_have_one_winner(vaulted: Database) -> None:
    vaulted.links.park_click(ANA, "p1", {"action": "answer"})
    with ThreadPoolExecutor(6) as pool:
        taken = list(pool.map(lambda _: vaulted.links.take_parked_click(ANA, 600), range(6)))
    assert [t for t in taken if t is not None] == [("p1", {"action": "answer"})]


def test_the_database_clock_decides_a_parked_click_s_age(
    open_store: Callable[..., Database],
) -> None:
    """Without a stand-in clock: the database's own now, on each backend."""
    store = open_store(vault=Vault.from_keys(OLD_KEY))
    store.links.park_click(ANA, "p1", {"action": "answer"})
    assert store.links.take_parked_click(ANA, 3600) == ("p1", {"action": "answer"})
    store.links.link(ANA, "kd-ana", "Ana", "ana@example.com", ANA_TOKEN)
    assert store.links.mark_broken(ANA, ANA_TOKEN)
    link = store.links.get(ANA)
    assert link is not None and link.broken_at is not None and link.broken_at >= link.linked_at


def test_retention_forgets_clicks_parked_by_people_who_never_connected(
    vaulted: Database, clock: FakeClock
) -> None:
    vaulted.links.park_click(ANA, "p1", {"action": "answer"})
    clock.advance(timedelta(hours=23).total_seconds())
    vaulted.links.park_click(BOB, "p2", {"action": "answer"})
    clock.advance(timedelta(hours=2).total_seconds())
    vaulted.retention.purge()
    assert vaulted.links.take_parked_click(ANA, 10**9) is None
    assert vaulted.links.take_parked_click(BOB, 10**9) == ("p2", {"action": "answer"})
