"""Helpers of the triage end-to-end tests (tests/e2e/test_triage_*.py): run the slash command,
read the listing it answered with, read the Home tab's two sections."""

from __future__ import annotations

import re
import time

from kandev_slack.cards.ids import ButtonValue
from kandev_slack.kits.fakeslack import (
    ALICE,
    Ephemeral,
    FakeSlack,
    SlackDriver,
    SlackUser,
    ViewRecord,
    blocks_text,
)
from tests.kit.harness import CHANNEL, KandevServer

COMMAND = "/kandev-questions"
_TITLE = re.compile(r"\*<https://kandev\.example\.test/t/[^|>]+\|([^>]+)>\*")


def answer_value(pending_id: str) -> str:
    """The value of a bundle's "Answer…" button in the listing and on Home."""
    return ButtonValue(pending_id=pending_id).encode()


def newest_reply(fake: FakeSlack, user: str, after: int, timeout: float = 10.0) -> Ephemeral:
    """The first ephemeral for ``user`` after the first ``after``."""

    def find() -> Ephemeral | None:
        fresh = fake.ephemerals(user=user)[after:]
        return fresh[0] if fresh else None

    return fake.wait_for(find, timeout, f"a listing for {user}")


def run_list(
    driver: SlackDriver, text: str = "", *, user: SlackUser = ALICE, timeout: float = 10.0
) -> Ephemeral:
    """Run ``/kandev-questions text`` in the questions channel; the answer the person sees."""
    fake = driver.fake
    seen = len(fake.ephemerals(user=user.id))
    ack = driver.slash(COMMAND, text, user=user, channel=CHANNEL)
    assert ack.status == 200, ack
    assert ack.elapsed < 3.0, ack.elapsed
    return newest_reply(fake, user.id, seen, timeout)


def titles(text: str) -> list[str]:
    """The task titles a listing or Home section shows, in order."""
    return _TITLE.findall(text)


def home_sections(view: ViewRecord) -> tuple[str, str]:
    """The Home tab's text: ("Waiting for an answer" part, "Recently resolved" part)."""
    text = blocks_text(view.blocks)
    waiting, _, resolved = text.partition("Recently resolved")
    return waiting, resolved


def wait_home(fake: FakeSlack, user: str, predicate, timeout: float = 10.0) -> ViewRecord:
    """The user's Home tab once ``predicate(view)`` holds."""

    def find() -> ViewRecord | None:
        view = fake.home(user)
        return view if view is not None and predicate(view) else None

    try:
        return fake.wait_for(find, timeout, f"the Home tab of {user}")
    except TimeoutError as exc:
        view = fake.home(user)
        shown = blocks_text(view.blocks) if view else None
        raise AssertionError(f"Home of {user} never matched; it shows:\n{shown}") from exc


def wait_kandev_idle(server: KandevServer, timeout: float = 15.0) -> None:
    """Until Kandev lists no waiting bundle (earlier tests' tasks are deleted at teardown)."""
    deadline = time.monotonic() + timeout
    while server.list_pending():
        assert time.monotonic() < deadline, "Kandev still lists bundles of earlier tests"
        time.sleep(0.2)
