"""A headless Debian ``chromium`` driven through Selenium's Python client, and the preview
page as a test sees it. Nothing downloads a browser: the system's ``chromium`` and
``chromedriver`` are used, or the tests skip (and fail on CI, where ``.ci/run`` installs them)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

try:
    from selenium.webdriver.common.by import By
except ImportError:  # chromium_paths() says what is missing, before any test uses it
    By = None

#: Where the pictures go: ``PREVIEW_SCREENS`` (``PREVIEW_SCREENS=docs/screens`` makes the
#: pictures of docs/ anew), else a temporary folder, so that a test run leaves the checkout clean.
SCREENS = Path(
    os.environ.get("PREVIEW_SCREENS") or Path(tempfile.gettempdir()) / "kandev-slack-screens"
).resolve()
#: The widths of the documentation's pictures: a desktop window and a phone.
WIDTHS = {"desktop": 900, "phone": 400}
T = TypeVar("T")


def chromium_paths() -> tuple[str, str]:
    """The system's chromium and chromedriver, or skip (locally) / fail (CI=true)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    missing = [name for name, path in (("chromium", browser), ("chromedriver", driver)) if not path]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package (the test extra)")
    if missing:
        why = (
            f"the browser tests need {', '.join(missing)}: "
            "apt-get install chromium chromium-driver (.ci/run does), pip install -e '.[test]'"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    assert browser is not None and driver is not None
    return browser, driver


def start_chromium() -> Any:
    browser, driver = chromium_paths()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
    ):
        options.add_argument(flag)
    chrome = webdriver.Chrome(service=Service(driver), options=options)
    chrome.set_window_size(WIDTHS["desktop"], 1000)
    return chrome


class PreviewPage:
    """The preview's page in the browser: who acts, the cards, the modal, screenshots."""

    def __init__(self, chrome: Any, url: str) -> None:
        self.chrome = chrome
        self.url = url

    def open(self, user_id: str, pane: str = "") -> PreviewPage:
        self.chrome.get(f"{self.url}?user={user_id}#{pane}")
        self.eventually(lambda: self.chrome.execute_script("return document.body.dataset.version"))
        return self

    def eventually(self, found: Callable[[], T | None], timeout: float = 20.0, what: str = "") -> T:
        from selenium.common.exceptions import StaleElementReferenceException

        deadline = time.monotonic() + timeout
        while True:
            try:
                value = found()
                if value:
                    return value
            except StaleElementReferenceException:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the page never showed {what or 'it'}")
            time.sleep(0.1)

    def card(self, ts: str, timeout: float = 20.0) -> Any:
        """The (top-level) message posted at ``ts``."""
        from selenium.webdriver.common.by import By

        selector = f'.timeline > .message[data-ts="{ts}"]'
        return self.eventually(
            lambda: next(iter(self.chrome.find_elements(By.CSS_SELECTOR, selector)), None),
            timeout,
            f"the card {ts}",
        )

    def card_text(self, ts: str) -> str:
        return str(self.card(ts).text)

    def told(self, *words: str, timeout: float = 20.0) -> Any:
        """The ephemeral message (only this user sees) that says one of ``words``."""
        from selenium.webdriver.common.by import By

        def find() -> Any:
            for message in self.chrome.find_elements(By.CSS_SELECTOR, ".ephemeral"):
                if any(word in message.text for word in words):
                    return message
            return None

        return self.eventually(find, timeout, f"an ephemeral saying one of {words}")

    def click(self, element: Any, text: str) -> None:
        """Click the button of ``element`` whose label is ``text``."""
        from selenium.webdriver.common.by import By

        buttons = [
            b
            for b in element.find_elements(By.CSS_SELECTOR, "button, a.btn")
            if b.text.strip() == text
        ]
        assert buttons, f"no button {text!r} in {element.text!r}"
        self.chrome.execute_script("arguments[0].scrollIntoView({block: 'center'})", buttons[0])
        buttons[0].click()

    def modal(self, timeout: float = 15.0) -> Any:
        from selenium.webdriver.common.by import By

        return self.eventually(
            lambda: next(iter(self.chrome.find_elements(By.CSS_SELECTOR, "form.modal")), None),
            timeout,
            "a modal",
        )

    def set_live(self, live: bool) -> None:
        from selenium.webdriver.common.by import By

        box = self.chrome.find_element(By.ID, "live")
        if box.is_selected() != live:
            box.click()

    def screenshot(
        self, name: str, element: Callable[[], Any], *, focus: str | None = None
    ) -> list[Path]:
        """``SCREENS/<name>-<desktop|phone>.png``: ``element()`` at each width, scrolled
        (inside it) to what matches the CSS selector ``focus``, if given."""
        from selenium.common.exceptions import StaleElementReferenceException

        SCREENS.mkdir(parents=True, exist_ok=True)
        saved = []
        for label, width in WIDTHS.items():
            self.chrome.set_window_size(width, 1000)
            time.sleep(0.3)  # the layout settles (media queries, fonts)
            path = SCREENS / f"{name}-{label}.png"
            for attempt in range(1, 4):
                # The live page may redraw between finding the element and taking its picture
                # (a poll's refresh): found again, as a person's eyes would.
                try:
                    self._shoot(element(), focus, path)
                    break
                except StaleElementReferenceException:
                    if attempt == 3:
                        raise
                    time.sleep(0.2)
            saved.append(path)
        self.chrome.set_window_size(WIDTHS["desktop"], 1000)
        return saved

    def _shoot(self, shown: Any, focus: str | None, path: Path) -> None:
        self.chrome.execute_script("arguments[0].scrollIntoView({block: 'start'})", shown)
        if focus:
            self.chrome.execute_script(
                "const f = arguments[0].querySelector(arguments[1]);"
                "if (f) f.scrollIntoView({block: 'center'});",
                shown,
                focus,
            )
        shown.screenshot(str(path))
