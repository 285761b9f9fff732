"""Guarantee 12, the HTTP mode edge against the real `kandev-slack run --http` process: a huge
declared body is refused before the server buffers it (nothing is written to disk), many stalled
clients do not lock out /healthz or Slack, and Slack's unsigned ssl_check probe is answered."""

from __future__ import annotations

import os
import select
import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from kandev_slack.slack.transport.http_server import serve, stop_server
from tests.kit.harness import BotProcess

HUGE = 300 * 1024 * 1024
CHUNK = 64 * 1024
#: The bot must answer (or hang up on) the upload before this much of it was sent.
EARLY = 8 * 1024 * 1024
STALLED_CLIENTS = 150


def _temp_files(pid: int, tmpdir: Path) -> dict[str, int]:
    """The bot's open files under its temporary directory, with their sizes (waitress spools
    request bodies to unlinked temporary files there)."""
    found: dict[str, int] = {}
    fds = Path(f"/proc/{pid}/fd")
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
            size = os.stat(fd).st_size
        except OSError:
            continue
        if target.startswith(str(tmpdir)):
            found[target] = size
    return found


def _stream_huge_upload(bot: BotProcess, tmpdir: Path, framing: str) -> tuple[int, bytes, int]:
    """Send a 300 MB body slowly (its size declared, or chunked); returns (bytes sent when
    the bot answered or hung up, what it answered, the largest temporary file seen meanwhile)."""
    assert bot.proc is not None
    size = f"Content-Length: {HUGE}" if framing == "declared" else "Transfer-Encoding: chunked"
    head = (
        "POST /slack/events HTTP/1.1\r\n"
        "Host: 127.0.0.1\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"{size}\r\n\r\n"
    ).encode()
    sent, answer, largest = 0, b"", 0
    with socket.create_connection(("127.0.0.1", bot.port), timeout=30) as sock:
        sock.sendall(head)
        chunk = b"a" * CHUNK
        if framing == "chunked":
            chunk = f"{CHUNK:x}\r\n".encode() + chunk + b"\r\n"
        while sent < EARLY:
            readable, _, _ = select.select([sock], [], [], 0.01)
            if readable:
                try:
                    answer = sock.recv(4096) or b"<closed>"
                except ConnectionResetError:
                    answer = b"<reset>"
                break
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                answer = b"<closed while sending>"
                break
            sent += len(chunk)
            largest = max([largest, *_temp_files(bot.proc.pid, tmpdir).values()])
    return sent, answer, largest


@pytest.mark.fault("a 300 MB upload to the HTTP endpoint", guarantee=12)
@pytest.mark.parametrize("framing", ["declared", "chunked"])
def test_a_huge_body_is_refused_before_it_is_buffered(
    bot_factory, tmp_path: Path, reliability, framing: str
) -> None:
    tmpdir = tmp_path / "bot-tmp"
    tmpdir.mkdir()
    bot = bot_factory(TMPDIR=str(tmpdir))
    sent, answer, largest = _stream_huge_upload(bot, tmpdir, framing)
    assert answer, f"the bot read {sent} bytes of a {HUGE}-byte body without answering"
    assert sent < EARLY
    assert answer.startswith(b"HTTP/1.1 413") or answer.startswith(b"<"), answer[:200]
    assert largest == 0, f"a {largest}-byte temporary file grew while the body streamed in"
    assert list(tmpdir.iterdir()) == []
    # The bot is unharmed.
    assert httpx.get(bot.health_url, timeout=30).status_code in (200, 503)
    reliability.record(
        f"a 300 MB upload to the HTTP endpoint ({framing})",
        guarantee=12,
        survived=True,
        detail=f"answered after {sent // 1024} KiB: {answer[:30]!r}",
    )


@pytest.fixture
def stalled() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


def _stall(stack: ExitStack, port: int, count: int) -> list[socket.socket]:
    """``count`` clients that send half a request and then nothing."""
    socks = []
    for i in range(count):
        sock = stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=30))
        partial = b"POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n"
        sock.sendall(partial if i % 2 else partial + b"\r\npayload=%7B")
        socks.append(sock)
    return socks


@pytest.mark.fault("150 stalled clients on the HTTP endpoint", guarantee=12)
def test_stalled_clients_do_not_lock_out_healthz_or_slack(
    bot_factory, slack_driver, stalled: ExitStack, reliability
) -> None:
    bot = bot_factory()
    socks = _stall(stalled, bot.port, STALLED_CLIENTS)
    health = httpx.get(bot.health_url, timeout=30)
    assert health.status_code in (200, 503) and "status" in health.json()
    ack = slack_driver(bot.events_url).url_verification("still-here")
    assert ack.status == 200
    assert "still-here" in str(ack.body)
    assert len(socks) == STALLED_CLIENTS
    reliability.record(
        "150 stalled clients on the HTTP endpoint",
        guarantee=12,
        survived=True,
        detail="/healthz and a signed request answered",
    )


def test_slacks_unsigned_ssl_check_probe_is_answered_by_the_process(bot_factory) -> None:
    bot = bot_factory()
    response = httpx.post(
        bot.events_url,
        content=b"ssl_check=1&token=legacy-token",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        timeout=30,
    )
    assert response.status_code == 200
    forged = httpx.post(
        bot.events_url,
        content=b"command=%2Fkandev-questions&ssl_check=0",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        timeout=30,
    )
    assert forged.status_code == 401


# ---- the server's timeouts, in process (shortened so that the test does not wait long) -------


@pytest.fixture
def short_timeouts() -> Iterator[int]:
    server = serve(
        _hello,
        0,
        "127.0.0.1",
        request_deadline_s=1,
        channel_timeout=1,
        cleanup_interval=1,
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield server.effective_port
    finally:
        stop_server(server, thread)


def _hello(_environ: dict, start_response) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "5")])
    return [b"hello"]


def _hung_up(sock: socket.socket) -> bool:
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True


def test_an_idle_client_is_hung_up_on(short_timeouts: int) -> None:
    with socket.create_connection(("127.0.0.1", short_timeouts), timeout=60) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # and then nothing
        assert _hung_up(sock)


def test_a_drip_feeding_client_is_hung_up_on(short_timeouts: int) -> None:
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 400 + b"\r\n\r\n"
    with socket.create_connection(("127.0.0.1", short_timeouts), timeout=60) as sock:
        sent = 0
        for byte in request:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += 1
            readable, _, _ = select.select([sock], [], [], 0.2)  # never idle for 1 s
            if readable:
                break
        assert sent < len(request), "the server waited for the whole drip-fed request"
        assert _hung_up(sock)


def test_a_prompt_client_is_served_by_the_same_server(short_timeouts: int) -> None:
    response = httpx.get(f"http://127.0.0.1:{short_timeouts}/healthz", timeout=30)
    assert response.status_code == 200
