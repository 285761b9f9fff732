"""Admission.admit: every interaction is located, checked and either admitted or refused with a
typed refusal — and every refusal is audited with its kind, source and bundle."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

import pytest
from sqlalchemy import event

from kandev_slack.cards import words
from kandev_slack.config.routing import RouteRule, Routing
from kandev_slack.core.domain import Card, CardState
from kandev_slack.slack.presenters import said
from kandev_slack.store import Database
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.answering.admission import (
    Admission,
    Admitted,
    Refusal,
    Request,
    Unusable,
    Where,
)
from kandev_slack.usecases.identity import Identities
from kandev_slack.usecases.intake.sync import SyncEngine
from kandev_slack.usecases.views.waiting import Permalinks, SharedReads, WaitingQueue
from tests.kit.factories import (
    ALICE_ID,
    CHANNEL,
    answered,
    make_bundle,
    make_outcome,
    numbered_bundle,
)
from tests.kit.fakes import OWN_TEAM, FakeKandev, FakeSlackGateway

BOB_ID = "U0BOB00002"
GROUP_ID = "S0ANSWERERS"
OTHER_CHANNEL = "C0ELSEWHERE"

Admit = Callable[..., Admitted | Refusal]


def click(card: Card, *, user: str = ALICE_ID, **changes) -> Request:
    """A click on ``card``'s message, as requests.click describes it (option q1_opt2)."""
    fields = {
        "user_id": user,
        "action": "answer",
        "source": "slack:button",
        "via": "card",
        "pending_id": card.pending_id,
        "channel": card.channel,
        "ts": card.ts,
        "option": ("q1", "q1_opt2"),
        "detail": "a click",
    }
    return Request(**{**fields, **changes})


def from_list(pending_id: str, *, user: str = ALICE_ID, via: str = "list") -> Request:
    """ "Answer…" on the listing (or the App Home) for ``pending_id``."""
    return Request(
        user_id=user, action="answer", source="slack:button", via=via, pending_id=pending_id
    )  # type: ignore[arg-type]


def shortcut(channel: str, ts: str | None, *, user: str = ALICE_ID) -> Request:
    return Request(
        user_id=user,
        action="reject",
        source="slack:shortcut",
        via="shortcut",
        channel=channel,
        ts=ts,
        detail="not opened",
    )


def form(card: Card, *, channel: str | None = None, ts: str | None = None) -> Request:
    """A submitted modal opened from a card: its metadata names the card's message."""
    return Request(
        user_id=ALICE_ID,
        action="answer",
        source="slack:modal:card",
        via="card",
        pending_id=card.pending_id,
        channel=channel or card.channel,
        ts=ts or card.ts,
        form=True,
        detail="metadata",
    )


@pytest.fixture
def admit_with(
    store: Database, fake_kandev: FakeKandev, tasks, gateway: FakeSlackGateway
) -> Callable:
    """``admit_with(routing)(request)``: admission under another routing file."""

    def make(routing: Routing) -> Admit:
        answerers = Answerers(routing, gateway)
        queue = WaitingQueue(
            fake_kandev, store.cards, routing, tasks, Permalinks(gateway), answerers, SharedReads()
        )
        identities = Identities(
            bot=fake_kandev,
            links=store.links,
            answerers=answerers,
            client_for=lambda token: FakeKandev(fake_kandev.base_url),
        )
        return Admission(store.cards, store.audit_log, queue, answerers, identities).admit

    return make


def assert_refused(
    result: Admitted | Refusal, kind: str, store: Database, *, pending_id: str | None, source: str
) -> Refusal:
    """``result`` is a refusal of ``kind`` (worded, unless it is a silent one), and the
    newest audit entry records it."""
    assert isinstance(result, Refusal), result
    assert result.kind == kind
    assert bool(said.refusal(result)) == (kind != "redelivered")
    newest = store.audit_log.audit_entries(limit=1)[0]
    assert (newest.result, newest.source, newest.pending_id) == (kind, source, pending_id)
    return result


def resolve(store: Database, card: Card, outcome) -> Card:
    assert store.cards.transition(card.pending_id, outcome)
    resolved = store.cards.get(card.pending_id)
    assert resolved is not None
    return resolved


# ---- tampered ------------------------------------------------------------------------------


def test_a_click_naming_another_bundle_than_its_message_is_tampered(
    posted, admission: Admission, store: Database
) -> None:
    card = posted(numbered_bundle(1))
    other = posted(numbered_bundle(2))

    result = admission.admit(click(card, pending_id=other.pending_id))

    refusal = assert_refused(
        result, "tampered", store, pending_id=card.pending_id, source="slack:button"
    )
    assert said.refusal(refusal) == words.tampered_message()
    assert refusal.card is not None and refusal.card.pending_id == card.pending_id


def test_an_option_that_is_not_the_bundles_is_tampered(
    posted, admission: Admission, store: Database
) -> None:
    card = posted(make_bundle())

    for option in (("q1", "q9_opt9"), ("q9", "q1_opt1")):
        result = admission.admit(click(card, option=option))
        assert_refused(result, "tampered", store, pending_id=card.pending_id, source="slack:button")


def test_a_form_naming_another_cards_message_is_tampered(
    posted, admission: Admission, store: Database
) -> None:
    card = posted(numbered_bundle(1))
    other = posted(numbered_bundle(2))

    result = admission.admit(form(card, ts=other.ts))

    assert_refused(result, "tampered", store, pending_id=card.pending_id, source="slack:modal:card")
    result = admission.admit(form(card, channel=OTHER_CHANNEL))
    assert_refused(result, "tampered", store, pending_id=card.pending_id, source="slack:modal:card")


# ---- locating ------------------------------------------------------------------------------


def test_an_unknown_bundle_is_refused_from_a_message_and_from_the_list(
    admission: Admission, store: Database
) -> None:
    result = admission.admit(
        Request(
            user_id=ALICE_ID,
            action="answer",
            source="slack:button",
            via="card",
            pending_id="pending-404",
            channel=CHANNEL,
            ts="1700000000.999999",
        )
    )
    refusal = assert_refused(
        result, "unknown_bundle", store, pending_id="pending-404", source="slack:button"
    )
    assert said.refusal(refusal) == words.unknown_bundle_message()

    result = admission.admit(from_list("pending-405"))
    assert_refused(result, "unknown_bundle", store, pending_id="pending-405", source="slack:button")


def test_the_shortcut_on_another_message_is_not_a_card(
    posted, admission: Admission, store: Database
) -> None:
    posted(make_bundle())

    result = admission.admit(shortcut(CHANNEL, "1700000000.424242"))

    refusal = assert_refused(result, "not_a_card", store, pending_id=None, source="slack:shortcut")
    assert said.refusal(refusal) == words.not_a_card_message()


def claimed_not_recorded(fake_kandev: FakeKandev, sync: SyncEngine, store: Database) -> Card:
    """A bundle whose card is claimed for CHANNEL, its message's ts not recorded yet (the
    moment between Slack's answer to chat.postMessage and the publisher's mark_posted)."""
    bundle = make_bundle()
    fake_kandev.add(bundle)
    assert sync.reconcile_once().posted == [bundle.pending_id]
    card = store.cards.get(bundle.pending_id)
    assert card is not None and card.ts is None
    return card


def test_a_click_on_a_card_whose_post_is_being_recorded_waits_for_it(
    fake_kandev: FakeKandev, sync: SyncEngine, store: Database, admission: Admission
) -> None:
    card = claimed_not_recorded(fake_kandev, sync, store)
    ts = "1700000000.000777"
    recorder = threading.Timer(0.2, store.cards.mark_posted, (card.pending_id, CHANNEL, ts))
    recorder.start()

    result = admission.admit(click(card, ts=ts))

    recorder.join()
    assert isinstance(result, Admitted), result
    assert result.card.pending_id == card.pending_id and result.card.ts == ts


def test_a_click_whose_post_is_recorded_between_two_looks_is_admitted(
    fake_kandev: FakeKandev, sync: SyncEngine, store: Database, admission: Admission
) -> None:
    """The publisher records the ts just after the click's first look-up by message and
    before admission asks whether the card is still being posted: the click is on the card
    all the same (it was refused as 'answer from its card in #channel')."""
    card = claimed_not_recorded(fake_kandev, sync, store)
    ts = "1700000000.000778"
    looked: list[str] = []

    def record_after_the_first_look(_conn, _cursor, statement: str, *_args) -> None:
        if not looked and "JOIN card_messages" in statement:  # the last query of the look-up
            looked.append(statement)
            assert store.cards.mark_posted(card.pending_id, CHANNEL, ts)

    event.listen(store.sql.engine, "after_cursor_execute", record_after_the_first_look)
    try:
        result = admission.admit(click(card, ts=ts))
    finally:
        event.remove(store.sql.engine, "after_cursor_execute", record_after_the_first_look)

    assert looked
    assert isinstance(result, Admitted), result
    assert result.card.pending_id == card.pending_id and result.card.ts == ts


def test_a_click_naming_a_card_being_posted_is_still_checked_against_the_store(
    fake_kandev: FakeKandev, sync: SyncEngine, store: Database, admission: Admission
) -> None:
    card = claimed_not_recorded(fake_kandev, sync, store)
    admission.posting_wait_s = 0.2

    # Another message than the one the post becomes: refused once the wait is over.
    store_later = threading.Timer(
        0.05, store.cards.mark_posted, (card.pending_id, CHANNEL, "1.000002")
    )
    store_later.start()
    result = admission.admit(click(card, ts="1700000000.000001"))
    store_later.join()
    assert_refused(
        result, "unknown_bundle", store, pending_id=card.pending_id, source="slack:button"
    )


def test_a_click_in_another_channel_than_the_post_does_not_wait(
    fake_kandev: FakeKandev, sync: SyncEngine, store: Database, admission: Admission
) -> None:
    card = claimed_not_recorded(fake_kandev, sync, store)
    admission.posting_wait_s = 30.0  # would hang the test if it waited

    result = admission.admit(click(card, channel=OTHER_CHANNEL, ts="1700000000.000001"))

    assert_refused(
        result, "unknown_bundle", store, pending_id=card.pending_id, source="slack:button"
    )


def test_the_cards_message_in_another_channel_is_the_wrong_channel(
    posted, admission: Admission, store: Database
) -> None:
    card = posted(make_bundle())

    result = admission.admit(click(card, channel=OTHER_CHANNEL))

    refusal = assert_refused(
        result, "wrong_channel", store, pending_id=card.pending_id, source="slack:button"
    )
    assert said.refusal(refusal) == words.wrong_channel_message(CHANNEL)


# ---- the card's state ----------------------------------------------------------------------


def test_the_shortcut_on_a_resolved_card_is_closed(
    posted, admission: Admission, store: Database
) -> None:
    card = resolve(store, posted(make_bundle()), answered(BOB_ID))

    result = admission.admit(shortcut(CHANNEL, card.ts))

    refusal = assert_refused(
        result, "closed", store, pending_id=card.pending_id, source="slack:shortcut"
    )
    assert card.outcome is not None
    assert said.refusal(refusal) == words.closed_card_message(card.outcome, card.bundle)


def test_a_click_by_the_person_who_answered_is_already_answered(
    posted, admission: Admission, store: Database
) -> None:
    card = resolve(store, posted(make_bundle()), answered(ALICE_ID))

    result = admission.admit(click(card))

    refusal = assert_refused(
        result, "already_answered", store, pending_id=card.pending_id, source="slack:button"
    )
    assert "You already answered this: PostgreSQL" in said.refusal(refusal)


def test_slacks_redelivery_of_a_click_that_won_is_refused_silently(
    posted, admission: Admission, store: Database
) -> None:
    card = resolve(store, posted(make_bundle()), answered(ALICE_ID))

    result = admission.admit(replace(click(card), redelivery=True))

    refusal = assert_refused(
        result, "redelivered", store, pending_id=card.pending_id, source="slack:button"
    )
    assert said.refusal(refusal) == ""


@pytest.mark.parametrize(
    ("outcome", "says"),
    [
        (answered(BOB_ID), f"<@{BOB_ID}> answered first in Slack: PostgreSQL"),
        (make_outcome(CardState.REJECTED), "Rejected in Kandev first"),
        (make_outcome(CardState.ENDED), "no longer needs this answer"),
        (make_outcome(CardState.UNAVAILABLE), "no longer shows this question"),
    ],
    ids=["answered-by-bob", "rejected-in-kandev", "ended", "unavailable"],
)
def test_a_click_on_a_card_someone_else_resolved_is_resolved_already(
    posted, admission: Admission, store: Database, outcome, says: str
) -> None:
    card = resolve(store, posted(make_bundle()), outcome)

    result = admission.admit(click(card))

    refusal = assert_refused(
        result, "resolved_already", store, pending_id=card.pending_id, source="slack:button"
    )
    assert says in said.refusal(refusal)


# ---- answerers ---------------------------------------------------------------------------


def test_answerers_by_id_admit_exactly_them(posted, admit_with, store: Database) -> None:
    card = posted(make_bundle())
    admit = admit_with(Routing(default_channel=CHANNEL, default_answerers=frozenset({BOB_ID})))

    assert isinstance(admit(click(card, user=BOB_ID)), Admitted)
    refusal = assert_refused(
        admit(click(card)), "forbidden", store, pending_id=card.pending_id, source="slack:button"
    )
    assert said.refusal(refusal) == words.forbidden_message()
    assert store.audit_log.audit_entries(limit=1)[0].user == ALICE_ID


def test_answerers_by_user_group_admit_its_members(
    posted, admit_with, store: Database, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())
    gateway.groups[GROUP_ID] = frozenset({ALICE_ID})
    admit = admit_with(Routing(default_channel=CHANNEL, default_answerers=frozenset({GROUP_ID})))

    assert isinstance(admit(click(card)), Admitted)
    assert gateway.called("usergroups.users.list") == [{"usergroup": GROUP_ID}]
    result = admit(click(card, user=BOB_ID))
    assert_refused(result, "forbidden", store, pending_id=card.pending_id, source="slack:button")


def test_a_group_that_cannot_be_looked_up_admits_nobody(
    posted, admit_with, store: Database, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())
    gateway.groups[GROUP_ID] = frozenset({ALICE_ID})
    gateway.fail("usergroups.users.list", "ratelimited", retry_after=1.0)
    admit = admit_with(Routing(default_channel=CHANNEL, default_answerers=frozenset({GROUP_ID})))

    result = admit(click(card))

    # Refused (fail closed), as "could not be checked, try again" rather than "not allowed".
    assert_refused(result, "unverifiable", store, pending_id=card.pending_id, source="slack:button")


def test_a_card_without_a_route_admits_nobody(posted, admit_with, store: Database) -> None:
    card = posted(make_bundle())
    only_data = RouteRule(workspace="Data", channel="C0DATA", answerers=frozenset(), line=1)
    admit = admit_with(Routing(rules=(only_data,)))  # no default channel: Platform has no route

    result = admit(click(card))

    assert_refused(result, "forbidden", store, pending_id=card.pending_id, source="slack:button")


@pytest.mark.parametrize("via", ["list", "home"])
def test_a_private_channels_card_from_the_list_or_home_admits_its_members_only(
    posted, admission: Admission, store: Database, gateway: FakeSlackGateway, via: str
) -> None:
    card = posted(make_bundle())
    gateway.private_channels[CHANNEL] = frozenset({ALICE_ID})

    assert isinstance(admission.admit(from_list(card.pending_id, via=via)), Admitted)
    result = admission.admit(from_list(card.pending_id, user=BOB_ID, via=via))

    assert_refused(result, "forbidden", store, pending_id=card.pending_id, source="slack:button")


def test_a_click_on_the_card_itself_proves_no_membership(
    posted, admission: Admission, store: Database, gateway: FakeSlackGateway
) -> None:
    # Whoever reads a message can click it, and anyone of the workspace reads a public
    # channel without joining it: the channel's members are asked on the card too (this
    # test said the opposite before: a click on the card was taken as proof).
    card = posted(make_bundle())
    gateway.public_members[CHANNEL] = frozenset({ALICE_ID})

    admitted = admission.admit(click(card, user=ALICE_ID))
    assert isinstance(admitted, Admitted) and admitted.card.pending_id == card.pending_id
    result = admission.admit(click(card, user=BOB_ID))

    assert_refused(result, "forbidden", store, pending_id=card.pending_id, source="slack:button")
    assert gateway.called("conversations.members") != []


@pytest.mark.parametrize("via", ["list", "home"])
def test_a_public_channels_card_from_the_list_or_home_refuses_people_not_in_it(
    posted, admission: Admission, store: Database, gateway: FakeSlackGateway, via: str
) -> None:
    card = posted(make_bundle())
    # Bob (a guest, or anyone of the workspace) is not in the public channel of the card.
    gateway.public_members[CHANNEL] = frozenset({ALICE_ID})

    assert isinstance(admission.admit(from_list(card.pending_id, via=via)), Admitted)
    result = admission.admit(from_list(card.pending_id, user=BOB_ID, via=via))

    assert_refused(result, "forbidden", store, pending_id=card.pending_id, source="slack:button")


@pytest.mark.parametrize("action", ["answer", "reject", "claim"])
def test_a_person_of_another_organisation_is_refused_even_on_the_card_itself(
    posted, admission: Admission, store: Database, gateway: FakeSlackGateway, action: str
) -> None:
    card = posted(make_bundle())
    gateway.other_organisations[BOB_ID] = "T0PARTNER1"  # in the shared channel, Slack Connect

    changes = {"option": None} if action != "answer" else {}
    result = admission.admit(click(card, user=BOB_ID, action=action, **changes))

    assert_refused(result, "forbidden", store, pending_id=card.pending_id, source="slack:button")
    assert isinstance(admission.admit(click(card)), Admitted)  # Alice, of the app's organisation


def test_a_person_slack_names_of_the_apps_own_team_is_not_looked_up(
    posted, admission: Admission, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())

    result = admission.admit(click(card, user_team=OWN_TEAM))

    assert isinstance(result, Admitted)
    assert [c for c in gateway.calls if c.method == "users.info"] == []


@pytest.mark.parametrize("team", ["T0PARTNER1", ""])
def test_a_payload_naming_another_team_or_none_is_asked_of_slack(
    posted, admission: Admission, store: Database, gateway: FakeSlackGateway, team: str
) -> None:
    card = posted(make_bundle())
    gateway.other_organisations[BOB_ID] = "T0PARTNER1"

    refused = admission.admit(click(card, user=BOB_ID, user_team=team))
    # Another workspace of the app's grid: Slack says they are of the organisation.
    admitted = admission.admit(click(card, user_team="T0SISTERWS"))

    assert_refused(refused, "forbidden", store, pending_id=card.pending_id, source="slack:button")
    assert isinstance(admitted, Admitted)
    looked_up = [c.params["user"] for c in gateway.calls if c.method == "users.info"]
    assert looked_up == [BOB_ID, ALICE_ID]


@pytest.mark.parametrize("action", ["snooze", "unsnooze"])
def test_snoozing_from_home_follows_the_same_rule(
    posted, admission: Admission, store: Database, gateway: FakeSlackGateway, action: str
) -> None:
    card = posted(make_bundle())
    gateway.public_members[CHANNEL] = frozenset({ALICE_ID})

    def snooze(user: str) -> Request:
        return Request(
            user_id=user,
            action=action,  # type: ignore[arg-type]
            source="slack:button",
            via="home",
            pending_id=card.pending_id,
            hours=1,
        )

    assert isinstance(admission.admit(snooze(ALICE_ID)), Admitted)
    result = admission.admit(snooze(BOB_ID))

    assert_refused(result, "forbidden", store, pending_id=card.pending_id, source="slack:button")


def test_a_route_naming_a_person_of_another_organisation_admits_them(
    posted, admit_with, gateway: FakeSlackGateway
) -> None:
    card = posted(make_bundle())
    gateway.other_organisations[BOB_ID] = "T0PARTNER1"
    admit = admit_with(Routing(default_channel=CHANNEL, default_answerers=frozenset({BOB_ID})))

    assert isinstance(admit(from_list(card.pending_id, user=BOB_ID)), Admitted)


@pytest.mark.parametrize("failing", ["conversations.members", "users.info"])
@pytest.mark.parametrize("via", ["card", "home"])
def test_membership_that_cannot_be_read_refuses_with_try_again(
    posted,
    admission: Admission,
    store: Database,
    gateway: FakeSlackGateway,
    failing: str,
    via: str,
) -> None:
    card = posted(make_bundle())
    gateway.fail(failing, "internal_error", times=5)
    request = click(card) if via == "card" else from_list(card.pending_id, via="home")
    if via == "card" and failing == "conversations.members":
        request = from_list(card.pending_id, via="list")  # a click on the card needs no list

    result = admission.admit(request)

    refusal = assert_refused(
        result, "unverifiable", store, pending_id=card.pending_id, source="slack:button"
    )
    assert said.refusal(refusal) == words.unverifiable_message()
    assert "try again" in words.unverifiable_message()


# ---- admitted ------------------------------------------------------------------------------


def test_a_click_on_a_pending_card_is_admitted_on_that_card(
    posted, admission: Admission, store: Database
) -> None:
    card = posted(make_bundle())
    request = click(card)

    admitted = admission.admit(request)

    assert isinstance(admitted, Admitted)
    assert admitted.request == request and admitted.card == card
    assert [e.result for e in store.audit_log.audit_entries(card.pending_id)] == [
        "queued"
    ]  # no refusal


def test_a_listed_bundle_the_bot_has_not_posted_is_admitted_on_a_transient_card(
    admission: Admission, fake_kandev: FakeKandev, store: Database
) -> None:
    bundle = fake_kandev.add(make_bundle())

    for via in ("list", "home"):
        admitted = admission.admit(from_list(bundle.pending_id, via=via))
        assert isinstance(admitted, Admitted), admitted
        card = admitted.card
        assert (card.pending_id, card.channel, card.ts) == (bundle.pending_id, CHANNEL, None)
        assert card.state is CardState.PENDING and card.task.title == "Pick a datastore"
    assert store.cards.get(bundle.pending_id) is None  # not claimed: sync posts it as usual


def test_the_shortcut_on_a_pending_card_is_admitted(posted, admission: Admission) -> None:
    card = posted(make_bundle())

    admitted = admission.admit(shortcut(CHANNEL, card.ts))

    assert isinstance(admitted, Admitted) and admitted.card.pending_id == card.pending_id


def test_a_form_naming_its_cards_message_is_admitted(posted, admission: Admission) -> None:
    card = posted(make_bundle())

    admitted = admission.admit(form(card))

    assert isinstance(admitted, Admitted) and admitted.card.pending_id == card.pending_id
    listed = Request(
        user_id=ALICE_ID,
        action="reject",
        source="slack:modal:list",
        via="list",
        pending_id=card.pending_id,
        channel=CHANNEL,
        form=True,
    )
    assert isinstance(admission.admit(listed), Admitted)


def test_refuse_audits_what_could_not_become_a_request(
    admission: Admission, store: Database
) -> None:
    refusal = admission.refuse(
        Unusable(
            "malformed", "ViewSubmission: view missing", "answer", "slack:modal", Where(ALICE_ID)
        )
    )

    assert refusal.kind == "malformed"
    [entry] = store.audit_log.audit_entries()
    assert (entry.user, entry.action, entry.source, entry.result, entry.detail) == (
        ALICE_ID,
        "answer",
        "slack:modal",
        "malformed",
        "ViewSubmission: view missing",
    )
