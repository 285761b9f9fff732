"""Property: a card is acted on in one glance ("Act on a card in one glance"). Whatever
Kandev sends, a waiting card (in a channel, and as a DM card with "Snooze…"):

- shows one row of answers and at most two other visible controls (the "More" overflow,
  and "Snooze…" on a DM card); a resolved card keeps only "Open in Kandev";
- has no frozen age: rendered at any later moment it is the same message, its times Slack
  date tokens (``<!date^…>``) that Slack shows live, never "N min" text;
- shows every question in bold, inline code included;
- says first, in its title and notification text, that it is critical.
"""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards import ids
from kandev_slack.cards.views.snooze import with_snooze_select
from kandev_slack.core.claims import Claim
from kandev_slack.core.domain import CardState
from kandev_slack.kinds.question.cards.card import render_card
from tests.kit.factories import KANDEV_URL, NOW
from tests.unit.cards.checks import assert_valid_message
from tests.unit.cards.strategies import bundles, outcomes_for, tasks_for
from tests.unit.cards.test_limits_property import SETTINGS

#: How many controls a waiting card may show besides its answers.
MAX_OTHER_CONTROLS = 2
_CONTROLS = {"button", "overflow", "static_select", "radio_buttons", "checkboxes"}


def _controls(blocks: list[dict]) -> tuple[list[dict], list[dict]]:
    """(the answers row's controls, every other visible control)."""
    answers: list[dict] = []
    others: list[dict] = []
    for block in blocks:
        elements = list(block.get("elements", []))
        if block.get("accessory"):
            elements.append(block["accessory"])
        found = [e for e in elements if e.get("type") in _CONTROLS]
        (answers if block.get("block_id") == ids.BLOCK_ACTIONS else others).extend(found)
    return answers, others


@SETTINGS
@given(data=st.data())
def test_a_card_shows_its_answers_and_at_most_two_other_controls(data):
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle))
    state = data.draw(st.sampled_from(list(CardState)))
    outcome = data.draw(outcomes_for(bundle, state))
    claimed = data.draw(st.booleans())
    claim = (
        Claim(user_id="U0123ABC", since=NOW, until=NOW + timedelta(hours=1)) if claimed else None
    )
    card = render_card(bundle, task, state, outcome, kandev_url=KANDEV_URL, now=NOW, claim=claim)
    # A DM card has "Snooze…" while it waits (kandev_slack/usecases/outbox/messages.py
    # copy_message).
    snoozable = with_snooze_select(card["blocks"], bundle.pending_id)
    dm = {**card, "blocks": card["blocks"] if state.terminal else snoozable}
    for message in (card, dm):
        assert_valid_message(message, allowed_users={"U0123ABC"})
        answers, others = _controls(message["blocks"])
        if state.terminal:
            assert answers == [] and [o["action_id"] for o in others] == [ids.ACTION_OPEN]
            continue
        assert answers and all(a["type"] == "button" for a in answers)
        assert len(others) <= MAX_OTHER_CONTROLS, [o.get("action_id") for o in others]
        assert [o["type"] for o in others if o["type"] == "button"] == []


@SETTINGS
@given(data=st.data(), later=st.integers(min_value=1, max_value=60 * 60 * 24 * 30))
def test_no_age_is_frozen_into_a_waiting_card(data, later):
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle))
    at = bundle.created_at

    def shown(now):
        return render_card(bundle, task, CardState.PENDING, None, kandev_url=KANDEV_URL, now=now)

    first = shown(at)
    assert shown(at + timedelta(seconds=later)) == first  # nothing in it ages
    meta = next(b for b in first["blocks"] if b.get("block_id") == ids.BLOCK_META)
    assert "asked <!date^" in meta["elements"][0]["text"]


@SETTINGS
@given(data=st.data())
def test_every_question_of_a_waiting_card_is_bold(data):
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle))
    card = render_card(bundle, task, CardState.PENDING, None, kandev_url=KANDEV_URL, now=NOW)
    shown = [b for b in card["blocks"] if str(b.get("block_id", "")).startswith("kq_q:")]
    assert shown
    for block in shown:
        lines = block["text"]["text"].split("\n")
        first = lines[1] if len(bundle.questions) > 1 else lines[0]  # under "1/2 · Title"
        if "```" in first:
            continue  # a code block's fence: bold cannot wrap it
        assert first.removeprefix("> ").startswith("*"), first


@SETTINGS
@given(data=st.data(), priority=st.sampled_from(["critical", "CRITICAL", "high", "medium", ""]))
def test_a_critical_card_says_so_first(data, priority):
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle)).model_copy(update={"priority": priority})
    card = render_card(bundle, task, CardState.PENDING, None, kandev_url=KANDEV_URL, now=NOW)
    title = card["blocks"][0]["text"]["text"]
    prefix = {"critical": "🔴 Critical · ", "high": "🟠 High · "}.get(priority.casefold(), "")
    if prefix:
        assert title.startswith(f"*{prefix}<") and card["text"].startswith(prefix)
    else:
        assert title.startswith("*<")
