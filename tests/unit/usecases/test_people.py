"""Kandev accounts as Slack people (kandev_slack/usecases/people.py): the id → name mapping
read with the bot's token and kept, the Slack person who linked an account, the bot's own
account being nobody, how an outcome is credited, and a task's assignee."""

from __future__ import annotations

from kandev_slack.core.domain import CardState
from kandev_slack.kandev.errors import KandevAuthError
from kandev_slack.usecases.people import (
    BOT_RETRY_S,
    MISS_RETRY_S,
    NAMES_TTL_S,
    KandevPeople,
    KandevPerson,
)
from tests.kit.factories import make_card, make_outcome, numbered_bundle
from tests.kit.fakes import FakeKandev, FakeMonotonic

ANA_SLACK = "U0ANA00001"


def people(kandev: FakeKandev, links: dict[str, str], clock: FakeMonotonic) -> KandevPeople:
    return KandevPeople(kandev, links.get, clock=clock.monotonic)


def test_an_account_is_named_by_kandev_and_by_the_slack_person_who_linked_it() -> None:
    kandev, clock = FakeKandev(), FakeMonotonic()
    kandev.users = {"u-ana": "Ana", "u-ben": "Ben", "bot-user": "The bot"}
    found = people(kandev, {"u-ana": ANA_SLACK}, clock)

    assert found.who("u-ana") == KandevPerson("u-ana", "Ana", ANA_SLACK)
    assert found.who("u-ben") == KandevPerson("u-ben", "Ben", None)
    assert found.who("") is None
    assert found.who("bot-user") is None  # the bot's own account is nobody in particular
    assert len(kandev.called("names")) == 1  # read once, kept


def test_names_are_kept_for_a_while_and_an_unknown_id_is_looked_up_again_sparingly() -> None:
    kandev, clock = FakeKandev(), FakeMonotonic()
    kandev.users = {"u-ana": "Ana"}
    found = people(kandev, {}, clock)
    assert found.name_of("u-ana") == "Ana"

    kandev.users = {"u-ana": "Ana Lima", "u-new": "Newcomer"}
    assert found.name_of("u-new") == ""  # just read: not asked again at once
    clock.advance(MISS_RETRY_S)
    assert found.name_of("u-new") == "Newcomer"  # a person created since
    assert len(kandev.called("names")) == 2
    assert found.name_of("u-ana") == "Ana Lima"
    clock.advance(NAMES_TTL_S - 1)
    assert found.name_of("u-ana") == "Ana Lima"
    assert len(kandev.called("names")) == 2
    kandev.users = {"u-ana": "Ana L."}
    clock.advance(1)
    assert found.name_of("u-ana") == "Ana L."  # kept names expire
    assert len(kandev.called("names")) == 3


def test_names_kandev_cannot_say_are_empty_and_the_last_ones_read_still_serve() -> None:
    kandev, clock = FakeKandev(), FakeMonotonic()
    kandev.fail("names")
    found = people(kandev, {}, clock)
    assert found.name_of("u-ana") == ""
    kandev.recover()
    kandev.users = {"u-ana": "Ana"}
    assert found.name_of("u-ana") == "Ana"  # nothing was kept: asked again
    clock.advance(NAMES_TTL_S)
    kandev.fail("names", KandevAuthError("refused"))
    assert found.name_of("u-ana") == "Ana"  # Kandev refused the bot: the old names serve


def test_while_kandev_has_not_said_whose_the_bots_token_is_no_account_is_credited() -> None:
    kandev, clock = FakeKandev(), FakeMonotonic()
    kandev.users = {"bot-user": "The bot", "u-ben": "Ben"}
    kandev.fail("account")
    found = people(kandev, {}, clock)
    assert found.who("u-ben") is None  # it might be the bot's: nobody is named
    kandev.recover()
    assert found.who("u-ben") is None  # not asked again at once
    clock.advance(BOT_RETRY_S)
    assert found.who("u-ben") == KandevPerson("u-ben", "Ben", None)
    assert found.who("bot-user") is None
    assert len(kandev.called("account")) == 2


def test_an_outcome_is_credited_to_the_account_kandev_records() -> None:
    kandev, clock = FakeKandev(), FakeMonotonic()
    kandev.users = {"u-ana": "Ana", "u-ben": "Ben"}
    found = people(kandev, {"u-ana": ANA_SLACK}, clock)
    in_kandev = make_outcome(CardState.ANSWERED)

    bens = found.credit(in_kandev, "u-ben")
    assert (bens.via, bens.by_user, bens.kandev_user, bens.kandev_name) == (
        "kandev",
        None,
        "u-ben",
        "Ben",
    )
    anas = found.credit(in_kandev, "u-ana")
    assert (anas.by_user, anas.kandev_name) == (ANA_SLACK, "Ana")
    # A Slack winner already known stays the one named in Slack.
    slack = make_outcome(CardState.ANSWERED, via="slack", by_user="U0OTHER001")
    assert found.credit(slack, "u-ana").by_user == "U0OTHER001"
    assert found.credit(in_kandev, "bot-user") is in_kandev
    assert found.credit(in_kandev, "") is in_kandev


def test_a_tasks_assignee_is_the_slack_person_who_linked_that_account() -> None:
    kandev, clock = FakeKandev(), FakeMonotonic()
    bundle = kandev.add(numbered_bundle(1), assignee="u-ana")
    card = make_card(bundle)
    found = people(kandev, {"u-ana": ANA_SLACK}, clock)
    assert found.assignee_of(card) == ANA_SLACK

    kandev.assign(bundle.task_id, "u-ben")  # nobody linked Ben's account
    assert found.assignee_of(card) is None
    kandev.assign(bundle.task_id, "")
    assert found.assignee_of(card) is None

    # Kandev cannot say now: the assignee the card was made with.
    kandev.fail("task")
    assert found.assignee_of(card) is None
    assigned = card.model_copy(update={"task": card.task.model_copy(update={"assignee": "u-ana"})})
    assert found.assignee_of(assigned) == ANA_SLACK
