"""Property: cards read in two seconds, on a phone too (issue 21). Whatever Kandev sends:

- a waiting card is question first: title, one grey line, the question, then its buttons; the
  question, the grey line and the context fit budgets measured as a 400 px wide phone shows
  them (about 40 characters a line, link and date tokens counted by what Slack displays);
- a new card mentions nobody (``<@…>`` in a posted message notifies that person), whatever
  earlier answer it shows;
- times are Slack date tokens, never an age frozen into the message;
- a resolved card is outcome-first, bold, and short;
- a submitted form's title says what happened, within Slack's 24 characters.
"""

from __future__ import annotations

import math
import re

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards.limits import MAX_VIEW_TITLE
from kandev_slack.core.domain import CardState, PastAnswer, PastChoice
from kandev_slack.kinds.question.cards.card import render_card
from kandev_slack.kinds.question.cards.modals import build_outcome_modal
from tests.kit.factories import DB_QUESTION, KANDEV_URL, NOW, make_bundle, make_task
from tests.unit.cards.checks import assert_valid_message
from tests.unit.cards.strategies import bundles, outcomes_for, tasks_for, texts
from tests.unit.cards.test_limits_property import SETTINGS

#: A phone 400 px wide shows about this many characters of a line of card text.
PHONE_LINE = 40
#: What the first screen of a phone holds above the answer buttons (title, grey line and the
#: question), in lines.
FIRST_SCREEN_LINES = 12
#: The most each part may take on a phone, whatever Kandev sends (lines).
PHONE_BUDGETS = {"question": 12, "context": 12, "meta": 16}

#: What Slack displays instead of a token: a link's label, a date, a mention's name.
_DISPLAYED = (
    (re.compile(r"<(?:https?://|mailto:)[^<>|]*\|([^<>]*)>"), r"\1"),
    (re.compile(r"<!date\^[^<>|]*\|[^<>]*>"), "Yesterday at 12:50 PM"),
    (re.compile(r"<[^<>]*>"), "@someone"),
)


def shown(mrkdwn: str) -> str:
    """What Slack displays of ``mrkdwn``, about: link labels, a date as ``Yesterday at 7:50
    PM``, entities as one character, no bold/italic marks."""
    text = mrkdwn
    for token, displayed in _DISPLAYED:
        text = token.sub(displayed, text)
    text = re.sub(r"&(?:amp|lt|gt);", "&", text)
    return text.replace("*", "").replace("_", "")


def phone_lines(mrkdwn: str) -> int:
    """How many lines ``mrkdwn`` takes on a 400 px wide phone."""
    return sum(max(1, math.ceil(len(line) / PHONE_LINE)) for line in shown(mrkdwn).split("\n"))


def _text(block: dict) -> str:
    if "text" in block:
        return block["text"]["text"]
    return "\n".join(e["text"] for e in block.get("elements", []) if e.get("type") == "mrkdwn")


def _ids(card: dict) -> list[str]:
    return [b.get("block_id", b["type"]) for b in card["blocks"]]


def _pasts(draw) -> PastAnswer | None:
    if not draw(st.booleans()):
        return None
    labels = tuple(draw(st.lists(texts(200), max_size=3)))
    return PastAnswer(
        pending_id="earlier",
        channel="C0123",
        via=draw(st.sampled_from(["slack", "kandev"])),
        by_user=draw(st.sampled_from([None, "U0123ABC", "U0BOB00002"])),
        choices=(PastChoice(labels=labels, text=draw(texts(300))),),
        at=NOW,
    )


@SETTINGS
@given(data=st.data())
def test_a_waiting_card_is_question_first_within_phone_budgets(data):
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle))
    past = _pasts(data.draw)
    card = render_card(
        bundle, task, CardState.PENDING, None, kandev_url=KANDEV_URL, now=NOW, past=past
    )
    assert_valid_message(card)  # nobody may be mentioned in a new card
    assert "<@" not in card["text"]
    ids = _ids(card)
    assert ids[:2] == ["kq_title", "kq_meta"]
    first_question = 3 if ids[2] == "divider" else 2
    assert ids[first_question].startswith("kq_q:0:")
    assert "kq_actions" in ids and ids.index("kq_actions") > first_question
    assert ids[-1] == "kq_more"  # the quiet row last
    blocks = {b.get("block_id"): b for b in card["blocks"]}
    meta = _text(blocks["kq_meta"])
    assert "<!date^" in meta and not re.search(r"\bago\b|just now", meta)
    assert phone_lines(meta) <= PHONE_BUDGETS["meta"]
    for block_id, block in blocks.items():
        if block_id and block_id.startswith("kq_q:"):
            assert phone_lines(_text(block)) <= PHONE_BUDGETS["question"], _text(block)
    if "kq_context" in blocks:
        assert phone_lines(_text(blocks["kq_context"])) <= PHONE_BUDGETS["context"]
    for block in card["blocks"]:
        for element in block.get("elements", []):
            assert element.get("style") != "danger"


@SETTINGS
@given(data=st.data())
def test_a_resolved_card_is_outcome_first_and_keeps_no_context(data):
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle))
    state = data.draw(st.sampled_from([s for s in CardState if s.terminal]))
    outcome = data.draw(outcomes_for(bundle, state))
    card = render_card(bundle, task, state, outcome, kandev_url=KANDEV_URL, now=NOW)
    ids = _ids(card)
    assert ids[:2] == ["kq_title", "kq_outcome"] and ids[-1] == "kq_more"
    assert "kq_context" not in ids and "kq_meta" not in ids and "kq_actions" not in ids
    line = _text(card["blocks"][1])
    assert line.startswith("*") and re.search(r"\* · <!date\^\d+\^[^|]*\|[^>]*>$", line)
    assert "<@" not in card["text"]


def test_a_realistic_card_shows_its_question_and_buttons_on_the_first_phone_screen():
    context = "\n".join(
        f"Finding {n}: the orders table has grown past what fits." for n in range(11)
    )
    bundle = make_bundle(DB_QUESTION, context=context)
    task = make_task(title="Migrate the orders service to a new datastore")
    card = render_card(bundle, task, CardState.PENDING, None, kandev_url=KANDEV_URL, now=NOW)
    above = card["blocks"][: _ids(card).index("kq_actions")]
    assert sum(phone_lines(_text(b)) for b in above) <= FIRST_SCREEN_LINES
    assert "Finding 3" not in str(card) and "Finding 2" in str(card)  # three lines of context


@given(
    kind=st.sampled_from(
        ["won", "lost", "refused", "already_answered", "duplicate", "unconfirmed", "undecided"]
    ),
    action=st.sampled_from(["answer", "reject"]),
)
def test_a_submitted_forms_title_says_what_happened(kind, action):
    view = build_outcome_modal(kind, "", action)
    title = view["title"]["text"]
    assert len(title) <= MAX_VIEW_TITLE and title != "Sent"
    if kind == "won":
        assert title == ("Rejected" if action == "reject" else "Answered")
    elif kind not in ("already_answered", "duplicate", "unconfirmed", "undecided"):
        assert title == "Not sent"


def test_a_prompt_with_one_long_unbroken_line_still_fits_a_phone():
    """Found by the property above: short lines and then a 330-character URL wrapped into
    13 rows of a phone, over the question's budget."""
    prompt = "<!channel> | a | b |\n|---|---|\n| 1 | 2 |\n https://example.com/" + "a" * 310
    two = {**DB_QUESTION, "question_id": "q2", "prompt": prompt}
    bundle = make_bundle(DB_QUESTION, two)
    card = render_card(bundle, make_task(), CardState.PENDING, None, kandev_url=KANDEV_URL, now=NOW)
    [question] = [b for b in card["blocks"] if b.get("block_id", "").startswith("kq_q:1:")]
    assert phone_lines(_text(question)) <= PHONE_BUDGETS["question"]
    assert "| 1 | 2 |" in _text(question)  # the short lines before it are kept
