"""A form submitted by a person who acts with their own Kandev account (a ``linked`` route,
kandev_slack/usecases/identity.py), on a real Bolt App with the fakes at the edges: refused at
submission because Kandev could not be asked what their account may do, the form stays open as
they filled it, why under its field (it may just be sent again); refused for a token Kandev no
longer takes, or their role there, the form turns into the explanation (their link broken).
Nothing is sent either way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from slack_bolt import App

from kandev_slack.cards import ids, words
from kandev_slack.config.routing import Routing
from kandev_slack.kandev.errors import KandevUnavailable
from kandev_slack.kandev.models import KandevUser, Workspace
from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.identity import Identities
from tests.kit.factories import ALICE_ID, CHANNEL, make_bundle
from tests.kit.fakes import FakeKandev
from tests.unit.slack.slack_bodies import dispatch, submission
from tests.unit.slack.test_listener_views import opened, reason

TOKEN = "kandev_pat_0123abcd_" + "A" * 43
ANA = KandevUser(id="u-ana", email="ana@example.com", display_name="Ana")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Database]:
    made = Database(f"sqlite:///{tmp_path / 'bot.db'}", vault=Vault.from_keys(Vault.new_key()))
    yield made
    made.close()


@pytest.fixture
def routing() -> Routing:
    return Routing(default_channel=CHANNEL, default_identity="linked")


@pytest.fixture
def identities(fake_kandev: FakeKandev, store: Database, answerers: Answerers) -> Identities:
    return Identities(
        bot=fake_kandev, links=store.links, answerers=answerers, client_for=fake_kandev.client_for
    )


def linked(fake_kandev: FakeKandev, store: Database, scopes: tuple[str, ...]) -> FakeKandev:
    theirs = fake_kandev.person(TOKEN, ANA, [Workspace(id="ws-1", scopes=scopes)])
    store.links.link(ALICE_ID, ANA.id, ANA.display_name, ANA.email, TOKEN)
    return theirs


def test_a_submission_refused_for_a_token_kandev_no_longer_takes_sends_nothing(
    bolt: App, posted, fake_kandev: FakeKandev, store: Database
) -> None:
    card = posted(make_bundle())
    linked(fake_kandev, store, ("session.prompt", "workspace.read"))
    fake_kandev.revoke(TOKEN)

    status, acked = dispatch(bolt, submission(opened(card, "reject"), reason("not now")))

    assert status == 200 and acked["response_action"] == "update", acked
    assert words.reconnect_message() in str(acked["view"]["blocks"])
    assert fake_kandev.called("reject") == [] and fake_kandev.people[TOKEN].called("reject") == []
    link = store.links.get(ALICE_ID)
    assert link is not None and link.broken


def test_a_submission_refused_when_kandev_could_not_be_asked_keeps_the_form_open(
    bolt: App, posted, fake_kandev: FakeKandev, store: Database
) -> None:
    card = posted(make_bundle())
    theirs = linked(fake_kandev, store, ("session.prompt", "workspace.read"))
    theirs.fail("access", KandevUnavailable("down"))

    _, acked = dispatch(bolt, submission(opened(card, "reject"), reason("not now")))

    assert acked["response_action"] == "errors", acked
    assert acked["errors"] == {ids.BLOCK_REASON: words.identity_unreachable_message()}
    assert theirs.called("reject") == []


def test_a_viewers_submission_turns_the_form_into_why(
    bolt: App, posted, fake_kandev: FakeKandev, store: Database
) -> None:
    card = posted(make_bundle())
    theirs = linked(fake_kandev, store, ("workspace.read",))

    _, acked = dispatch(bolt, submission(opened(card, "reject"), reason("not now")))

    assert acked["response_action"] == "update", acked
    assert acked["view"]["title"]["text"] == "Not sent"
    assert words.viewer_message() in str(acked["view"]["blocks"])
    assert theirs.called("reject") == []
