"""Who resolved a card, as its lines say it (issue 32 §6): the Slack person and the Kandev
account they acted with, a Kandev account nobody in Slack linked by its display name, or
nobody — for questions and approvals alike; and, whatever display name Kandev holds, a line
that stays bounded and cannot notify anyone (property)."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards import outcome_line
from kandev_slack.cards.limits import MAX_MESSAGE_TEXT, slack_len
from kandev_slack.cards.wording import (
    MAX_KANDEV_NAME,
    MAX_OUTCOME_LINE,
    kandev_name,
    resolved_where,
    who_resolved,
)
from kandev_slack.cards.words import lost_message
from kandev_slack.core.approval import Approval, ToolAction, ToolOption
from kandev_slack.core.clarification import SKIPPED_REASON, Answer
from kandev_slack.core.domain import CardOutcome, CardState
from kandev_slack.kinds.approval.cards.card import (
    approval_lost_message,
    approval_outcome_line,
    render_approval,
)
from kandev_slack.kinds.question.cards.card import render_card
from tests.kit.factories import KANDEV_URL, NOW, make_bundle, make_outcome, make_task
from tests.unit.cards.checks import assert_valid_message
from tests.unit.cards.safety import assert_text_cannot_notify, notifying, unsafe_angles
from tests.unit.cards.strategies import bundles, mention_texts, outcomes_for, tasks_for, texts
from tests.unit.cards.test_limits_property import SETTINGS

ANA = "U0ANA00001"
BEN = "U0BEN00002"
DB = {
    "question_id": "db",
    "title": "Database",
    "prompt": "Which database?",
    "options": [
        {"option_id": "pg", "label": "PostgreSQL"},
        {"option_id": "mongo", "label": "MongoDB"},
    ],
}
STANDARD = (
    ToolOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    ToolOption(option_id="reject_once", name="Reject", kind="reject_once"),
)
APPROVAL = Approval(
    task_id="t-1",
    session_id="s-1",
    request_id="r-1",
    pending_id="fake-1",
    created_at=NOW - timedelta(seconds=5),
    action=ToolAction(type="command", command="rm -rf build", description="Run rm -rf build"),
    options=STANDARD,
    cancellation_revision=0,
)


def answered(**who: object) -> CardOutcome:
    answer = Answer(question_id="db", selected_options=["pg"])
    return make_outcome(CardState.ANSWERED, answers=[answer], **who)  # type: ignore[arg-type]


def chose(option_id: str, **who: object) -> CardOutcome:
    state = CardState.ANSWERED if option_id.startswith("allow") else CardState.REJECTED
    answer = Answer(question_id="", selected_options=[option_id])
    return make_outcome(state, answers=[answer], **who)  # type: ignore[arg-type]


def test_a_linked_persons_answer_names_them_and_their_kandev_account():
    bundle = make_bundle(DB)
    ana = answered(via="slack", by_user=ANA, kandev_user="u-ana", kandev_name="Ana")
    assert (
        outcome_line(ana, bundle) == f"✅ Answered by <@{ANA}> (Kandev: Ana) in Slack: PostgreSQL"
    )
    # A notification's text mentions nobody: the Kandev account alone.
    assert outcome_line(ana, bundle, mention=False) == "✅ Answered by Ana in Slack: PostgreSQL"
    skipped = make_outcome(
        CardState.REJECTED,
        via="slack",
        by_user=ANA,
        reason=SKIPPED_REASON,
        kandev_user="u-ana",
        kandev_name="Ana",
    )
    assert outcome_line(skipped, bundle) == f"⏭ Skipped by <@{ANA}> (Kandev: Ana) in Slack"
    # With the bot's account (not linked): the Slack person only, as before.
    bob = answered(via="slack", by_user=BEN)
    assert outcome_line(bob, bundle) == f"✅ Answered by <@{BEN}> in Slack: PostgreSQL"
    # Outside Slack, with nobody known (Kandev records no author of an answer).
    assert outcome_line(answered(), bundle) == "✅ Answered in Kandev: PostgreSQL"


def test_an_approval_made_in_kandev_names_its_account_by_linked_slack_user_else_by_name():
    by_name = chose("allow_once", kandev_user="u-ben", kandev_name="Ben")
    assert approval_outcome_line(by_name, APPROVAL) == "✅ Allowed once by Ben in Kandev"
    linked = chose("reject_once", by_user=BEN, kandev_user="u-ben", kandev_name="Ben")
    assert (
        approval_outcome_line(linked, APPROVAL)
        == f"⛔ Rejected by <@{BEN}> (Kandev: Ben) in Kandev"
    )
    nameless = chose("allow_once", by_user=BEN, kandev_user="u-ben")  # Kandev gave no name
    assert approval_outcome_line(nameless, APPROVAL) == f"✅ Allowed once by <@{BEN}> in Kandev"
    assert approval_outcome_line(chose("allow_once"), APPROVAL) == "✅ Allowed once in Kandev"
    in_slack = chose("allow_once", via="slack", by_user=ANA, kandev_user="u-ana", kandev_name="Ana")
    assert (
        approval_outcome_line(in_slack, APPROVAL)
        == f"✅ Allowed once by <@{ANA}> (Kandev: Ana) in Slack"
    )


def test_a_late_clicker_is_told_who_chose_or_answered_first():
    assert approval_lost_message(APPROVAL, chose("allow_once", kandev_name="Ben")) == (
        "Ben chose first in Kandev: Allowed once. Your choice was not sent."
    )
    assert approval_lost_message(APPROVAL, chose("reject_once")) == (
        "Someone in Kandev chose first: Rejected. Your choice was not sent."
    )
    linked = chose("allow_once", via="slack", by_user=ANA, kandev_name="Ana")
    assert approval_lost_message(APPROVAL, linked) == (
        f"<@{ANA}> (Kandev: Ana) chose first: Allowed once. Your choice was not sent."
    )
    winner = answered(via="slack", by_user=ANA, kandev_user="u-ana", kandev_name="Ana")
    assert lost_message(make_bundle(DB), winner) == (
        f"<@{ANA}> (Kandev: Ana) answered first in Slack: PostgreSQL. Your answer was not sent."
    )


def test_a_kandev_display_name_is_escaped_one_line_and_bounded():
    assert kandev_name("  ") == ""
    assert kandev_name("Ana <!channel> & @here\nthe second line") == (
        "Ana &lt;!channel&gt; &amp; @\u2060here the second line"
    )
    long = kandev_name("x" * 500)
    assert slack_len(long) <= MAX_KANDEV_NAME and long.endswith("…")
    assert who_resolved(make_outcome(by_user="<!channel>", kandev_name="")) is None
    assert resolved_where(make_outcome(via="slack")) == "in Slack"


@SETTINGS
@given(data=st.data())
def test_whoever_resolved_a_card_its_lines_stay_bounded_and_notify_nobody(data):
    """Any Kandev display name (a mention, a broadcast, 300 characters…), any Slack id: the
    outcome line names the Kandev account (escaped) and mentions only a well-formed Slack id,
    never in a notification's text; the card stays valid; a late clicker's message is bounded."""
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle))
    state = data.draw(st.sampled_from([CardState.ANSWERED, CardState.REJECTED]))
    outcome = data.draw(outcomes_for(bundle, state, mention_texts)) or make_outcome(state)
    outcome = outcome.model_copy(
        update={"state": state, "kandev_name": data.draw(st.one_of(texts(300), mention_texts(300)))}
    )
    line = outcome_line(outcome, bundle)
    assert slack_len(line) <= MAX_OUTCOME_LINE
    assert unsafe_angles(line, allowed_users={"U0123ABC"}) == []
    assert notifying(line, allowed_users={"U0123ABC"}) == []
    shown = kandev_name(outcome.kandev_name)
    if shown:
        assert shown in line
    quiet = outcome_line(outcome, bundle, mention=False)
    assert "<@" not in quiet and notifying(quiet) == []
    card = render_card(bundle, task, state, outcome, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(card, allowed_users={"U0123ABC"})
    assert "<@" not in card["text"]
    told = lost_message(bundle, outcome)
    assert slack_len(told) <= MAX_MESSAGE_TEXT
    assert_text_cannot_notify(told, allowed_users={"U0123ABC"})


@SETTINGS
@given(
    name=st.one_of(texts(300), mention_texts(300)),
    by_user=st.one_of(st.none(), st.just("U0123ABC"), st.just("<!here>")),
    via=st.sampled_from(["slack", "kandev"]),
    option=st.sampled_from(["allow_once", "reject_once", "unknown-option"]),
)
def test_whoever_chose_an_approval_its_card_stays_valid_and_notifies_nobody(
    name: str, by_user: str | None, via: str, option: str
):
    outcome = chose(option, via=via, by_user=by_user, kandev_user="u-x", kandev_name=name)
    line = approval_outcome_line(outcome, APPROVAL)
    shown = kandev_name(name)
    if shown:
        assert shown in line
    assert notifying(line, allowed_users={"U0123ABC"}) == []
    state = outcome.state
    message = render_approval(
        APPROVAL, make_task("t-1"), state, outcome, kandev_url=KANDEV_URL, now=NOW
    )
    assert_valid_message(message, allowed_users={"U0123ABC"})
    assert "<@" not in message["text"]  # the notification names nobody
    told = approval_lost_message(APPROVAL, outcome)
    assert slack_len(told) <= MAX_MESSAGE_TEXT
    assert_text_cannot_notify(told, allowed_users={"U0123ABC"})
