"""The hints listener's reconnect back-off, in real time against a local /ws: each test watches
the listener for seconds (moved out of tests/unit/kandev/test_hints.py: real sockets and sleeps)."""

from __future__ import annotations

import time

from websockets.sync.server import ServerConnection

from kandev_slack.kandev.hints import KandevHints
from tests.kit.fakews import FakeWs


def _drop_at_once(ws: ServerConnection) -> None:
    ws.close()


def test_a_link_dropped_right_after_subscribing_backs_off_no_reconnect_storm():
    """Accepts, answers the subscribe, drops at once, forever: the delay between attempts
    keeps growing (it was reset at every subscribe: ~20 reconnects a second)."""
    server = FakeWs([_drop_at_once] * 1000)
    hints = KandevHints(
        f"http://127.0.0.1:{server.port}",
        None,
        lambda hint: None,
        lambda: None,
        lambda: None,
        backoff_initial=0.05,
        backoff_max=10.0,
    )
    try:
        hints.start()
        time.sleep(2.5)  # 0.05 + 0.1 + 0.2 + 0.4 + 0.8 (+ jitter) ≈ 1.6 s: about 6 attempts
        assert 2 <= len(server.connections) <= 8
    finally:
        hints.stop()
        server.close()


def test_a_link_that_stayed_up_resets_the_backoff():
    def held(ws: ServerConnection) -> None:
        time.sleep(0.15)
        ws.close()

    server = FakeWs([held] * 1000)
    hints = KandevHints(
        f"http://127.0.0.1:{server.port}",
        None,
        lambda hint: None,
        lambda: None,
        lambda: None,
        backoff_initial=0.05,
        backoff_max=10.0,
        stable_after=0.1,
    )
    try:
        hints.start()
        # each link up 0.15 s ≥ stable_after, then 0.05 s apart: ~20 links in 4 s (5 if the
        # delay kept doubling)
        time.sleep(4)
        assert len(server.connections) >= 8
    finally:
        hints.stop()
        server.close()
