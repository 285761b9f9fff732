"""Issue 19 item 9: a /ws that accepts, answers the subscribe and drops at once never makes the
bot read Kandev's whole active list at every reconnect: reconnect-triggered full reads are at
most one per poll interval (the back-off itself: tests/integration/kandev/test_hints_backoff.py).

The bot runs as a process against the real Kandev, through a front (``WsSplit``) that sends its
/ws to a scripted one that drops every link at once; its list requests are counted by its own
``kandev_slack_kandev_requests_total{call="mcp list_pending_questions_kandev"}``.
"""

from __future__ import annotations

import time

import pytest
from websockets.sync.server import ServerConnection

from tests.e2e.helpers import start_bot
from tests.kit.fakews import FakeWs, WsSplit
from tests.unit.ops.metrics_doc import scrape, value

LIST_CALL = "mcp list_pending_questions_kandev"
POLL_S = 20.0
WATCH_S = 12.0


def _drop_at_once(ws: ServerConnection) -> None:
    ws.close()


def _list_reads(bot) -> float:
    metrics = scrape(f"http://127.0.0.1:{bot.port}/metrics")
    return value(metrics, "kandev_slack_kandev_requests_total", call=LIST_CALL)


@pytest.mark.fault("a /ws that drops every link at once", guarantee=2)
def test_a_ws_that_drops_at_once_never_triggers_a_full_read_per_reconnect(
    bot_factory, kandev, reliability
) -> None:
    ws = FakeWs([_drop_at_once] * 1000)
    front = WsSplit(ws.port, kandev.port)
    try:
        bot = start_bot(bot_factory, KANDEV_URL=front.base_url, KANDEV_POLL_INTERVAL=str(POLL_S))
        time.sleep(1.0)  # the first poll and the first connect's read are done
        before, links_before = _list_reads(bot), len(ws.connections)
        time.sleep(WATCH_S)  # well within one poll interval: no regular poll falls in it
        reads, links = _list_reads(bot) - before, len(ws.connections) - links_before

        assert links >= 2, links  # the storm happened: 0.5 s, 1 s, 2 s, 4 s… apart
        # At most one reconnect-triggered read per poll interval: within WATCH_S < POLL_S,
        # at most one more (it was one per reconnect).
        assert reads <= 1, (reads, links)
        assert bot.health()[0] == 200
    finally:
        front.close()
        ws.close()
    reliability.record(
        "a /ws that drops every link at once",
        survived=True,
        detail=f"{links} reconnects, {int(reads)} full reads",
    )
