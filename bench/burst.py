"""A burst of HTTP requests sent from a process of its own, timed there.

The benchmark's own process runs the fake Slack: under a crowd it answers the bot's 50
``chat.update`` calls, ephemerals and response_url posts while the people's requests are out.
Timed from threads of that process, an ack would include the wait for that process's
interpreter (its GIL), not only the bot's. So the people's requests (and the floor's bare calls
of Kandev) are prepared here, then sent and timed by ``python -m bench.burst`` — a process that
does nothing else: request *n* of *N* leaves at t0 + n·window/N, each from a thread of its own on
a connection of its own.

Input (stdin, JSON): ``{"window": s, "requests": [{"url", "body", "headers", "warm_url"}]}``
(``body`` as text; ``warm_url``: a GET sent first on the same connection, outside the timing).
Output (stdout, JSON): one ``{"sent_at", "elapsed", "status", "body", "error"}`` per request, in
order (``sent_at``: time.time() when it left; ``elapsed``: seconds to the whole response).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

#: The sender's own interpreter switches threads this often (10 times CPython's own rate): a
#: thread whose response has arrived is not kept waiting for another thread's work.
SWITCH_INTERVAL_S = 0.0005
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Request:
    url: str
    body: str
    headers: dict[str, str] = field(default_factory=dict)
    warm_url: str = ""  # GET first on the same connection (a warmed-up client), untimed


@dataclass
class Sent:
    sent_at: float = 0.0
    elapsed: float | None = None
    status: int = 0
    body: Any = None
    error: str = ""


def send(requests: list[Request], window: float) -> list[Sent]:
    """Send ``requests`` as a burst over ``window`` seconds from a process of its own."""
    if not requests:
        return []
    job = json.dumps({"window": window, "requests": [asdict(r) for r in requests]})
    proc = subprocess.run(
        [sys.executable, "-m", "bench.burst"],
        input=job,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S * 2 + window,
        check=False,
        # A session of its own is a scheduling group of its own (Linux's autogroup): the fake
        # Slack's work in the benchmark's process does not take the sender's CPU time, so a
        # response is timed when it arrives, not when the sender next got a CPU.
        start_new_session=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"bench.burst failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return [Sent(**item) for item in json.loads(proc.stdout)]


def spread(count: int, window: float, act: Callable[[int], None], *, timeout: float) -> None:
    """Run ``act(n)`` in ``count`` threads, the n-th at t0 + n·window/count, every thread
    started and ready before t0; wait up to ``timeout`` for each to end."""
    ready = threading.Barrier(count + 1)
    t0 = [0.0]

    def start(n: int) -> None:
        ready.wait()
        time.sleep(max(t0[0] + window * n / count - time.monotonic(), 0.0))
        act(n)

    threads = [threading.Thread(target=start, args=(n,), daemon=True) for n in range(count)]
    for thread in threads:
        thread.start()
    t0[0] = time.monotonic() + 0.2
    ready.wait()
    for thread in threads:
        thread.join(timeout=timeout)


def _run(window: float, requests: list[Request]) -> list[Sent]:
    count = len(requests)
    clients = [httpx.Client(timeout=TIMEOUT_S, trust_env=False) for _ in requests]
    results = [Sent() for _ in requests]
    try:
        for client, request in zip(clients, requests, strict=True):
            if request.warm_url:
                client.get(request.warm_url).raise_for_status()

        def person(n: int) -> None:
            request, out = requests[n], results[n]
            out.sent_at = time.time()
            began = time.perf_counter()
            try:
                response = clients[n].post(
                    request.url, content=request.body.encode(), headers=request.headers
                )
            except httpx.HTTPError as exc:
                out.error = f"{type(exc).__name__}: {exc}"
                return
            out.elapsed = time.perf_counter() - began
            out.status = response.status_code
            try:
                out.body = response.json()
            except ValueError:
                out.body = response.text

        spread(count, window, person, timeout=window + TIMEOUT_S)
    finally:
        for client in clients:
            client.close()
    return results


def main() -> int:
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    job = json.load(sys.stdin)
    requests = [Request(**r) for r in job["requests"]]
    json.dump([asdict(s) for s in _run(float(job["window"]), requests)], sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
