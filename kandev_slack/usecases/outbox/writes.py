"""The kinds of Slack writes the outbox makes, in one table: kind → how its call is built and what
is recorded once it went out (kandev_slack/usecases/outbox/publisher.py sends them all down one
path).

Each kind's plan reads the store's current state and returns a :class:`Write` (None: nothing to
write any more, e.g. a post already made by another replica): where it goes, how an earlier
attempt that reached Slack is recognised, how the message is rendered (its plain form when it
cannot be, or when Slack refuses it), the Slack call, and what is recorded afterwards.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from kandev_slack.config.routing import USER_ID
from kandev_slack.core.domain import Card, CardState
from kandev_slack.core.outbox import (
    COPY_REPLY,
    GATHER,
    GATHER_EDIT,
    NOT_SENT,
    POST,
    POST_COPY,
    POST_DIGEST,
    REPLY,
    SUMMARY,
    UPDATE,
    UPDATE_COPY,
    copy_update_key,
    is_group_edit,
    update_key,
)
from kandev_slack.core.snooze import Snooze
from kandev_slack.core.timing.quiet import MAX_LISTED, Listed, is_critical
from kandev_slack.ops import metrics
from kandev_slack.slack_api.errors import SlackError
from kandev_slack.slack_api.gateway import Message, SlackGateway
from kandev_slack.store.cards.copies import Copy, Gathering
from kandev_slack.store.records import OutboxEntry
from kandev_slack.usecases.audit import Audit
from kandev_slack.usecases.groups import GroupCards, GroupEdit, GroupLines, InThread
from kandev_slack.usecases.outbox.messages import (
    SnoozeLookup,
    card_message,
    copy_message,
    plain_message,
)
from kandev_slack.usecases.outbox.pacing import PaceOutbox

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Write:
    """One Slack write, built for an outbox item from the store's current state."""

    #: The channel whose pace a paced kind takes its turn in.
    channel: str
    #: The message, and whether it is the plain form already (Slack's refusal is then final).
    render: Callable[[], tuple[Message, bool]]
    #: The Slack call: the ts of the message written ("" for an edit).
    send: Callable[[Message], str]
    #: What is recorded once it went out, given that ts.
    done: Callable[[str], None]
    #: For a write an earlier attempt may have made (its item's last error proves nothing):
    #: look for it in Slack and record it; True if found (then nothing is sent).
    made_earlier: Callable[[], bool] | None = None
    #: Sent instead when Slack refuses the message itself (None: a refusal is final).
    plain: Callable[[], Message] | None = None


Plan = Callable[["Writes", Card, OutboxEntry], Write | None]
#: The plan of a write of no one card (a quiet-hours summary).
AlonePlan = Callable[["Writes", OutboxEntry], Write | None]


class Notices(Protocol):
    """How the writes of no one card read (kandev_slack.surfaces.quiet)."""

    def summary_message(
        self, listed: list[Listed], total: int, critical: int
    ) -> tuple[str, list[dict[str, Any]]]: ...

    def gather_message(self, total: int, critical: int) -> tuple[str, list[dict[str, Any]]]: ...


#: A DM card waits this long at most for its gathering DM's post, then comes on its own.
GATHER_WAIT_S = 300.0


class Later(Exception):
    """The write cannot go yet (a DM card waiting for its gathering DM's post): given back
    for ``wait_s``."""

    def __init__(self, wait_s: float) -> None:
        super().__init__(f"later: {wait_s}s")
        self.wait_s = wait_s


def _no_card(_writes: Writes, _card: Card, _item: OutboxEntry) -> Write | None:
    return None  # a write of no card is planned by its ``alone`` plan


@dataclass(frozen=True)
class Kind:
    """How the outbox handles one kind of item."""

    plan: Plan
    #: Taken in this order within a batch: edits go before posts; card posts before copies and
    #: replies (so reminders never delay a card's first post).
    rank: int
    #: Posts a message: paced per channel, and marked "posting" just before it is sent.
    paced: bool
    #: Waits for the channel card's post (unless the bundle is resolved by then).
    after_card: bool = False
    #: For a write of no one card: its plan (``plan`` is then never called).
    alone: AlonePlan | None = None


class Writes:
    """The plans of every kind (see :data:`KINDS`)."""

    def __init__(
        self,
        cards: WriteCards,
        outbox: WriteOutbox,
        audit_log: Audit,
        slack: SlackGateway,
        kandev_url: str,
        requeue: Requeue,
        forgotten: Forgotten,
        groups: GroupLines,
        snoozes: SnoozeLookup | None = None,
        notices: Notices | None = None,
    ) -> None:
        self.cards, self.outbox, self.audit_log = cards, outbox, audit_log
        self.snoozes = snoozes
        self.notices = notices
        self.slack, self.kandev_url, self.requeue = slack, kandev_url, requeue
        #: Cards a lost database forgot (kandev_slack/usecases/outbox/forgotten.py), for bundles
        #: older than this process.
        self.forgotten = forgotten
        #: The groups of identical questions a channel card shows
        #: (kandev_slack/usecases/answering/groups.py).
        self.groups = groups

    def audit_plain(self, card: Card, kind: str, why: str) -> None:
        self.audit_log.audit(card.pending_id, None, f"slack_{kind}", "bot", "plain", why)

    def _card(self, card: Card, kind: str) -> Callable[[], tuple[Message, bool]]:
        """The card as rendered, or its plain form when it cannot be (True: plain). The cards
        waiting in its thread are read now (a store error gives the write back for a retry,
        never a plain card)."""
        thread: InThread = self.groups.in_thread(card)

        def render() -> tuple[Message, bool]:
            try:
                shown = (thread.shown, thread.count)
                return card_message(card, self.kandev_url, in_thread=shown), False
            except Exception as exc:  # rendering is deterministic: retrying would fail again
                log.exception("card %s cannot be rendered; sending its plain form", card.pending_id)
                self.audit_plain(card, kind, f"cannot be rendered: {type(exc).__name__}")
                return plain_message(card, self.kandev_url), True

        return render

    def _copy(self, card: Card, copy: Copy, kind: str) -> Callable[[], tuple[Message, bool]]:
        def render() -> tuple[Message, bool]:
            try:
                snooze = self._snooze_of(card, copy)
                return copy_message(card, copy.note, self.kandev_url, copy, snooze), False
            except Exception as exc:  # rendering is deterministic: retrying would fail again
                log.exception("card %s cannot be rendered; sending its plain form", card.pending_id)
                self.audit_plain(card, kind, f"cannot be rendered: {type(exc).__name__}")
                return plain_message(card, self.kandev_url), True

        return render

    def _snooze_of(self, card: Card, copy: Copy) -> Snooze | None:
        """The snooze of the person whose DM ``copy`` is in, while it holds."""
        if self.snoozes is None or not USER_ID.match(copy.target) or card.state.terminal:
            return None
        return self.snoozes.active_snooze(copy.target, card.pending_id)

    def _plain(self, card: Card) -> Callable[[], Message]:
        return lambda: plain_message(card, self.kandev_url)

    # ---- the channel card ----------------------------------------------------------------

    def post(self, card: Card, item: OutboxEntry) -> Write | None:
        """Post the card: in its channel, or in the thread of the first identical item waiting
        there (kandev_slack/usecases/groups.py; :class:`WaitForFirst` while that one is not
        posted yet)."""
        if card.ts or self._forgotten(card):
            return None  # already posted (e.g. by another replica, or before a database loss)
        card = self._placed(card)
        thread = card.thread_ts

        def made_earlier() -> bool:
            oldest = (card.created_at - timedelta(minutes=1)).timestamp()
            found = self.slack.find_card(card.channel, card.pending_id, oldest, thread_ts=thread)
            if found:
                self._posted(card, found, rendered=None)
            return bool(found)

        def done(ts: str) -> None:
            if not self._posted(card, ts, rendered=card.state):
                self._duplicate(card.pending_id, card.channel, ts)
                return
            where = f"the thread of {card.thread_of}" if thread else "its channel"
            log.info("posted the card of %s in %s (%s)", card.pending_id, card.channel, where)

        return Write(
            channel=card.channel,
            render=self._card(card, POST),
            send=lambda message: self.slack.post_card(
                card.channel, message, card.pending_id, thread_ts=thread
            ),
            done=done,
            made_earlier=made_earlier,
            plain=self._plain(card),
        )

    def _placed(self, card: Card) -> Card:
        """``card`` with the thread it is posted in recorded: the first identical item waiting
        in its channel's (kept once recorded, for every later attempt); as it is when it is
        the first."""
        if card.thread_ts is not None:
            return card
        first = self.groups.first_of(card)
        if first is None:
            return card
        if not first.ts:
            raise WaitForFirst(first.pending_id)
        self.cards.set_thread(card.pending_id, first.pending_id, first.ts)
        placed = self.cards.get(card.pending_id)
        return placed if placed is not None else card

    def _forgotten(self, card: Card) -> bool:
        """Whether the card is in its channel already, posted before a database loss: then it
        is recorded (and edited once resolved), never posted again."""
        found = self.forgotten.find(card)
        if found:
            self._posted(card, found, rendered=None)  # edited if it no longer shows "pending"
        return bool(found)

    def _posted(self, card: Card, ts: str, *, rendered: CardState | None) -> bool:
        """Record ``ts`` as the card's message unless another one is recorded already (False).
        ``rendered``: the state the posted message shows (None: a card found in the channel,
        posted by a process that died before it could record it — most likely still pending)."""
        if not self.cards.mark_posted(card.pending_id, card.channel, ts):
            return False
        metrics.card_posted(card.item.created_at, kind=card.kind.value)
        posted = self.cards.get(card.pending_id)
        if posted is None:
            return True
        if posted.state is not CardState.PENDING and posted.state is not rendered:
            # Resolved while it was being posted: its edit was skipped as a no-op (the card had
            # no ts yet; possibly on another replica), so make sure the edit runs now.
            self.requeue.enqueue_update(posted)
            self.outbox.outbox_rearm(update_key(posted))
        else:
            # Posted in a thread: the first card's line counts it.
            self.requeue.enqueue_group(self.groups.edits_when_posted(posted))
        self.requeue.changed()
        return True

    def _duplicate(self, pending_id: str, channel: str, ts: str) -> None:
        """Another message is recorded for this one already: this replica's lease ran out while
        its call was in flight (it was frozen) and another replica posted it meanwhile. The
        recorded message is the card; this one is deleted, so no second card keeps buttons."""
        log.warning(
            "%s was posted by another replica while this one's post was in flight; "
            "deleting this replica's duplicate %s in %s",
            pending_id,
            ts,
            channel,
        )
        try:
            self.slack.delete_message(channel, ts)
        except SlackError as exc:
            log.error("could not delete the duplicate %s in %s: %s", ts, channel, exc.error)

    def update(self, card: Card, item: OutboxEntry) -> Write | None:
        ts = card.ts
        if not ts:
            return None  # the post renders the current state when it happens
        if card.state is not CardState.PENDING and is_group_edit(item.key or "", card.pending_id):
            return None  # its group changed while it waited; its outcome's own edit shows it

        def send(message: Message) -> str:
            self.slack.update_card(card.channel, ts, message, card.pending_id)
            return ts

        return Write(
            channel=card.channel,
            render=self._card(card, UPDATE),
            send=send,
            done=lambda _ts: self.requeue.changed(),
            plain=self._plain(card),
        )

    # ---- a bundle's other messages and thread replies -----------------------------------

    def post_copy(self, card: Card, item: OutboxEntry) -> Write | None:
        """Post one of the card's other messages (never for a bundle resolved by now)."""
        copy = self.cards.message_get(str(item.payload.get("key")))
        if copy is None or copy.ts or card.state.terminal:
            return None
        thread = self._thread_of(copy)
        channel = copy.channel
        if channel is None:
            channel = self.slack.open_dm(copy.target) if USER_ID.match(copy.target) else copy.target
            self.cards.message_opened(copy.key, channel)
        to = channel

        def made_earlier() -> bool:
            oldest = (copy.created_at - timedelta(minutes=1)).timestamp()
            found = self._find_copy(to, card.pending_id, oldest)
            if found:
                self.cards.message_posted(copy.key, to, found)
                self._copy_posted(card.pending_id, copy.key, rendered=None)
            return bool(found)

        def done(ts: str) -> None:
            if not self.cards.message_posted(copy.key, to, ts):
                self._duplicate(card.pending_id, to, ts)
                return
            log.info("posted the %s card of %s in %s", copy.kind, card.pending_id, to)
            self._copy_posted(card.pending_id, copy.key, rendered=card.state)

        return Write(
            channel=item.channel or to,
            render=self._copy(card, copy, POST_COPY),
            send=lambda message: self.slack.post_card(to, message, card.pending_id, thread),
            done=done,
            made_earlier=made_earlier if to != card.channel and thread is None else None,
            plain=self._plain(card),
        )

    def _thread_of(self, copy: Copy) -> str | None:
        """The ts of the gathering DM a DM card goes in the thread of (calm DMs); None: on
        its own. Raises :class:`Later` while that DM is not posted yet."""
        if copy.thread is None:
            return None
        gathering = self.cards.gather_get(copy.thread)
        if gathering is None:
            return None  # forgotten: the card comes on its own
        if gathering.ts is None:
            waited = (datetime.now(UTC) - gathering.created_at).total_seconds()
            if waited > GATHER_WAIT_S:
                return None  # its gathering DM could not be posted: the card comes on its own
            raise Later(1.0)
        return gathering.ts

    def _find_copy(self, channel: str, pending_id: str, oldest: float) -> str | None:
        """A copy already in ``channel``; a direct-message conversation cannot be read back
        (the app has no ``im:history``), so there a crash mid-post may show it twice."""
        if channel.startswith("D"):
            return None
        return self.slack.find_card(channel, pending_id, oldest)

    def _copy_posted(self, pending_id: str, key: str, *, rendered: CardState | None) -> None:
        """Like :meth:`_posted`, for one other message: resolved while it was being posted,
        it is edited now."""
        posted = self.cards.get(pending_id)
        copy = self.cards.message_get(key)
        if posted is None or copy is None:
            return
        if posted.state is not CardState.PENDING and posted.state is not rendered:
            self.requeue.enqueue_copy_update(posted, copy)
            self.outbox.outbox_rearm(copy_update_key(posted, copy.key))
        self.requeue.changed()

    def update_copy(self, card: Card, item: OutboxEntry) -> Write | None:
        copy = self.cards.message_get(str(item.payload.get("key")))
        if copy is None or not copy.ts or not copy.channel:
            return None  # its post renders the current state when it happens
        channel, ts = copy.channel, copy.ts

        def send(message: Message) -> str:
            self.slack.update_card(channel, ts, message, card.pending_id)
            return ts

        return Write(
            channel=channel,
            render=self._copy(card, copy, UPDATE_COPY),
            send=send,
            done=lambda _ts: None,
            plain=self._plain(card),
        )

    def reply(self, card: Card, item: OutboxEntry) -> Write | None:
        """A reply in the channel card's thread (for a card posted in another's thread, that
        thread); never once the bundle is resolved."""
        thread = card.thread_ts or card.ts
        if card.state.terminal or not thread:
            return None
        key, text = str(item.payload.get("key")), str(item.payload.get("text"))
        return Write(
            channel=card.channel,
            render=lambda: (Message(text=text, blocks=[]), True),
            send=lambda m: self.slack.post_reply(
                card.channel, thread, m.text, card.pending_id, key
            ),
            done=lambda _ts: log.info("replied in the thread of %s: %s", card.pending_id, key),
            made_earlier=lambda: bool(self.slack.find_reply(card.channel, thread, key)),
        )

    def copy_reply(self, card: Card, item: OutboxEntry) -> Write | None:
        """A reply in the thread of one of the card's other messages (a DM card); never
        once the bundle is resolved, nor before that message is posted."""
        copy = self.cards.message_get(str(item.payload.get("message")))
        if card.state.terminal or copy is None or not copy.ts or not copy.channel:
            return None
        channel, thread = copy.channel, copy.ts
        key, text = str(item.payload.get("key")), str(item.payload.get("text"))
        return Write(
            channel=channel,
            render=lambda: (Message(text=text, blocks=[]), True),
            send=lambda m: self.slack.post_reply(channel, thread, m.text, card.pending_id, key),
            done=lambda _ts: log.info(
                "replied in %s's thread of %s: %s", channel, card.pending_id, key
            ),
            made_earlier=lambda: bool(self.slack.find_reply(channel, thread, key)),
        )

    # ---- writes of no one card ---------------------------------------------------------

    def summary(self, item: OutboxEntry) -> Write | None:
        """The one summary of what waited for ``target``'s quiet hours: the items still
        waiting now (none: nothing is posted), each linking to its card."""
        notices = self.notices
        target = str(item.payload.get("target") or "")
        ids = [str(p) for p in item.payload.get("pending_ids") or []]
        waiting = [
            card
            for pending_id in dict.fromkeys(ids)
            if (card := self.cards.get(pending_id)) is not None and card.state is CardState.PENDING
        ]
        if notices is None or not target or not waiting:
            return None
        waiting.sort(key=lambda card: not is_critical(card.task.priority))
        critical = sum(1 for card in waiting if is_critical(card.task.priority))
        to = self.slack.open_dm(target) if USER_ID.match(target) else target

        def render() -> tuple[Message, bool]:
            # Each links to its card: a link Slack may give later (rate limited) raises, and
            # the summary is given back for Retry-After instead of going without it.
            listed = [
                Listed(
                    card.item.headline,
                    self.slack.permalink(card.channel, card.ts, strict=True) if card.ts else None,
                    is_critical(card.task.priority),
                )
                for card in waiting[:MAX_LISTED]
            ]
            text, blocks = notices.summary_message(listed, len(waiting), critical)
            return Message(text=text, blocks=blocks), True

        return Write(
            channel=to,
            render=render,
            send=lambda message: self.slack.post_notice(to, message),
            done=lambda _ts: log.info("posted the quiet-hours summary for %s", target),
        )

    def _gather_header(self, gathering: Gathering) -> Message:
        notices = self.notices
        assert notices is not None
        burst = self.cards.gather_burst(gathering)
        priorities = [
            card.task.priority
            for copy in burst
            if (card := self.cards.get(copy.pending_id)) is not None
        ]
        critical = sum(1 for priority in priorities if is_critical(priority))
        text, blocks = notices.gather_message(len(burst), critical)
        return Message(text=text, blocks=blocks)

    def gather(self, item: OutboxEntry) -> Write | None:
        """Post a gathering DM (its count as of now); its DM cards then go in its thread."""
        gathering = self.cards.gather_get(str(item.payload.get("key")))
        if gathering is None or gathering.ts or self.notices is None:
            return None
        to = gathering.channel or self.slack.open_dm(gathering.user_id)
        key = gathering.key

        def done(ts: str) -> None:
            if not self.cards.gather_posted(key, to, ts):
                self._duplicate(key, to, ts)
                return
            log.info("posted the gathering DM %s", key)

        return Write(
            channel=to,
            render=lambda: (self._gather_header(gathering), True),
            send=lambda message: self.slack.post_notice(to, message),
            done=done,
        )

    def gather_edit(self, item: OutboxEntry) -> Write | None:
        """Edit a gathering DM's count (before its post: its post shows the count then)."""
        gathering = self.cards.gather_get(str(item.payload.get("key")))
        if gathering is None or not gathering.ts or not gathering.channel or self.notices is None:
            return None
        channel, ts = gathering.channel, gathering.ts

        def send(message: Message) -> str:
            self.slack.update_notice(channel, ts, message)
            return ts

        return Write(
            channel=channel,
            render=lambda: (self._gather_header(gathering), True),
            send=send,
            done=lambda _ts: None,
        )

    # ---- messages of no card -------------------------------------------------------------

    def post_digest(self, item: OutboxEntry) -> Write | None:
        """A digest: its message was rendered when it was decided; a person's goes to their
        DM (which cannot be read back: a crash mid-post may show it twice, as a DM card)."""
        target = str(item.payload.get("target") or item.channel or "")
        if not target:
            return None
        to = self.slack.open_dm(target) if USER_ID.match(target) else target
        text = str(item.payload.get("text") or "")
        blocks = item.payload.get("blocks") or []
        message = Message(text=text, blocks=list(blocks))
        key = str(item.payload.get("key") or "")
        return Write(
            channel=item.channel or to,
            render=lambda: (message, False),
            send=lambda m: self.slack.post_notice(to, m),
            done=lambda _ts: log.info("posted the digest %s in %s", key, to),
            plain=lambda: Message(text=text, blocks=[]),
        )


class WaitForFirst(Exception):
    """The card goes in the thread of the first identical item's card, not posted yet: its
    post is given back to wait for it."""

    def __init__(self, first: str) -> None:
        super().__init__(f"waiting for the card of {first}")
        self.first = first


#: Every kind of outbox item.
KINDS: dict[str, Kind] = {
    POST: Kind(Writes.post, rank=1, paced=True),
    UPDATE: Kind(Writes.update, rank=0, paced=False),
    POST_COPY: Kind(Writes.post_copy, rank=2, paced=True, after_card=True),
    UPDATE_COPY: Kind(Writes.update_copy, rank=0, paced=False),
    REPLY: Kind(Writes.reply, rank=2, paced=True, after_card=True),
    COPY_REPLY: Kind(Writes.copy_reply, rank=2, paced=True),
    SUMMARY: Kind(_no_card, rank=2, paced=True, alone=Writes.summary),
    GATHER: Kind(_no_card, rank=1, paced=True, alone=Writes.gather),
    GATHER_EDIT: Kind(_no_card, rank=0, paced=False, alone=Writes.gather_edit),
    POST_DIGEST: Kind(_no_card, rank=3, paced=True, alone=Writes.post_digest),
}


def paced(kind: str) -> bool:
    return kind in KINDS and KINDS[kind].paced


def attempt_note(item: OutboxEntry) -> str:
    """Noted just before the Slack call: "posting" tells whoever takes a post over that it may
    have been made (it looks in Slack first)."""
    if paced(item.kind):
        return "posting"
    return item.last_error or "sending"


def retry_note(item: OutboxEntry, note: str) -> str:
    """The note an item is given back with."""
    if paced(item.kind) and note in NOT_SENT and item.last_error not in NOT_SENT:
        # An earlier take may have reached Slack (timeout, 5xx, crash): being paced or rate
        # limited now proves nothing about it, so keep the mark that makes the next take
        # look for the card in the channel before posting again.
        return item.last_error
    return note


# ------------------------------------------------------------------------------------------
# What the outbox's publisher and its writes call on the repositories: one narrow port per


class WriteCards(GroupCards, Protocol):
    """What the writes call on the cards and their other messages
    (kandev_slack.store.CardsRepository):
    a card, its messages, and its group of identical questions."""

    def mark_posted(self, pending_id: str, channel: str, ts: str) -> bool: ...

    def set_thread(self, pending_id: str, first: str, first_ts: str) -> bool: ...

    def message_get(self, key: str) -> Copy | None: ...

    def message_opened(self, key: str, channel: str) -> bool: ...

    def message_posted(self, key: str, channel: str, ts: str) -> bool: ...

    def gather_get(self, key: str) -> Gathering | None: ...

    def gather_posted(self, key: str, channel: str, ts: str) -> bool: ...

    def gather_burst(self, gathering: Gathering) -> list[Copy]: ...


class WriteOutbox(Protocol):
    """What the writes call on the outbox (kandev_slack.store.OutboxRepository)."""

    def outbox_rearm(self, key: str) -> bool: ...


class PublisherCards(WriteCards, Protocol):
    """What the publisher calls on the cards (kandev_slack.store.CardsRepository), besides its
    writes'."""

    def messages_of(self, pending_id: str) -> list[Copy]: ...


class PublisherOutbox(WriteOutbox, PaceOutbox, Protocol):
    """What the publisher calls on the outbox and the per-channel pace
    (kandev_slack.store.OutboxRepository), besides its writes'."""

    def outbox_put(
        self,
        kind: str,
        key: str | None,
        payload: dict[str, Any],
        channel: str | None = None,
        not_before: datetime | None = None,
        *,
        delay_s: float = 0.0,
    ) -> int | None: ...

    def outbox_absorb(self, key_prefix: str, besides: int, worker_id: str) -> list[int]: ...

    def outbox_take(
        self,
        now: datetime | None,
        limit: int,
        worker_id: str,
        lease_s: float = 30.0,
        kinds: Collection[str] | None = None,
    ) -> list[OutboxEntry]: ...

    def outbox_next_due_s(self, *, leased: bool = False) -> float | None: ...

    def outbox_done(self, entry_id: int, *, worker_id: str | None = None) -> bool: ...

    def outbox_fail(self, entry_id: int, error: str, *, worker_id: str | None = None) -> bool: ...

    def outbox_retry(
        self,
        entry_id: int,
        not_before: datetime | float,
        error: str,
        *,
        worker_id: str | None = None,
        slot: bool = False,
        holding: datetime | None = None,
    ) -> bool: ...

    def outbox_note(self, entry_id: int, note: str, *, worker_id: str | None = None) -> bool: ...

    def outbox_failed_count(self, within_s: float | None = None) -> int: ...


class Forgotten(Protocol):
    """Where a post an earlier attempt may have made is looked for in Slack
    (kandev_slack.usecases.outbox.forgotten.ForgottenCards)."""

    def find(self, card: Card) -> str | None: ...


class Requeue(Protocol):
    """The outbox's front (kandev_slack.usecases.outbox.publisher.Enqueue), for the edits a
    write finds it must make after all."""

    def enqueue_update(self, card: Card, *, reason: str = "") -> None: ...

    def enqueue_copy_update(self, card: Card, copy: Copy, reason: str = "") -> None: ...

    def enqueue_group(self, edits: Sequence[GroupEdit]) -> None: ...

    def changed(self) -> None: ...
