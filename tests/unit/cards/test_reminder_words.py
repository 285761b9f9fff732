"""A reminder quotes the question as plain words: Kandev's Markdown converted, no stray
``∗orders∗`` or lone backtick ("Act on a card in one glance", item 5); an approval's
command is quoted as it is (its ``*`` is part of it)."""

from __future__ import annotations

from hypothesis import given

from kandev_slack.surfaces.followups import reminder_text
from tests.unit.cards.strategies import texts
from tests.unit.cards.test_limits_property import SETTINGS


def test_a_question_s_markdown_is_quoted_as_plain_words() -> None:
    text = reminder_text(60, (), "Which *orders* table: `orders_v2` or **orders**?", markdown=True)
    assert text.endswith("1 min: *“Which orders table: orders_v2 or orders?”*")
    linked = reminder_text(60, (), "## Pick [the DB](https://x.example)", markdown=True)
    assert linked.endswith("*“Pick the DB”*")


def test_an_approval_s_command_is_quoted_as_it_is() -> None:
    assert reminder_text(60, (), "rm *.log").endswith("*“rm ∗.log”*")


@SETTINGS
@given(headline=texts(500))
def test_a_question_reminder_has_no_backtick_whatever_kandev_sends(headline: str) -> None:
    assert "`" not in reminder_text(60, (), headline, markdown=True)
