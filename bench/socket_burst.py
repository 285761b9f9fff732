"""Socket Mode envelopes sent from a process of its own, timed there (Socket Mode's burst.py).

Under a crowd the benchmark's own process runs the fake Slack's Web API, answering the bot's 50
``chat.update`` calls, ephemerals and response_url posts while the people's clicks are out.
Sent and timed from there, an envelope's ack would include that process's waits for its
interpreter: the ack's frame is read, and stamped, only when a thread of that busy process gets
to it. So for the crowd's Socket Mode rounds the bot links to this process instead (the fake's
``apps.connections.open`` hands out its URL): it greets every link as Slack does (``hello``),
then sends each burst it is given, envelope *n* of *N* at t0 + n·window/N from a thread of its
own, and stamps each ack the moment its frame is read.

Protocol: the app's id is the one argument (its links are greeted with it). The first line on
stdout is ``{"url": ws-url}``. Each line on stdin is a burst, ``{"window": s, "envelopes":
[envelope, …]}`` (Slack's envelope JSON); for each, one line on stdout: a list of ``{"sent_at",
"elapsed", "payload", "error"}`` in order (``sent_at``: time.time() just before the frame went;
``elapsed``: seconds from then to the ack's arrival; ``payload``: the ack's). End of stdin: the
links are closed and the process ends.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

from bench.burst import SWITCH_INTERVAL_S, TIMEOUT_S, spread

#: How long an envelope waits for its ack (Slack's own limit is 3 s; the crowd waits longer
#: so that a slow ack is measured, not lost).
ACK_TIMEOUT_S = 30.0


def hello(app_id: str) -> dict[str, Any]:
    """Slack's greeting on a new link, naming the app it is for."""
    return {
        "type": "hello",
        "num_connections": 1,
        "debug_info": {"host": "applink-bench-1", "build_number": 1},
        "connection_info": {"app_id": app_id},
    }


@dataclass
class Acked:
    sent_at: float = 0.0
    elapsed: float | None = None
    payload: Any = None
    error: str = ""


class Links:
    """The links the app made to this process, and the acks read on them."""

    def __init__(self, app_id: str) -> None:
        self._hello = json.dumps(hello(app_id))
        self._cond = threading.Condition()
        self._open: list[ServerConnection] = []
        self._acks: dict[str, tuple[float, dict[str, Any]]] = {}
        self._waiting: dict[str, threading.Event] = {}

    def handle(self, conn: ServerConnection) -> None:
        conn.send(self._hello)
        with self._cond:
            self._open.append(conn)
            self._cond.notify_all()
        try:
            for raw in conn:
                self._read(raw)
        except ConnectionClosed:
            pass
        finally:
            with self._cond:
                self._open.remove(conn)

    def _read(self, raw: str | bytes) -> None:
        at = time.monotonic()  # the ack's arrival, before anything else of ours
        try:
            message = json.loads(raw)
        except ValueError:
            return
        eid = message.get("envelope_id") if isinstance(message, dict) else None
        if not isinstance(eid, str):
            return
        with self._cond:
            self._acks[eid] = (at, message)
            event = self._waiting.pop(eid, None)
        if event is not None:
            event.set()

    def close(self) -> None:
        with self._cond:
            links = list(self._open)
        for conn in links:
            conn.close()

    def _link(self, timeout: float) -> ServerConnection:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._open:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("no Socket Mode link")
                self._cond.wait(remaining)
            return self._open[-1]

    def send(self, envelope: dict[str, Any], out: Acked) -> None:
        eid = str(envelope["envelope_id"])
        event = threading.Event()
        with self._cond:
            self._waiting[eid] = event
        text = json.dumps(envelope)
        try:
            conn = self._link(ACK_TIMEOUT_S)
            out.sent_at, began = time.time(), time.monotonic()
            conn.send(text)
        except (TimeoutError, ConnectionClosed, OSError) as exc:
            out.error = f"{type(exc).__name__}: {exc}"
            return
        if not event.wait(ACK_TIMEOUT_S):
            out.error = f"NoAck: envelope {eid} was not acknowledged within {ACK_TIMEOUT_S}s"
            return
        with self._cond:
            at, message = self._acks.pop(eid)
        out.elapsed = at - began
        out.payload = message.get("payload")


def _burst(links: Links, window: float, envelopes: list[dict[str, Any]]) -> list[Acked]:
    results = [Acked() for _ in envelopes]
    spread(
        len(envelopes),
        window,
        lambda n: links.send(envelopes[n], results[n]),
        timeout=window + ACK_TIMEOUT_S + TIMEOUT_S,
    )
    return results


def main(argv: list[str]) -> int:
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    links = Links(app_id=argv[0])
    with serve(links.handle, "127.0.0.1", 0, compression=None, close_timeout=2) as server:
        threading.Thread(target=server.serve_forever, name="links", daemon=True).start()
        port = server.socket.getsockname()[1]
        print(json.dumps({"url": f"ws://127.0.0.1:{port}/link/"}), flush=True)
        for line in sys.stdin:
            job = json.loads(line)
            acked = _burst(links, float(job["window"]), list(job["envelopes"]))
            print(json.dumps([asdict(a) for a in acked]), flush=True)
        links.close()
        server.shutdown()
    return 0


class SocketBurst:
    """The process above, from the benchmark's side: :attr:`url` for the fake Slack to hand
    out, :meth:`send` a burst, :meth:`close` at the end of the round."""

    def __init__(self, app_id: str) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "bench.socket_burst", app_id],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            # A scheduling group of its own (Linux's autogroup), as bench/burst.py's.
            start_new_session=True,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._stdin, self._stdout = self._proc.stdin, self._proc.stdout
        first = self._stdout.readline()
        if not first:
            self.close()
            raise RuntimeError("bench.socket_burst ended before saying its URL")
        self.url = str(json.loads(first)["url"])

    @property
    def pid(self) -> int:
        return self._proc.pid

    def send(self, envelopes: list[dict[str, Any]], window: float) -> list[Acked]:
        self._stdin.write(json.dumps({"window": window, "envelopes": envelopes}) + "\n")
        self._stdin.flush()
        line = self._stdout.readline()
        if not line:
            raise RuntimeError(f"bench.socket_burst ended ({self._proc.poll()})")
        return [Acked(**item) for item in json.loads(line)]

    def close(self) -> None:
        try:
            self._stdin.close()
            self._proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self._proc.kill()
            self._proc.wait()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
