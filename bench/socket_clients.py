"""Socket Mode clients under faults.

``python -m bench.socket_clients builtin|websocket_client|aiohttp|ours`` (``SKIP=silent``: leave
out the steps whose name holds that word)

Each client is connected to the fake Slack's Socket Mode server with a listener that acks every
envelope at once, then the faults of issue 19 (items 10, 13, 14) are injected one by one and
timed: how long until a new link is greeted after a cut / a close / a silent link / a link
that never says hello, the CPU burnt meanwhile, whether a 2 MB envelope, the envelope after a
non-UTF-8 text frame, and envelopes during a refresh are acked, and how late.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient
from slack_sdk.socket_mode.response import SocketModeResponse

from kandev_slack.kits.fakeslack import FakeSlack, NoAck, ScriptedResponse

CAP_S = 70.0


def make_client(kind: str, fake: FakeSlack) -> Any:
    web = WebClient(base_url=fake.api_url)
    token = fake.workspace.app_token
    if kind == "builtin":
        from slack_sdk.socket_mode.builtin import SocketModeClient

        client: Any = SocketModeClient(token, web_client=web)
    elif kind == "websocket_client":
        from slack_sdk.socket_mode.websocket_client import SocketModeClient as WsClient

        client = WsClient(token, web_client=web)
    elif kind == "aiohttp":
        return AsyncClient(fake)
    else:
        from kandev_slack.ops.health import Health
        from kandev_slack.slack.transport.socket_link import SocketLinks

        client = SocketLinks(token, web, Health(), workers=4)

    def ack(c: Any, req: Any) -> None:
        c.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))

    client.socket_mode_request_listeners.append(ack)
    return client


class AsyncClient:
    """slack_sdk's aiohttp client (an asyncio app's) on a loop of its own thread, acking."""

    def __init__(self, fake: FakeSlack) -> None:
        import asyncio
        import threading

        from slack_sdk.socket_mode.aiohttp import SocketModeClient as AioClient
        from slack_sdk.web.async_client import AsyncWebClient

        self._asyncio = asyncio
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

        async def make() -> Any:
            web = AsyncWebClient(base_url=fake.api_url)
            return AioClient(fake.workspace.app_token, web_client=web)

        self.client = self._run(make())

        async def ack(c: Any, req: Any) -> None:
            await c.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))

        self.client.socket_mode_request_listeners.append(ack)
        self.socket_mode_request_listeners: list[Any] = []

    def _run(self, coro: Any) -> Any:
        return self._asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def connect(self) -> None:
        self._run(self.client.connect())

    def close(self) -> None:
        self._run(self.client.close())


def reconnect_after(fake: FakeSlack, fault: Callable[[], None]) -> tuple[float, float]:
    """Seconds from the fault to the next greeted link, and the CPU seconds spent meanwhile."""
    opened = fake.socket.connections_opened
    cpu, start = time.process_time(), time.monotonic()
    fault()
    try:
        fake.socket.wait_for("connections_opened", opened + 1, CAP_S)
    except TimeoutError:
        return float("inf"), time.process_time() - cpu
    return time.monotonic() - start, time.process_time() - cpu


def acked(fake: FakeSlack, payload: dict, timeout: float = 10.0, link: int = -1) -> str:
    try:
        ack = fake.socket.send_envelope("interactive", payload, timeout=timeout, link=link)
    except NoAck:
        return "LOST"
    return f"{ack.elapsed:.2f}s"


def refresh(fake: FakeSlack, slow_open: bool) -> str:
    """A ``disconnect`` (refresh_requested): the ack of an envelope on the old link right away
    (apps.connections.open slow), or on the new link right after its hello (fast)."""
    small = {"type": "block_actions", "n": 1}
    opened = fake.socket.connections_opened
    if slow_open:
        fake.faults.script("apps.connections.open", ScriptedResponse(delay=6))
    fake.socket.send_disconnect()
    if slow_open:
        return acked(fake, small, link=0)
    fake.socket.wait_for("connections_opened", opened + 1, 20)
    return acked(fake, small, link=-1)


def steps(fake: FakeSlack) -> list[tuple[str, Callable[[], str]]]:
    small = {"type": "block_actions", "n": 1}
    big = {"type": "block_actions", "pad": "x" * 2_000_000}

    def after_bad_frame() -> str:
        fake.socket.send_raw(b'{"type": "\xff\xfe"}')
        return acked(fake, small)

    def fault(do: Callable[[], None]) -> Callable[[], str]:
        def run() -> str:
            wall, cpu = reconnect_after(fake, do)
            return f"{wall:.1f}s (cpu {cpu:.1f}s)"

        return run

    return [
        ("10 cut TCP (no close frame): reconnected", fault(fake.socket.drop_connections)),
        ("10 close frame, no disconnect: reconnected", fault(fake.socket.close_connections)),
        ("10 silent link: reconnected", fault(fake.socket.silence_links)),
        ("13 2 MB envelope acked", lambda: acked(fake, big)),
        ("13 the envelope after it", lambda: acked(fake, small)),
        ("13 envelope after a non-UTF-8 frame", after_bad_frame),
        ("13 the next envelope", lambda: acked(fake, small)),
        ("14 refresh, slow open: old link ack", lambda: refresh(fake, True)),
        ("14 refresh, fast open: new link ack", lambda: refresh(fake, False)),
        ("13 link without hello", lambda: no_hello(fake)),
    ]


def measure(kind: str) -> None:
    with FakeSlack() as fake:
        fake.socket.relayed = True
        client = make_client(kind, fake)
        client.connect()
        fake.socket.wait_for_connection(1, 10)
        skip = os.environ.get("SKIP", "")
        for name, step in steps(fake):
            if skip and skip in name:
                continue
            try:
                value = step()
            except Exception as exc:  # a step that breaks the client: say so, go on
                value = f"FAILED ({type(exc).__name__}: {exc})"
            print(f"{kind:17} {name:44} {value}", flush=True)
            time.sleep(2)
            try:
                fake.socket.wait_for_connection(1, 30)
            except TimeoutError:
                print(f"{kind:17} no link any more: stopping", flush=True)
                break
        client.close()


def no_hello(fake: FakeSlack) -> str:
    """How long a link that never says hello is kept before a new URL is asked for."""
    fake.socket.greet = False
    accepted = fake.socket.accepted
    fake.socket.close_connections()
    try:
        fake.socket.wait_for("accepted", accepted + 1, 30)
        start = time.monotonic()
        fake.socket.wait_for("accepted", accepted + 2, 30)
        return f"asked for a new URL after {time.monotonic() - start:.1f}s"
    except TimeoutError:
        return "kept the link (> 30 s)"
    finally:
        fake.socket.greet = True


def main() -> None:
    measure(sys.argv[1] if len(sys.argv) > 1 else "builtin")


if __name__ == "__main__":
    main()
