"""The preview in a real headless browser: a question appears as a card, a click answers it
and the card changes, a form with a missing answer shows the field error, a stale click tells
the user, and someone not allowed to answer is told so. Each state is saved as the documentation's
pictures (docs/screens/, desktop and phone widths)."""

from __future__ import annotations

from kandev_slack.preview import scenario
from kandev_slack.preview.app import Preview
from kandev_slack.preview.workspace import ANA, CAROL, QUESTIONS
from tests.e2e.preview.browser import By, PreviewPage
from tests.kit.harness import SeededBundle, Seeder

ORDERS, INVOICES, _DEPLOY = scenario.asks()  # the questions the preview's scripted agents ask


def seed_ask(seed: Seeder, ask: scenario.Ask, title: str | None = None) -> SeededBundle:
    return seed(
        ask.questions,
        ask.context,
        title or ask.title,
        transcript=ask.transcript,
        then=ask.then,
        description=ask.description,
    )


def card_ts(preview: Preview, bundle: SeededBundle) -> str:
    """Where the bot posted the bundle's card (the fake Slack knows it by its metadata)."""
    posted = preview.fake.wait_for_message(
        QUESTIONS.id, lambda m: bundle.pending_id in str(m.metadata), timeout=20
    )
    return posted.ts


def test_a_question_appears_as_a_card_and_a_click_answers_it(
    page: PreviewPage, seed: Seeder, preview: Preview
):
    bundle = seed_ask(seed, ORDERS)
    ts = card_ts(preview, bundle)
    page.open(ANA.id, QUESTIONS.id)
    assert "Which database should the orders table live in?" in page.card_text(ts)
    page.screenshot("card-waiting", lambda: page.card(ts))

    page.click(page.card(ts), "PostgreSQL")

    page.eventually(lambda: "Answered by" in page.card_text(ts), what="the answered card")
    assert "PostgreSQL" in page.card_text(ts)
    page.screenshot("card-answered", lambda: page.card(ts))
    result = seed.server.agent_result(bundle.task_id, timeout=15)
    assert result is not None and result["tool"]["parsed"] == {"db": {"selected_option": "q1_opt1"}}


def test_a_form_with_a_missing_answer_shows_the_field_error(
    page: PreviewPage, seed: Seeder, preview: Preview
):
    bundle = seed_ask(seed, INVOICES)
    ts = card_ts(preview, bundle)
    page.open(ANA.id, QUESTIONS.id)
    page.click(page.card(ts), "Answer…")
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
    assert "Answered by" not in page.card_text(ts)
    page.screenshot("form-field-error", page.modal, focus=".field-error")
    page.modal().find_element(By.CSS_SELECTOR, "[data-act=close]").click()


def test_a_forms_own_answer_field_appears_only_once_other_is_picked(
    page: PreviewPage, seed: Seeder, preview: Preview
):
    bundle = seed_ask(seed, INVOICES)
    ts = card_ts(preview, bundle)
    page.open(ANA.id, QUESTIONS.id)
    page.click(page.card(ts), "Answer…")
    modal = page.modal()
    assert not modal.find_elements(By.CSS_SELECTOR, "textarea"), "a text box before Other…"
    modal.find_elements(By.XPATH, ".//label[contains(., 'Other…')]")[0].click()
    field = page.eventually(
        lambda: next(iter(page.modal().find_elements(By.CSS_SELECTOR, "textarea")), None),
        what="the field of Other…",
    )
    assert field.is_displayed()
    assert len(page.modal().find_elements(By.CSS_SELECTOR, "textarea")) == 1
    page.modal().find_element(By.CSS_SELECTOR, "[data-act=close]").click()


def test_a_stale_click_tells_the_user(page: PreviewPage, seed: Seeder, preview: Preview):
    bundle = seed_ask(seed, ORDERS, "Store the orders of the billing service")
    ts = card_ts(preview, bundle)
    page.open(ANA.id, QUESTIONS.id)
    card = page.card(ts)
    page.set_live(False)  # the page keeps showing the card as it was
    seed.server.answer(bundle.pending_id, {"db": "q1_opt2"})  # answered in Kandev's web UI
    preview.fake.wait_for(
        lambda: (
            "SQLite" in preview.fake.message(QUESTIONS.id, ts).all_text
            and preview.fake.message(QUESTIONS.id, ts).versions
        ),
        timeout=20,
        description="the card edited with Kandev's answer",
    )

    page.click(card, "PostgreSQL")  # on the card as this page still shows it
    page.set_live(True)

    told = page.told("Answered in Kandev first", "already")
    assert "Only visible to you" in told.text
    assert "SQLite" in told.text
    page.screenshot("stale-click", lambda: page.told("Answered in Kandev first", "already"))


def test_someone_not_allowed_to_answer_is_told_so(
    page: PreviewPage, seed: Seeder, preview: Preview
):
    bundle = seed_ask(seed, ORDERS, "Store the orders of the shipping service")
    ts = card_ts(preview, bundle)
    page.open(CAROL.id, QUESTIONS.id)
    page.click(page.card(ts), "SQLite")
    told = page.told("not on the list")
    assert "Only visible to you" in told.text
    assert "Answered by" not in page.card_text(ts)
    page.screenshot("not-allowed", lambda: page.told("not on the list"))
