"""Past answers: a question asked again (same normalised title and prompt, same workspace)
shows the last answer on its new card; never from another channel or route, never an
unanswered one."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards import ids
from kandev_slack.config.routing import Route, RouteRule, Routing
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import CardState, PastAnswer, PastChoice
from kandev_slack.kinds.question.cards.card import past_line
from kandev_slack.usecases.past_answers import PastAnswers, normalise, question_key
from tests.kit.factories import ALICE_ID, CHANNEL, NOW, answered, make_outcome, numbered_bundle
from tests.kit.factories import make_question as q


def _answer(store, card, outcome) -> None:
    assert store.cards.transition(card.pending_id, outcome)


def test_a_second_identical_question_shows_the_first_ones_answer(posted, store, gateway):
    first = posted(numbered_bundle(1, q(prompt="Which **database**  should we use?")))
    _answer(store, first, answered(ALICE_ID, "q1_opt1"))
    second = posted(numbered_bundle(2, q(title="database", prompt="which database should we use")))
    assert second.past is not None and second.past.pending_id == first.pending_id
    assert second.past.choices == (PastChoice(labels=("PostgreSQL",)),)
    assert second.past.summary == "" and second.past.by_user == ALICE_ID
    message = gateway.cards[(second.channel, second.ts)][0]
    [line] = [b for b in message.blocks if b.get("block_id") == ids.BLOCK_PAST]
    text = line["elements"][0]["text"]
    # a new message: the earlier answerer is not mentioned (that would notify them)
    assert text.startswith("↩ Last answered <!date^") and text.endswith(" in Slack: PostgreSQL")
    assert "<@" not in str(message.blocks) and "<@" not in message.text


def test_other_questions_and_unanswered_ones_show_nothing(posted, store, gateway):
    rejected = posted(numbered_bundle(1, q()))
    _answer(store, rejected, make_outcome(CardState.REJECTED, via="slack", by_user=ALICE_ID))
    other = posted(numbered_bundle(2, q(prompt="Which cache?")))
    _answer(store, other, answered(ALICE_ID, "q1_opt2"))
    again = posted(numbered_bundle(3, q()))
    assert again.past is None
    message = gateway.cards[(again.channel, again.ts)][0]
    assert not [b for b in message.blocks if b.get("block_id") == ids.BLOCK_PAST]


def test_the_most_recent_answer_wins(posted, store):
    older = posted(numbered_bundle(1, q()))
    _answer(
        store,
        older,
        make_outcome(answers=[Answer(question_id="q1", selected_options=["q1_opt2"])], at=NOW),
    )
    newer = posted(numbered_bundle(2, q()))
    _answer(store, newer, answered(ALICE_ID, "q1_opt1"))
    third = posted(numbered_bundle(3, q()))
    assert third.past is not None and third.past.pending_id == newer.pending_id


def test_never_from_another_channel_or_route(store, posted):
    first = posted(numbered_bundle(1, q()))
    _answer(store, first, answered(ALICE_ID, "q1_opt1"))
    bundle = numbered_bundle(2, q())
    task = first.task
    same = Routing(default_channel=CHANNEL)
    route = same.route_for(task)
    assert route is not None
    assert [p.pending_id for p in PastAnswers(store.cards, same).earlier(bundle, task, route)] == [
        first.pending_id
    ]
    # Another channel: nothing.
    assert PastAnswers(store.cards, same).earlier(bundle, task, Route(channel="C0OTHER")) == []
    # The same channel, but the earlier card's task now takes a route with other answerers.
    narrowed = Routing(
        default_channel=CHANNEL,
        rules=(
            RouteRule(
                workspace=task.workspace_id,
                channel=CHANNEL,
                answerers=frozenset({"U0BOSS"}),
                line=1,
            ),
        ),
    )
    assert PastAnswers(store.cards, narrowed).earlier(bundle, task, Route(channel=CHANNEL)) == []


def test_another_workspace_has_another_key() -> None:
    bundle = numbered_bundle(1, q())
    assert question_key("ws-1", bundle) != question_key("ws-2", bundle)
    assert question_key("ws-1", bundle) == question_key("ws-1", numbered_bundle(9, q()))


@given(
    st.text(max_size=40),
    st.sampled_from(["", " ", "  \n", "?", "!", " ?", "…"]),
    st.sampled_from([str.upper, str.lower, str.title, lambda s: s]),
)
def test_normalising_ignores_case_spacing_emphasis_and_trailing_punctuation(text, tail, case):
    variant = case(" ".join(f"**{w}**" if n % 2 else w for n, w in enumerate(text.split())))
    assert normalise(variant + tail) == normalise(text)


@given(st.text(min_size=1, max_size=30).filter(lambda t: normalise(t) != ""))
def test_different_prompts_have_different_keys(text):
    one = numbered_bundle(1, q(prompt=text))
    other = numbered_bundle(1, q(prompt=text + " zzz"))
    assert question_key("ws", one) != question_key("ws", other)


def test_outcome_time_is_the_answer_time(posted, store):
    first = posted(numbered_bundle(1, q()))
    at = NOW - timedelta(days=3)
    _answer(
        store,
        first,
        make_outcome(
            via="slack",
            by_user=ALICE_ID,
            answers=[Answer(question_id="q1", selected_options=["q1_opt1"])],
            at=at,
        ),
    )
    again = posted(numbered_bundle(2, q()))
    assert again.past is not None and again.past.at == at


def test_the_answer_is_stored_as_data_and_worded_by_the_card(posted, store):
    """Nothing rendered is stored: the card words the labels (escaped) when it shows them."""
    first = posted(numbered_bundle(1, q()))
    _answer(store, first, answered(ALICE_ID, "q1_opt1"))
    second = posted(numbered_bundle(2, q()))
    stored = store.cards.get(second.pending_id)
    assert stored is not None and stored.past is not None
    assert stored.past.choices == (PastChoice(labels=("PostgreSQL",)),)
    assert stored.past.summary == ""


def test_a_row_written_by_an_older_version_still_shows_its_worded_answer():
    legacy = PastAnswer.model_validate_json(
        '{"pending_id": "old", "channel": "C1", "ts": "1.1", "via": "slack",'
        f' "by_user": "{ALICE_ID}", "summary": "*PostgreSQL*", "at": "{NOW.isoformat()}"}}'
    )
    assert legacy.choices == ()
    assert past_line(legacy).endswith(" in Slack: *PostgreSQL*")
    assert past_line(legacy, mention=True).endswith(f"by <@{ALICE_ID}>: *PostgreSQL*")


def test_labels_and_free_text_are_worded_as_a_resolved_card_words_them():
    past = PastAnswer(
        pending_id="old",
        channel="C1",
        choices=(PastChoice(labels=("A <b>", "B")), PastChoice(text="mine"), PastChoice()),
        at=NOW,
    )
    line = past_line(past)
    assert line.endswith("in Kandev: A &lt;b&gt;, B; “mine”; no answer"), line
