"""Identical questions (kandev_slack/usecases/answering/groups.py): the grouping key and its
normalisation, the
answer mapped onto another bundle by option label, how each member's send is classified, and,
on a real store and publisher, who is in a group, the card edits a membership change makes
(bounded), the offer after a win and Send to all through admission and the answer service."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kandev_slack.core.clarification import Answer, Option
from kandev_slack.core.domain import Card, CardState, PastChoice
from kandev_slack.store import Database
from kandev_slack.usecases.answering.admission import Admission, Admitted, Refusal
from kandev_slack.usecases.answering.answers import AnswerService
from kandev_slack.usecases.answering.groups import Groups as GroupsService
from kandev_slack.usecases.answering.groups import (
    MemberResult,
    NoSuchOption,
    NotYours,
    Summary,
    ToSendAll,
    map_answer,
    member_result,
)
from kandev_slack.usecases.answering.verdicts import Verdict
from kandev_slack.usecases.groups import group_key, groupable, one_question
from tests.kit.factories import (
    ALICE_ID,
    ASKED_AT,
    MONGO,
    make_bundle,
    make_card,
    make_outcome,
    make_question,
    make_task,
    numbered_bundle,
)
from tests.kit.fakes import FakeKandev, FakeSlackGateway

BOB_ID = "U0BOB00001"


# ---- the grouping key --------------------------------------------------------------------------


def _card_asking(title: str, prompt: str, *, workspace: str = "ws-1", count: int = 1) -> Card:
    questions = [make_question(n, title=title, prompt=prompt) for n in range(1, count + 1)]
    return make_card(make_bundle(*questions), task=make_task(workspace_id=workspace))


def test_the_same_question_normalised_has_one_key() -> None:
    key = group_key(_card_asking("Database", "Which database should we use?"))
    assert key is not None
    assert group_key(_card_asking("  database ", "Which **database** should  we use")) == key
    assert group_key(_card_asking("DATABASE", "which database should we use?!")) == key


def test_another_prompt_title_or_workspace_is_another_group() -> None:
    key = group_key(_card_asking("Database", "Which database should we use?"))
    assert group_key(_card_asking("Database", "Which cache should we use?")) != key
    assert group_key(_card_asking("Storage", "Which database should we use?")) != key
    assert (
        group_key(_card_asking("Database", "Which database should we use?", workspace="ws-2"))
        != key
    )


def test_multi_question_bundles_are_grouped_but_never_offered_send_to_all() -> None:
    card = _card_asking("Database", "Which database should we use?", count=2)
    assert group_key(card) is not None and groupable(card)
    assert not one_question(card)


def test_only_posted_waiting_cards_are_in_a_group() -> None:
    assert groupable(make_card())
    assert not groupable(make_card(ts=None))
    assert not groupable(make_card(state=CardState.ANSWERED, outcome=make_outcome()))


# ---- mapping the answer ------------------------------------------------------------------------


def test_an_option_is_mapped_by_its_normalised_label() -> None:
    source = make_question()
    other = make_question(
        question_id="db",
        options=[
            Option(option_id="mongo", label="mongodb."),
            Option(option_id="pg", label="*PostgreSQL*"),
        ],
    )
    assert map_answer(source, MONGO, other) == Answer(question_id="db", selected_options=["mongo"])


def test_a_member_without_that_option_is_reported_not_guessed() -> None:
    other = make_question(options=[Option(option_id="q1_opt1", label="PostgreSQL")])
    assert map_answer(make_question(), MONGO, other) == NoSuchOption("MongoDB")


def test_free_text_is_sent_as_it_is() -> None:
    text = Answer(question_id="q1", custom_text="  Use the *existing* cluster ")
    mapped = map_answer(make_question(), text, make_question(question_id="other"))
    assert mapped == Answer(question_id="other", custom_text="  Use the *existing* cluster ")


# ---- how a member's send ended ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "kind", "by_user"),
    [
        (Verdict("won"), "sent", None),
        (Verdict("lost", outcome=make_outcome(via="slack", by_user=BOB_ID)), "meanwhile", BOB_ID),
        (Verdict("lost", outcome=make_outcome()), "meanwhile", None),
        (Verdict("duplicate"), "sent", None),  # its other copy is sending it
        (Verdict("already_answered"), "yours", None),
        (Verdict("ended"), "ended", None),
        (Verdict("not_recorded"), "not_sent", None),
    ],
)
def test_each_verdict_is_one_kind_of_member_result(
    result: Verdict, kind: str, by_user: str | None
) -> None:
    card = make_card()
    assert member_result(card, result) == MemberResult(card, kind, by_user=by_user)  # type: ignore[arg-type]


class _Refused:
    def __init__(self, refusal: Refusal) -> None:
        self.refusal = refusal


def test_a_duplicate_ends_as_the_copy_that_was_sent() -> None:
    card = make_card()
    mine = make_card(state=CardState.ANSWERED, outcome=make_outcome(via="slack", by_user=ALICE_ID))
    bobs = make_card(state=CardState.ANSWERED, outcome=make_outcome(via="slack", by_user=BOB_ID))
    assert member_result(card, Verdict("duplicate", mine), ALICE_ID).kind == "sent"
    lost = member_result(card, Verdict("duplicate", bobs), ALICE_ID)
    assert (lost.kind, lost.by_user) == ("meanwhile", BOB_ID)


def test_the_same_answer_already_theirs_counts_as_sent_another_as_theirs() -> None:
    card = make_card()
    mine = make_outcome(via="slack", by_user=ALICE_ID, answers=[MONGO])
    refused = _Refused(Refusal("already_answered", card, outcome=mine))
    assert member_result(card, refused, ALICE_ID, [MONGO]).kind == "sent"
    postgres = Answer(question_id="q1", selected_options=["q1_opt1"])
    assert member_result(card, refused, ALICE_ID, [postgres]).kind == "yours"
    verdict = Verdict("already_answered", outcome=mine)
    assert member_result(card, verdict, ALICE_ID, [MONGO]).kind == "sent"


def test_refusals_are_forbidden_meanwhile_or_yours() -> None:
    card = make_card()
    forbidden = member_result(card, _Refused(Refusal("forbidden", card)))
    assert forbidden.kind == "forbidden"
    bob = make_outcome(via="slack", by_user=BOB_ID)
    meanwhile = member_result(card, _Refused(Refusal("resolved_already", card, outcome=bob)))
    assert (meanwhile.kind, meanwhile.by_user) == ("meanwhile", BOB_ID)
    ended = make_outcome(CardState.ENDED)
    assert (
        member_result(card, _Refused(Refusal("resolved_already", card, outcome=ended))).kind
        == "ended"
    )
    assert member_result(card, _Refused(Refusal("redelivered", card))).kind == "yours"
    assert member_result(card, object()).kind == "not_sent"  # busy


def test_a_summary_of_only_ones_already_yours_has_nothing_new() -> None:
    card = make_card()
    assert not Summary(choice=_choice(), results=(MemberResult(card, "yours"),)).anything_new
    assert Summary(choice=_choice(), results=(MemberResult(card, "sent"),)).anything_new


def _choice() -> PastChoice:
    return PastChoice(labels=("MongoDB",))


# ---- on a real store ---------------------------------------------------------------------------


@pytest.fixture
def groups(store: Database) -> GroupsService:
    return GroupsService(store.cards, store.audit_log)


@pytest.fixture
def same_three(posted, fake_kandev: FakeKandev) -> list[Card]:
    """Three agents asking the same question, each card posted (oldest first)."""
    cards = []
    for n in (1, 2, 3):
        bundle = numbered_bundle(n, created_at=ASKED_AT + timedelta(seconds=n))
        cards.append(posted(bundle))
    return cards


def _texts(gateway: FakeSlackGateway, card: Card) -> str:
    found = gateway.card_of(card.pending_id)
    assert found is not None
    return "\n".join(str(b) for b in found[2].blocks)


def _message(gateway: FakeSlackGateway, card: Card) -> str:
    found = gateway.card_of(card.pending_id)
    assert found is not None
    return found[2].text


def test_the_first_card_is_in_the_channel_and_the_others_in_its_thread(
    same_three: list[Card], groups: GroupsService, gateway: FakeSlackGateway, drain, store
) -> None:
    first, second, third = same_three
    drain()
    assert first.thread_of is None and (first.channel, first.ts) not in gateway.threaded
    for card in (second, third):
        assert (card.thread_of, card.thread_ts) == (first.pending_id, first.ts)
        assert gateway.threaded[(card.channel, card.ts or "")] == first.ts
        assert "Also from" in _message(gateway, card)
        assert "Also from" not in _texts(gateway, first)
    assert "2 more agents asked this" in _texts(gateway, first)
    assert [m.pending_id for m in groups.members(first)] == [second.pending_id, third.pending_id]


def test_a_card_resolved_in_the_thread_is_no_longer_counted_on_the_first(
    same_three: list[Card], gateway: FakeSlackGateway, drain, alice_answers
) -> None:
    first, second, third = same_three
    drain()
    alice_answers(second)
    drain()
    assert "1 more agent asked this" in _texts(gateway, first)
    edited = [c["ts"] for c in gateway.called("chat.update")]
    assert second.ts in edited and third.ts not in edited  # only its own outcome and the first


def test_the_first_resolved_keeps_counting_and_a_new_one_starts_a_new_card(
    same_three: list[Card], gateway: FakeSlackGateway, drain, alice_answers, posted, store
) -> None:
    first, second, third = same_three
    drain()
    alice_answers(first)
    drain()
    assert "2 more agents asked this" in _texts(gateway, first)  # still waiting in its thread
    fourth = posted(numbered_bundle(4, created_at=ASKED_AT + timedelta(seconds=4)))
    drain()
    assert fourth.thread_of is None and "Also from" not in _message(gateway, fourth)
    fifth = posted(numbered_bundle(5, created_at=ASKED_AT + timedelta(seconds=5)))
    assert fifth.thread_of == fourth.pending_id


def test_past_five_in_the_thread_the_first_card_counts_them_all(
    posted, gateway: FakeSlackGateway, drain, store: Database
) -> None:
    cards = [
        posted(numbered_bundle(n, created_at=ASKED_AT + timedelta(seconds=n))) for n in range(1, 9)
    ]
    drain()
    text = _texts(gateway, cards[0])
    assert "7 more agents asked this" in text and ", …" in text
    before = len(gateway.called("chat.update"))
    ninth = posted(numbered_bundle(9, created_at=ASKED_AT + timedelta(seconds=9)))
    drain()
    edited = [c["ts"] for c in gateway.called("chat.update")[before:]]
    assert edited == [cards[0].ts] and ninth.thread_of == cards[0].pending_id  # one edit


def test_another_question_or_another_channel_is_not_a_member(
    posted, groups: GroupsService, store: Database
) -> None:
    first = posted(numbered_bundle(1))
    other = numbered_bundle(2)
    posted(numbered_bundle(3, make_question(prompt="Which cache should we use?")))
    assert groups.members(first) == []
    assert groups.members(make_card(other, channel="C0ELSEWHERE")) == []


def test_the_winner_is_offered_the_others_and_nobody_else(
    same_three: list[Card], groups: GroupsService, alice_answers, store: Database
) -> None:
    first, second, third = same_three
    alice_answers(first)
    won = store.cards.get(first.pending_id)
    assert won is not None
    offer = groups.offer(won, ALICE_ID)
    assert offer is not None
    assert list(offer.members) == [second.pending_id, third.pending_id]
    assert offer.choice.labels == ("MongoDB",)
    assert groups.offer(won, BOB_ID) is None
    assert groups.offer(second, ALICE_ID) is None  # not answered


def test_send_all_answers_each_member_through_admission_once(
    same_three: list[Card],
    groups: GroupsService,
    alice_answers,
    admission: Admission,
    answers: AnswerService,
    fake_kandev: FakeKandev,
    store: Database,
) -> None:
    first, second, third = same_three
    alice_answers(first)

    def send_all() -> list[str]:
        plan = groups.send_all(first.pending_id, ALICE_ID, channel=first.channel)
        assert isinstance(plan, ToSendAll)
        kinds = []
        for send in plan.sends:
            admitted = admission.admit(send.request)
            if isinstance(admitted, Refusal):
                kinds.append(admitted.kind)
                continue
            assert isinstance(admitted, Admitted)
            kinds.append(answers.submit(admitted, answers=send.answers).kind)
        return kinds

    assert send_all() == ["won", "won"]
    for card in (second, third):
        resolved = store.cards.get(card.pending_id)
        assert resolved is not None and resolved.outcome is not None
        assert (resolved.outcome.by_user, resolved.outcome.answers) == (
            ALICE_ID,
            [MONGO],
        )
    # Again (a double click): the members are Alice's already; nothing reaches Kandev.
    sent = len(fake_kandev.calls)
    assert send_all() == ["already_answered", "already_answered"]
    assert len(fake_kandev.calls) == sent
    sources = [e.source for e in store.audit_log.audit_entries(second.pending_id)]
    assert sources.count("answer_all") == 2


def test_send_all_of_a_card_someone_else_won_is_refused(
    same_three: list[Card], groups: GroupsService, alice_answers
) -> None:
    alice_answers(same_three[0])
    assert isinstance(groups.send_all(same_three[0].pending_id, BOB_ID, channel=None), NotYours)
    assert isinstance(groups.send_all(same_three[1].pending_id, ALICE_ID, channel=None), NotYours)
    assert isinstance(groups.send_all("", ALICE_ID, channel=None), NotYours)


def test_a_member_answered_meanwhile_is_still_in_the_plan(
    same_three: list[Card], groups: GroupsService, alice_answers, fake_kandev: FakeKandev, sync
) -> None:
    first, second, third = same_three
    alice_answers(first)
    fake_kandev.resolve_in_kandev(third.pending_id, [MONGO])
    sync.reconcile_once()
    plan = groups.send_all(first.pending_id, ALICE_ID, channel=first.channel)
    assert isinstance(plan, ToSendAll)
    assert [s.card.pending_id for s in plan.sends] == [second.pending_id, third.pending_id]
    assert plan.sends[1].card.state is CardState.ANSWERED


def test_a_bundle_with_other_options_or_descriptions_is_not_a_member(
    posted, groups: GroupsService, alice_answers, store: Database
) -> None:
    first = posted(numbered_bundle(1))
    only_pg = make_question(options=[Option(option_id="q1_opt1", label="PostgreSQL")])
    lacking = posted(numbered_bundle(2, only_pg))
    described = make_question(
        options=[
            Option(option_id="q1_opt1", label="PostgreSQL", description="Relational"),
            Option(option_id="q1_opt2", label="MongoDB", description="Documents"),
        ]
    )
    other = posted(numbered_bundle(3, described))
    assert lacking.thread_of is None and other.thread_of is None  # cards of their own
    alice_answers(first)
    plan = groups.send_all(first.pending_id, ALICE_ID, channel=first.channel)
    assert isinstance(plan, ToSendAll)
    assert plan.sends == () and plan.unmapped == ()


def test_send_all_answers_exactly_the_members_the_offer_named(
    same_three: list[Card], groups: GroupsService, alice_answers, posted, fake_kandev, sync
) -> None:
    """A member that joined the group after the offer, or one answered meanwhile that the
    offer never named, is not sent to; one the offer named and answered since is reported."""
    first, second, third = same_three
    alice_answers(first)
    won = groups.cards.get(first.pending_id)
    assert won is not None
    offer = groups.offer(won, ALICE_ID)
    assert offer is not None
    named = list(offer.members)
    later = posted(numbered_bundle(4, created_at=ASKED_AT + timedelta(seconds=4)))
    fake_kandev.resolve_in_kandev(third.pending_id, [MONGO])
    sync.reconcile_once()

    plan = groups.send_all(first.pending_id, ALICE_ID, channel=first.channel, members=named)
    assert isinstance(plan, ToSendAll)
    assert [s.card.pending_id for s in plan.sends] == [second.pending_id, third.pending_id]
    assert later.pending_id not in [s.card.pending_id for s in plan.sends]
    # A bundle of another question, or the answered card itself, named by a forged value.
    other = posted(numbered_bundle(5, make_question(title="Other", prompt="Something else?")))
    forged = [first.pending_id, other.pending_id, second.pending_id]
    plan = groups.send_all(first.pending_id, ALICE_ID, channel=first.channel, members=forged)
    assert isinstance(plan, ToSendAll)
    assert [s.card.pending_id for s in plan.sends] == [second.pending_id]
