"""The preview in a real headless browser: a question appears as a card, a click answers it
and the card changes, a form with a missing answer shows the field error, a stale click tells
the user, and someone not allowed to answer is told so. Each state is saved as the README's
pictures (docs/screens/, desktop and phone widths)."""

from __future__ import annotations

import uuid

from selenium.webdriver.common.by import By

from preview.workspace import ANA, CAROL, QUESTIONS
from tests.e2e.preview.browser import PreviewPage
from tests.kit.harness import Seeder, question


def _title(what: str) -> str:
    return f"{what} {uuid.uuid4().hex[:6]}"


DATABASE = question(
    "db",
    "Database",
    "Which database should the *orders* table live in?",
    ("PostgreSQL", "The relational database the other services already use"),
    ("SQLite", "One file next to the service; no server to run"),
)


def test_a_question_appears_as_a_card_and_a_click_answers_it(page: PreviewPage, seed: Seeder):
    title = _title("Store the orders")
    bundle = seed([DATABASE], "About 200 orders a minute at peak; see `checkout/README.md`.", title)
    page.open(ANA.id, QUESTIONS.id)
    card = page.card(title)
    assert "Which database should the orders table live in?" in card.text
    page.screenshot("card-waiting", lambda: page.card(title))

    page.click(card, "PostgreSQL")

    page.eventually(lambda: "Answered by" in page.card_text(title), what="the answered card")
    assert "PostgreSQL" in page.card_text(title)
    page.screenshot("card-answered", lambda: page.card(title))
    result = seed.server.agent_result(bundle.task_id, timeout=15)
    assert result is not None and result["tool"]["parsed"] == {"db": {"selected_option": "q1_opt1"}}


def test_a_form_with_a_missing_answer_shows_the_field_error(page: PreviewPage, seed: Seeder):
    title = _title("Design the invoices API")
    seed(
        [
            question("style", "API style", "Which style?", ("REST", "Resources"), ("GraphQL", "Q")),
            question("auth", "Authentication", "How?", ("API keys", "Keys"), ("OAuth 2", "Tokens")),
        ],
        "Two decisions block the first endpoint.",
        title,
    )
    page.open(ANA.id, QUESTIONS.id)
    page.click(page.card(title), "Answer…")
    modal = page.modal()
    modal.find_element(By.XPATH, ".//label[contains(., 'REST')]").click()
    modal.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

    error = page.eventually(
        lambda: next(iter(page.chrome.find_elements(By.CSS_SELECTOR, ".field-error")), None),
        what="a field error",
    )
    assert error.text, "the field error says nothing"
    chosen = page.modal().find_element(By.XPATH, ".//label[contains(., 'REST')]/input")
    assert chosen.is_selected(), "the answer already given was lost"
    page.screenshot("form-field-error", page.modal, focus=".field-error")
    page.modal().find_element(By.CSS_SELECTOR, "[data-act=close]").click()


def test_a_stale_click_tells_the_user(page: PreviewPage, seed: Seeder, preview):
    title = _title("Roll back the release")
    bundle = seed([DATABASE], "The deploy pipeline is red.", title)
    page.open(ANA.id, QUESTIONS.id)
    card = page.card(title)
    page.set_live(False)  # the page keeps showing the card as it was
    seed.server.answer(bundle.pending_id, {"db": "q1_opt2"})  # answered in Kandev's web UI
    preview.fake.wait_for(
        lambda: any(
            title in m.all_text and "SQLite" in m.all_text and len(m.versions) > 0
            for m in preview.fake.messages(QUESTIONS.id)
        ),
        timeout=20,
        description="the card edited with Kandev's answer",
    )

    page.click(card, "PostgreSQL")  # on the card as this page still shows it
    page.set_live(True)

    told = page.eventually(
        lambda: next(
            (
                e
                for e in page.chrome.find_elements(By.CSS_SELECTOR, ".ephemeral")
                if "answered first" in e.text or "already" in e.text
            ),
            None,
        ),
        what="the late clicker told what happened",
    )
    assert "Only visible to you" in told.text
    assert "SQLite" in told.text
    page.screenshot("stale-click", lambda: told)


def test_someone_not_allowed_to_answer_is_told_so(page: PreviewPage, seed: Seeder):
    title = _title("Pick the queue")
    seed([DATABASE], "", title)
    page.open(CAROL.id, QUESTIONS.id)
    page.click(page.card(title), "SQLite")
    told = page.eventually(
        lambda: next(
            (
                e
                for e in page.chrome.find_elements(By.CSS_SELECTOR, ".ephemeral")
                if "not on the list" in e.text
            ),
            None,
        ),
        what="the refusal",
    )
    assert "Only visible to you" in told.text
    assert "Answered by" not in page.card_text(title)
