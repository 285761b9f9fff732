"""A linked person's submission (kandev_slack/usecases/identity.py) through the answer pipeline
and crash recovery, with the fakes at the edges (one fake Kandev, each token its own view of it):
it is sent with their own client; Kandev's replies about them change the card only when the
bot's own read agrees; a refused token breaks their link; crash recovery re-sends with the
account it was first sent with, never the bot's, and settles at once what their account can no
longer send."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev_slack.cards import words
from kandev_slack.config.routing import Routing
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Card, CardState
from kandev_slack.kandev.models import KandevUser, Workspace
from kandev_slack.ops.vault import Vault
from kandev_slack.slack.presenters import said
from kandev_slack.store import Database
from kandev_slack.store.records import SubmissionContent
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.answering.admission import Admission, Admitted, Refusal, Request
from kandev_slack.usecases.answering.answers import AnswerService
from kandev_slack.usecases.answering.recovery import Recovery
from kandev_slack.usecases.answering.verdicts import Verdict
from kandev_slack.usecases.identity import Identities
from kandev_slack.usecases.leases import InFlight
from tests.kit.factories import ALICE_ID, CHANNEL, MONGO, make_bundle
from tests.kit.fakes import FakeKandev

ANA_TOKEN = "kandev_pat_0123abcd_" + "A" * 43
ANA = KandevUser(id="u-ana", email="ana@example.com", display_name="Ana")
COLLABORATOR = ("session.prompt", "task.write", "workspace.read")
POSTGRES = Answer(question_id="q1", selected_options=["q1_opt1"])


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Database]:
    opened = Database(f"sqlite:///{tmp_path / 'bot.db'}", vault=Vault.from_keys(Vault.new_key()))
    yield opened
    opened.close()


@pytest.fixture
def routing() -> Routing:
    return Routing(default_channel=CHANNEL, default_identity="linked")


@pytest.fixture
def identities(fake_kandev: FakeKandev, store: Database, answerers: Answerers) -> Identities:
    return Identities(
        bot=fake_kandev, links=store.links, answerers=answerers, client_for=fake_kandev.client_for
    )


@pytest.fixture
def theirs(fake_kandev: FakeKandev, store: Database) -> FakeKandev:
    """Alice is linked to Ana, a collaborator on ws-1 (where the story's bundle is): Ana's
    view of the fake Kandev."""
    made = fake_kandev.person(ANA_TOKEN, ANA, [Workspace(id="ws-1", scopes=COLLABORATOR)])
    store.links.link(ALICE_ID, ANA.id, ANA.display_name, ANA.email, ANA_TOKEN)
    return made


def click(admission: Admission, card: Card, answer: Answer = MONGO) -> Admitted | Refusal:
    return admission.admit(
        Request(
            user_id=ALICE_ID,
            action="answer",
            source="slack:button",
            via="card",
            pending_id=card.pending_id,
            channel=CHANNEL,
            ts=card.ts,
            option=(answer.question_id, answer.selected_options[0]),
        )
    )


def admitted(admission: Admission, card: Card, answer: Answer = MONGO) -> Admitted:
    found = click(admission, card, answer)
    assert isinstance(found, Admitted), found
    return found


def state_of(store: Database, card: Card) -> CardState:
    current = store.cards.get(card.pending_id)
    assert current is not None
    return current.state


# ---- the answer pipeline ----------------------------------------------------------------------


def test_their_answer_is_sent_with_their_client_and_records_whose_account(
    posted, admission: Admission, answers: AnswerService, fake_kandev, theirs, store
) -> None:
    card = posted(make_bundle())
    begun = answers.begin(admitted(admission, card), answers=(MONGO,))
    assert not isinstance(begun, Verdict)
    [sub] = store.submissions.submissions_for(card.pending_id)
    assert sub.content.kandev_user == ANA.id

    assert answers.complete(begun).kind == "won"
    assert [c["pending_id"] for c in theirs.called("answer")] == [card.pending_id]
    assert fake_kandev.called("answer") == []  # not the bot's


def test_kandevs_not_found_to_them_while_the_bot_sees_it_waiting_leaves_the_card(
    posted, admission: Admission, answers: AnswerService, theirs, store
) -> None:
    card = posted(make_bundle())
    click_now = admitted(admission, card)  # their workspaces read: ws-1 is theirs
    theirs.workspace_list = []  # then taken out of it

    verdict = answers.submit(click_now, answers=(MONGO,))

    assert (verdict.kind, said.verdict(verdict)) == ("not_visible", words.not_visible_message())
    assert state_of(store, card) is CardState.PENDING
    assert store.submissions.submissions_for(card.pending_id) == []
    assert len(theirs.called("answer")) == 1


def test_kandevs_not_found_to_them_when_the_bots_read_does_not_tell_leaves_the_card(
    posted, admission: Admission, answers: AnswerService, fake_kandev, theirs, store
) -> None:
    """An approval's transcript read says nothing of a request still waiting, and a bundle may
    leave the active list with its messages still "pending": one person's "not found" never
    makes the card Unavailable by itself."""
    card = posted(make_bundle())
    click_now = admitted(admission, card)
    theirs.workspace_list = []
    fake_kandev.vanish(card.pending_id)  # the bot's read: neither waiting nor ended

    verdict = answers.submit(click_now, answers=(MONGO,))

    assert verdict.kind == "not_visible"
    assert state_of(store, card) is CardState.PENDING


def test_a_resolution_like_theirs_the_bot_reads_after_kandev_refused_them_is_someone_elses(
    posted, admission: Admission, answers: AnswerService, fake_kandev, theirs, store
) -> None:
    card = posted(make_bundle())
    click_now = admitted(admission, card)
    theirs.workspace_list = []
    begun = answers.begin(click_now, answers=(MONGO,))
    assert not isinstance(begun, Verdict)
    fake_kandev.resolve_in_kandev(card.pending_id, [MONGO])  # the same, after it was sent

    verdict = answers.complete(begun)

    assert verdict.kind == "lost"  # Kandev refused their call: never theirs
    current = store.cards.get(card.pending_id)
    assert current is not None and current.state is CardState.ANSWERED
    assert current.outcome is not None and current.outcome.by_user is None


def test_kandevs_no_longer_active_to_them_ends_the_card_when_the_bot_agrees(
    posted, admission: Admission, answers: AnswerService, fake_kandev, theirs, store
) -> None:
    card = posted(make_bundle())
    click_now = admitted(admission, card)
    fake_kandev.end(card.pending_id)

    assert answers.submit(click_now, answers=(MONGO,)).kind == "ended"
    assert state_of(store, card) is CardState.ENDED


def test_a_refused_token_breaks_their_link_and_sends_nothing_again(
    posted, admission: Admission, answers: AnswerService, fake_kandev, theirs, store
) -> None:
    card = posted(make_bundle())
    click_now = admitted(admission, card)
    fake_kandev.revoke(ANA_TOKEN)

    verdict = answers.submit(click_now, answers=(MONGO,))

    assert (verdict.kind, said.verdict(verdict)) == ("relink", words.reconnect_message())
    link = store.links.get(ALICE_ID)
    assert link is not None and link.broken
    assert state_of(store, card) is CardState.PENDING
    assert store.submissions.submissions_for(card.pending_id) == []
    again = click(admission, card)
    assert isinstance(again, Refusal) and again.kind == "reconnect"


# ---- crash recovery -----------------------------------------------------------------------------


class Announced:
    def __init__(self) -> None:
        self.told: list[tuple[str, Verdict]] = []

    def recovered(self, user: str, channel: str | None, view_id: str, verdict: Verdict) -> None:
        self.told.append((user, verdict))


@pytest.fixture
def announced() -> Announced:
    return Announced()


@pytest.fixture
def recovery(
    fake_kandev: FakeKandev,
    store: Database,
    answers: AnswerService,
    answerers: Answerers,
    announced: Announced,
) -> Recovery:
    return Recovery(
        fake_kandev,
        store.cards,
        store.submissions,
        store.audit_log,
        answers,
        answerers,
        announced,
        InFlight(),
        stale_after_s=0,
    )


def orphan(store: Database, card: Card, *, kandev_user: str = ANA.id) -> str:
    """A submission a process that died left unfinished, first sent as ``kandev_user``."""
    content = SubmissionContent(action="answer", answers=[MONGO], kandev_user=kandev_user)
    assert store.submissions.begin_submission(card.pending_id, "k-1", ALICE_ID, content)
    return "k-1"


def test_recovery_resends_with_their_own_client(
    posted, recovery: Recovery, fake_kandev, theirs, store
) -> None:
    card = posted(make_bundle())
    orphan(store, card)

    assert recovery.run_once().recovered == [(card.pending_id, "won")]
    assert len(theirs.called("answer")) == 1 and fake_kandev.called("answer") == []


def test_the_recovery_worker_waits_kandev_out_and_then_recovers(
    posted, recovery: Recovery, theirs, store, announced: Announced, caplog
) -> None:
    card = posted(make_bundle())
    orphan(store, card)
    theirs.fail("answer", times=2)  # Kandev is away for the first two rounds
    recovery.interval_s = 0.01
    stop = threading.Event()
    worker = threading.Thread(target=recovery.run, args=(stop,), daemon=True)
    with caplog.at_level(logging.WARNING, logger="kandev_slack.usecases.answering.recovery"):
        worker.start()
        try:
            deadline = time.monotonic() + 5
            while not announced.told:
                assert time.monotonic() < deadline, "never recovered"
                time.sleep(0.01)
        finally:
            stop.set()
            worker.join(5)

    assert [verdict.kind for _, verdict in announced.told] == ["won"]
    assert state_of(store, card) is CardState.ANSWERED
    waits = [r for r in caplog.records if r.getMessage().startswith("recovery waits for Kandev")]
    assert len(waits) == 2 and all(r.levelno == logging.WARNING for r in waits)


def test_recovery_never_resends_their_answer_as_the_bot_once_they_disconnected(
    posted, recovery: Recovery, fake_kandev, theirs, store, announced: Announced
) -> None:
    card = posted(make_bundle())
    key = orphan(store, card)
    store.links.unlink(ALICE_ID)

    assert recovery.run_once().recovered == [(card.pending_id, "connect")]

    assert fake_kandev.called("answer") == [] and theirs.called("answer") == []
    assert store.submissions.get_submission(key) is None  # dropped: it can be answered again
    assert state_of(store, card) is CardState.PENDING
    [(user, verdict)] = announced.told
    assert (user, said.verdict(verdict)) == (ALICE_ID, words.connect_message())


def test_recovery_asks_to_reconnect_at_once_when_kandev_refuses_their_token(
    posted, recovery: Recovery, fake_kandev, theirs, store, announced: Announced
) -> None:
    card = posted(make_bundle())
    orphan(store, card)
    fake_kandev.revoke(ANA_TOKEN)

    assert recovery.run_once().recovered == [(card.pending_id, "relink")]

    link = store.links.get(ALICE_ID)
    assert link is not None and link.broken
    assert state_of(store, card) is CardState.PENDING
    assert [said.verdict(v) for _, v in announced.told] == [words.reconnect_message()]


def test_recovery_leaves_the_card_when_their_account_no_longer_sees_it(
    posted, recovery: Recovery, theirs, store, announced: Announced
) -> None:
    card = posted(make_bundle())
    orphan(store, card)
    theirs.workspace_list = []

    assert recovery.run_once().recovered == [(card.pending_id, "not_visible")]

    assert state_of(store, card) is CardState.PENDING
    assert [said.verdict(v) for _, v in announced.told] == [words.not_visible_message()]


def test_recovery_applies_their_first_attempt_kandev_recorded_though_they_cannot_resend(
    posted, recovery: Recovery, fake_kandev, theirs, store
) -> None:
    card = posted(make_bundle())
    orphan(store, card)
    fake_kandev.resolve_in_kandev(card.pending_id, [MONGO])  # the first attempt got there
    fake_kandev.revoke(ANA_TOKEN)

    assert recovery.run_once().recovered == [(card.pending_id, "won")]
    current = store.cards.get(card.pending_id)
    assert current is not None and current.outcome is not None
    assert current.outcome.by_user == ALICE_ID
