"""The agent going on after an answer: once a card is answered, what its agent said next in
Kandev (its newest message after the question), for the page to show under the card.

Slack shows no such line (the card says who answered what); the page marks it as the
preview's own, read from Kandev, so that a person trying the preview sees the answer reach the
agent and the agent carry on, as the README promises."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence

from kandev_slack.core.domain import CardState
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevError
from kandev_slack.kandev.models import SessionMessage
from kandev_slack.kits.fakeslack import FakeSlack
from kandev_slack.store.cards.cards import CardsRepository

log = logging.getLogger("kandev_slack.preview.going_on")
EVERY_S = 1.5
#: How long after a card is first seen answered the agent's newest message is looked for.
FOLLOW_S = 60.0
#: How often a card neither answered nor edited since is looked at again.
RELOOK_S = 5.0
#: How many of the session's last messages are read (the question is among the last).
LAST_MESSAGES = 50
QUESTION_TYPE = "clarification_request"


def said_next(messages: Sequence[SessionMessage], pending_id: str) -> str | None:
    """What the agent said since its question ``pending_id``: its newest message created
    after it (None: nothing yet). A message Kandev began before the question is not it, even
    where the list puts it after the question."""
    asked = [
        (i, m)
        for i, m in enumerate(messages)
        if m.type == QUESTION_TYPE and (m.metadata or {}).get("pending_id") == pending_id
    ]
    if not asked:
        return None
    at, question = asked[-1]
    said = [
        m.content.strip()
        for m in messages[at + 1 :]
        if m.author_type == "agent"
        and m.type in ("message", "")
        and m.content.strip()
        and not (m.created_at and question.created_at and m.created_at <= question.created_at)
    ]
    return said[-1] if said else None


class AgentGoingOn:
    """Looks every :data:`EVERY_S` seconds at the answered cards of ``channels`` whose agent
    has not been heard from since; ``said`` maps (channel, ts) to what the agent said next."""

    def __init__(
        self,
        fake: FakeSlack,
        cards: CardsRepository,
        kandev: KandevClient,
        channels: Callable[[], Iterable[str]],
        changed: Callable[[], None],
        every: float = EVERY_S,
    ) -> None:
        self.fake = fake
        self.cards = cards
        self.kandev = kandev
        self.channels = channels
        self.every = every
        self.said: dict[tuple[str, str], str] = {}
        self._since: dict[tuple[str, str], float] = {}  # when each card was seen answered
        #: A card not answered when last looked at: its edits then, and when to look again.
        self._looked: dict[tuple[str, str], tuple[int, float]] = {}
        self._changed = changed
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def check(self) -> None:
        for channel in self.channels():
            for message in self.fake.messages(channel):
                where = (channel, message.ts)
                if not message.bot_id or message.thread_ts not in (None, message.ts):
                    continue
                answered_at = self._since.get(where)
                if answered_at is not None and time.monotonic() - answered_at > FOLLOW_S:
                    continue  # its agent had its minute
                edits, now = len(message.versions), time.monotonic()
                looked = self._looked.get(where)
                if answered_at is None and looked and looked[0] == edits and now < looked[1]:
                    continue  # not answered when last looked at, not edited since, not long ago
                self._looked[where] = (edits, now + RELOOK_S)
                card = self.cards.by_message(channel, message.ts)
                if card is None or card.state is not CardState.ANSWERED or not card.session_id:
                    continue
                self._since.setdefault(where, time.monotonic())
                try:
                    messages = self.kandev.session_messages(card.session_id, limit=LAST_MESSAGES)
                except KandevError as problem:
                    log.debug("the agent's messages could not be read: %s", problem)
                    return
                said = said_next(messages.messages, card.pending_id)
                if said and said != self.said.get(where):
                    self.said[where] = said
                    self._changed()

    def start(self) -> AgentGoingOn:
        self._thread = threading.Thread(target=self._run, name="preview-agent-going-on")
        self._thread.daemon = True
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.check()
            except Exception:  # the page goes on without it; the next look may do better
                log.exception("the preview could not look at what the agents said next")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
