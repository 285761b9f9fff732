"""Wake-up signals and inboxes (kandev_slack/core/signals.py)."""

from __future__ import annotations

import threading

from kandev_slack.core.signals import Inbox, Signal


def test_an_inbox_hands_over_every_item_once_in_order_and_wakes_its_worker() -> None:
    wakes = Signal("worker")
    inbox: Inbox[str] = Inbox("new bundles", wakes=wakes)

    threads = [threading.Thread(target=inbox.put, args=(f"p{n}",)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert wakes.take()
    assert sorted(inbox.drain()) == sorted(f"p{n}" for n in range(20))
    assert inbox.drain() == []
    inbox.put("a")
    inbox.put("b")
    assert inbox.drain() == ["a", "b"]
