"""bench/socket_burst.py: a Socket Mode server in a process of its own that greets an app's
link (with the app's own id), sends a burst of envelopes over a window and times each ack from
its send."""

from __future__ import annotations

import json
import threading
import time

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from bench.socket_burst import SocketBurst

HOLD_S = 0.2
APP_ID = "A0BENCHAPP7"


def _app(url: str, seen: list[dict], ready: threading.Event) -> None:
    """An app on one link: acks every envelope HOLD_S after it came, echoing its payload."""
    with connect(url) as link:
        hello = json.loads(link.recv(timeout=10))
        assert hello["type"] == "hello"
        assert hello["connection_info"] == {"app_id": APP_ID}  # the app it was started for
        ready.set()
        while True:
            try:
                envelope = json.loads(link.recv(timeout=10))
            except (TimeoutError, ConnectionClosed):  # the burst's process closed the link
                return
            seen.append(envelope)
            time.sleep(HOLD_S)
            reply = {
                "envelope_id": envelope["envelope_id"],
                "payload": {"n": envelope["payload"]["n"]},
            }
            link.send(json.dumps(reply))


def test_a_burst_is_sent_over_its_window_and_each_ack_timed_from_its_send() -> None:
    links = SocketBurst(APP_ID)
    seen: list[dict] = []
    ready = threading.Event()
    app = threading.Thread(target=_app, args=(links.url, seen, ready), daemon=True)
    try:
        app.start()
        assert ready.wait(10)
        envelopes = [
            {
                "envelope_id": f"e{n}",
                "type": "interactive",
                "payload": {"n": n},
                "accepts_response_payload": False,
            }
            for n in range(4)
        ]
        acked = links.send(envelopes, window=0.6)
    finally:
        links.close()
    assert [e["envelope_id"] for e in seen] == ["e0", "e1", "e2", "e3"]
    assert [a.payload for a in acked] == [{"n": n} for n in range(4)]
    assert all(a.error == "" and a.elapsed is not None and a.elapsed >= HOLD_S for a in acked)
    sent = [a.sent_at for a in acked]
    assert sent == sorted(sent) and sent[-1] - sent[0] >= 0.4  # spread over the window
