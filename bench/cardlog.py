"""What the bot did in a fake Slack, read from its recorded Web API calls: which bundle each
successful ``chat.postMessage`` was for (the card's metadata names it), duplicates, 429s, and
the edits (``chat.update``) of each message. Times are the fake's ``CallRecord.at``."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Collection

from kandev_slack.kits.fakeslack import CallRecord, FakeSlack


def _pending_id(call: CallRecord) -> str | None:
    metadata = call.params.get("metadata")
    if not isinstance(metadata, dict):
        return None
    payload = metadata.get("event_payload") or {}
    value = payload.get("pending_id") if isinstance(payload, dict) else None
    return value if isinstance(value, str) else None


class CardLog:
    def __init__(self, fake: FakeSlack) -> None:
        self.fake = fake
        self.cursor = fake.mark()
        self.posts: dict[str, CallRecord] = {}  # first successful post per bundle
        self.post_counts: Counter[str] = Counter()
        self.rate_limited = 0
        self.updates: dict[tuple[str, str], list[CallRecord]] = defaultdict(list)

    def pump(self, wait: float = 0.0) -> None:
        """Index the calls that arrived since last time (waiting up to ``wait`` for one)."""
        state = self.fake.state
        if wait > 0:
            try:
                self.fake.wait_for(lambda: len(state.calls) > self.cursor, wait)
            except TimeoutError:
                return
        with state.lock:
            fresh = state.calls[self.cursor :]
            self.cursor += len(fresh)
        for call in fresh:
            if call.method == "chat.postMessage":
                if call.status == 429:
                    self.rate_limited += 1
                elif call.ok and (pending_id := _pending_id(call)):
                    self.post_counts[pending_id] += 1
                    self.posts.setdefault(pending_id, call)
            elif call.method == "chat.update" and call.ok:
                key = (str(call.params.get("channel")), str(call.params.get("ts")))
                self.updates[key].append(call)

    def card(self, pending_id: str) -> tuple[str, str]:
        """(channel, ts) of the bundle's card."""
        response = self.posts[pending_id].response
        return str(response["channel"]), str(response["ts"])

    def wait_posted(self, pending_ids: Collection[str], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            self.pump()
            if all(p in self.posts for p in pending_ids):
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.pump(wait=min(remaining, 1.0))

    def wait_edit(self, pending_id: str, since: float, timeout: float) -> CallRecord | None:
        """The first edit of the bundle's card made at or after ``since`` (time.time())."""
        key = self.card(pending_id)
        deadline = time.monotonic() + timeout
        while True:
            self.pump()
            found = next((c for c in self.updates.get(key, []) if c.at >= since), None)
            if found is not None:
                return found
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.pump(wait=min(remaining, 1.0))

    def duplicates(self) -> int:
        return sum(count - 1 for count in self.post_counts.values() if count > 1)
