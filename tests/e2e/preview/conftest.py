"""The preview (``kandev-slack preview``'s parts, in this process) on the shared real Kandev,
and one headless chromium for the module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kandev_slack.preview.app import Preview, PreviewOptions
from tests.e2e.preview.browser import PreviewPage, start_chromium
from tests.kit.harness import KandevServer


@pytest.fixture(scope="module")
def chrome() -> Iterator[Any]:
    browser = start_chromium()
    yield browser
    browser.quit()


@pytest.fixture(scope="module")
def preview(kandev: KandevServer) -> Iterator[Preview]:
    env = {"KANDEV_URL": kandev.base_url, "KANDEV_POLL_INTERVAL": "2"}
    options = PreviewOptions(port=0, follow_ups=False)
    with Preview(env, options) as running:
        yield running


@pytest.fixture
def page(chrome: Any, preview: Preview) -> PreviewPage:
    return PreviewPage(chrome, preview.url)
