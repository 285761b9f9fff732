"""The preview at a phone's width (400 px) and a desktop's (1,200 px): the sidebar stays usable,
a reply typed in a card's thread reaches the agent, the agent is seen going on after an
answer, and a Kandev that cannot be reached is named by its URL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kandev_slack.kits.kandevkit import free_port
from kandev_slack.preview import scenario
from kandev_slack.preview.app import Preview, PreviewOptions
from kandev_slack.preview.workspace import ANA, ON_CALL, QUESTIONS
from tests.e2e.preview.browser import By, PreviewPage
from tests.e2e.preview.test_preview_browser import card_ts, seed_ask
from tests.kit.harness import Seeder

ORDERS = scenario.asks()[0]
PHONE, DESKTOP = 400, 1200


def at_width(page: PreviewPage, width: int) -> PreviewPage:
    page.chrome.set_window_size(width, 900)
    return page


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_the_sidebar_is_usable(page: PreviewPage, preview: Preview, width: int) -> None:
    """Also beside a long channel (which squeezed the phone's sidebar to a 12 px strip)."""
    while len(preview.fake.messages(QUESTIONS.id)) < 40:
        preview.fake.post_user_message(QUESTIONS.id, ANA.id, "A long channel: " + "words " * 30)
    at_width(page, width).open(ANA.id, QUESTIONS.id)
    sidebar = page.chrome.find_element(By.CSS_SELECTOR, "nav.sidebar")
    assert sidebar.size["height"] >= 80, f"the sidebar is a {sidebar.size['height']} px strip"
    link = page.chrome.find_element(By.CSS_SELECTOR, f'a[data-pane="{ON_CALL.id}"]')
    assert link.is_displayed() and link.size["height"] > 0
    link.click()
    page.eventually(
        lambda: "#on-call" in page.chrome.find_element(By.CSS_SELECTOR, ".channel-title").text,
        what="the #on-call channel",
    )
    assert page.chrome.find_element(By.ID, "user").is_displayed(), "who acts cannot be chosen"


def test_a_reply_in_a_cards_thread_reaches_the_agent(
    page: PreviewPage, seed: Seeder, preview: Preview
) -> None:
    bundle = seed_ask(seed, ORDERS, "Store the orders of the returns service")
    ts = card_ts(preview, bundle)
    at_width(page, PHONE).open(ANA.id, QUESTIONS.id)
    page.click(page.card(ts), "Reply in thread")
    page.chrome.find_element(By.ID, "say").send_keys("sqlite")
    page.chrome.find_element(By.CSS_SELECTOR, "#composer button[type=submit]").click()

    page.eventually(lambda: "sqlite" in page.card_text(ts), what="the reply in the thread")
    prompt = page.told("as your answer to")
    assert "“SQLite”" in prompt.text
    page.click(prompt, "Send")

    result = seed.server.agent_result(bundle.task_id, timeout=20)
    assert result is not None and result["tool"]["parsed"] == {"db": {"selected_option": "q1_opt2"}}


def test_after_an_answer_the_agent_is_seen_going_on(
    page: PreviewPage, seed: Seeder, preview: Preview
) -> None:
    bundle = seed_ask(seed, ORDERS, "Store the orders of the loyalty service")
    ts = card_ts(preview, bundle)
    at_width(page, DESKTOP).open(ANA.id, QUESTIONS.id)
    page.click(page.card(ts), "PostgreSQL")

    said = ORDERS.then[-1]["say"]
    went_on = page.eventually(
        lambda: next(
            (e for e in page.card(ts).find_elements(By.CSS_SELECTOR, ".went-on") if said in e.text),
            None,
        ),
        timeout=30,
        what="what the agent said next",
    )
    assert "the agent went on" in went_on.text


@pytest.fixture(scope="module")
def unreachable() -> Iterator[tuple[Preview, str]]:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with Preview({"KANDEV_URL": url}, PreviewOptions(port=0, follow_ups=False)) as running:
        yield running, url


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_an_unreachable_kandev_is_named(chrome: Any, unreachable, width: int) -> None:
    running, url = unreachable
    page = at_width(PreviewPage(chrome, running.url), width).open(ANA.id, QUESTIONS.id)
    problem = page.eventually(
        lambda: next(
            (e for e in chrome.find_elements(By.ID, "kandev-problem") if e.is_displayed()), None
        ),
        what="the unreachable Kandev",
    )
    assert f"Cannot reach Kandev at {url}" in problem.text
