"""Whatever Kandev sends, the card stays within Block Kit's limits (the fake_slack fixture fails
the test on any violation), says when something was shortened, cannot ping or forge links, and
can still be answered."""

from __future__ import annotations

from kandev_slack.kits.fakeslack import ALICE
from tests.e2e.helpers import (
    QUIET_ROW,
    assert_sending,
    assert_terminal_controls,
    buttons,
    choice_and_text_blocks,
    more_options,
    open_modal,
    outcome_line,
    response_of,
    start_bot,
    wait_card,
    wait_final,
    wait_outcome,
)
from tests.kit.harness import CHANNEL, option_id, question

HOSTILE = "<!channel> <@U0ALICE001> <https://evil.example|click here> a < b && c > d 🚀🙂 "
SHORTENED = "(shortened — <https://kandev.example.test/t/"


def long_text(seed_word: str, length: int = 10_000) -> str:
    unit = f"{seed_word} {HOSTILE}**bold** _it_ `code` "
    return (unit * (length // len(unit) + 1))[:length]


def long_label(q: int, o: int) -> str:
    return f"Q{q} option {o}: " + "a rather long label that keeps going 🙂 <&> " * 3


def extreme_questions(count: int, options: int) -> list[dict]:
    return [
        question(
            f"q{q}",
            f"Title {q} " + "x" * 40,
            long_text(f"prompt{q}"),
            *[
                (long_label(q, o), f"Description {q}.{o} " + "d🙂<&> " * 60)
                for o in range(1, options + 1)
            ],
        )
        for q in range(1, count + 1)
    ]


def assert_safe(text: str) -> None:
    assert "<!channel>" not in text
    assert "<https://evil.example" not in text
    assert "&lt;!channel&gt;" in text


def test_four_questions_six_options_and_huge_texts(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    title = "Extreme <&> 🚀 " + "x" * 44  # Kandev allows 60 characters
    bundle = seed(extreme_questions(4, 6), context=long_text("context"), title=title)
    card = wait_card(fake_slack, bundle.pending_id)
    assert fake_slack.violations == []
    assert len(card.blocks) <= 50
    assert SHORTENED in card.all_text
    assert_safe(card.all_text)
    assert len(card.text) <= 4000
    assert buttons(card) == ["Answer…"] and more_options(card) == QUIET_ROW
    for q in range(1, 5):
        assert f"{q}/4 · Title {q}" in card.all_text

    driver = slack_driver(bot.events_url)
    mark = fake_slack.mark()
    driver.click(CHANNEL, card.ts, text="Answer…", user=ALICE)
    view = open_modal(fake_slack, "kq_answer_modal", after=mark)
    assert fake_slack.violations == []
    assert "Options in full" in view.all_text
    per_question = choice_and_text_blocks(view)
    assert len(per_question) == 4
    chosen = {f"q{q}": option_id(q, 7 - q) for q in range(1, 5)}
    values = {
        choice: {"kq_choice": chosen[f"q{q}"]}
        for q, (choice, _text) in enumerate(per_question, start=1)
    }
    ack = driver.submit_view(view, values)
    assert_sending(ack)

    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert final["status"] == "answered"
    for question_id, option in chosen.items():
        assert response_of(final, question_id)["selected_options"] == [option]
    edited = wait_outcome(fake_slack, card.ts, "✅")
    line = outcome_line(edited)
    assert line is not None and line.startswith(
        f"✅ Answered by <@{ALICE.id}> in Slack: Q1 option 6"
    )
    positions = [line.index(f"Q{q} option {7 - q}:") for q in range(1, 5)]
    assert positions == sorted(positions)
    assert_terminal_controls(edited)
    assert_safe(edited.all_text)
    assert fake_slack.violations == []


def test_one_question_with_six_long_options_keeps_one_click_buttons(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory)
    bundle = seed(extreme_questions(1, 6), context=long_text("ctx", 3000), title="Long labels")
    card = wait_card(fake_slack, bundle.pending_id)
    assert fake_slack.violations == []
    labels = buttons(card)
    assert len(labels) == 7  # six options and "Other answer…"; the rest is in "More"
    assert labels[-1] == "Other answer…" and more_options(card) == QUIET_ROW
    assert all(len(label) <= 75 for label in labels)
    assert all(label.startswith(f"Q1 option {n}") for n, label in enumerate(labels[:6], 1))
    assert_safe(card.all_text)

    slack_driver(bot.events_url).click(CHANNEL, card.ts, text=labels[5], user=ALICE)
    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert response_of(final, "q1")["selected_options"] == [option_id(1, 6)]
    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert (outcome_line(edited) or "").startswith(
        f"✅ Answered by <@{ALICE.id}> in Slack: Q1 option 6"
    )
    assert_terminal_controls(edited)
