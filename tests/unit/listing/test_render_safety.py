"""Property: the listing (/kandev-questions) and the App Home tab stay within Block Kit's limits
and never notify anyone, whatever agents wrote (``@here`` in any disguise, mention tokens) and
however resolved cards were answered (several options per question, 2,000 characters of free
text in each of four questions, long reasons), in every resolved state."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kandev_slack.cards.words import closed_card_message
from kandev_slack.core.domain import Card, CardOutcome, CardState
from kandev_slack.surfaces.home import render_home
from kandev_slack.surfaces.listing import render_listing, render_problem
from kandev_slack.surfaces.waiting import ListingPage, Query, Waiting
from tests.kit.factories import KANDEV_URL, NOW
from tests.unit.cards.safety import assert_cannot_notify
from tests.unit.cards.strategies import bundles, mention_texts, outcomes_for, tasks_for
from tests.unit.listing.checks import assert_valid_home, assert_valid_message
from tests.unit.properties import examples

ALLOWED = ("U0123ABC",)
PROPERTY = settings(
    max_examples=examples(25),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TERMINAL = [s for s in CardState if s.terminal]


@st.composite
def waiting_items(draw) -> Waiting:
    bundle = draw(bundles(mention_texts))
    link = draw(st.sampled_from([None, "https://team.slack.com/archives/C1/p1"]))
    return Waiting(listed=bundle, task=draw(tasks_for(bundle, mention_texts)), permalink=link)


@st.composite
def resolved_cards(draw) -> tuple[Card, str | None]:
    bundle = draw(bundles(mention_texts))
    state = draw(st.sampled_from(TERMINAL))
    outcome = draw(outcomes_for(bundle, state, mention_texts))
    card = Card(
        pending_id=bundle.pending_id,
        task_id=bundle.task_id,
        channel="C0QUESTION",
        ts="1700000000.000100",
        state=state,
        item=bundle,
        task=draw(tasks_for(bundle, mention_texts)),
        outcome=outcome,
        created_at=bundle.created_at,
        updated_at=NOW - timedelta(minutes=1),
    )
    return card, draw(st.sampled_from([None, "https://team.slack.com/archives/C1/p2"]))


@PROPERTY
@given(items=st.lists(waiting_items(), min_size=1, max_size=3), query=mention_texts(100))
def test_no_listing_page_can_notify(items: list[Waiting], query: str) -> None:
    page = ListingPage(
        query=Query(text=" ".join(query.split())),
        workspace=None,
        items=items,
        total=len(items) + 5,
        first=1,
        number=1,
        next_after=items[-1].key,
    )
    message = render_listing(page, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(message)
    assert_cannot_notify(message)


@PROPERTY
@given(items=st.lists(waiting_items(), max_size=3), resolved=st.lists(resolved_cards(), max_size=3))
def test_no_home_can_notify(items: list[Waiting], resolved: list[tuple[Card, str | None]]) -> None:
    view = render_home(items, resolved, kandev_url=KANDEV_URL, now=NOW, stale=True)
    assert_valid_home(view, allowed_users=ALLOWED)
    assert_cannot_notify(view, allowed_users=ALLOWED)


@PROPERTY
@given(resolved=resolved_cards())
def test_the_shortcut_on_any_closed_card_stays_valid_and_quiet(
    resolved: tuple[Card, str | None],
) -> None:
    card, _ = resolved
    outcome = card.outcome or CardOutcome(state=card.state, at=NOW)
    message = render_problem(closed_card_message(outcome, card.bundle))
    assert_valid_message(message, allowed_users=ALLOWED)
    assert_cannot_notify(message, allowed_users=ALLOWED)
