"""The preview's HTTP server: 127.0.0.1 only, the page and its files, the state and act
endpoints (their errors as 400s), a policy that lets the page run nothing but its own, and no
other web page may drive it (its own Host, same-origin JSON requests with this run's token)."""

from __future__ import annotations

import http.client
import re
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kandev_slack.preview.actions import ActionError
from kandev_slack.preview.server import MAX_BODY, TOKEN_HEADER, PreviewHttpServer


@pytest.fixture
def server() -> Iterator[tuple[PreviewHttpServer, list[Any]]]:
    seen: list[Any] = []

    def state(user: str, since: str, wait: float) -> dict[str, Any]:
        seen.append(("state", user, since, wait))
        return {"version": "v2", "user": user}

    def act(user: str, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("kind") == "nonsense":
            raise ActionError("unknown action 'nonsense'")
        seen.append(("act", user, request))
        return {"ok": True}

    running = PreviewHttpServer(0, state, act)
    running.serve_in_thread()
    yield running, seen
    running.shutdown()
    running.server_close()


def test_it_listens_on_loopback_only(server) -> None:
    running, _ = server
    assert running.server_address[0] == "127.0.0.1"


def test_the_page_and_its_files(server) -> None:
    running, _ = server
    base = f"http://127.0.0.1:{running.port}"
    page = httpx.get(f"{base}/")
    assert page.status_code == 200 and "Preview" in page.text
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert httpx.get(f"{base}/static/app.js").headers["Content-Type"].startswith("text/javascript")
    assert httpx.get(f"{base}/static/style.css").status_code == 200
    assert httpx.get(f"{base}/static/../app.py").status_code == 404


def the_page(running: PreviewHttpServer) -> httpx.Client:
    """A client sending what the preview's page sends: its token (read from the page)."""
    base = f"http://127.0.0.1:{running.port}"
    found = re.search(r'name="preview-token" content="([^"]+)"', httpx.get(f"{base}/").text)
    assert found is not None, "the page carries no token"
    return httpx.Client(base_url=base, headers={TOKEN_HEADER: found.group(1)})


def test_the_state_is_long_polled_only_when_the_page_has_a_version(server) -> None:
    running, seen = server
    page = the_page(running)
    assert page.get("/api/state?user=U1").json() == {"version": "v2", "user": "U1"}
    page.get("/api/state?user=U1&since=v1")
    assert [s[3] for s in seen] == [0.0, 20.0]


def test_an_action_is_passed_on_and_a_bad_one_is_a_400(server) -> None:
    running, seen = server
    page, url = the_page(running), "/api/act"
    assert page.post(url, json={"user": "U1", "kind": "click"}).json() == {"ok": True}
    assert seen == [("act", "U1", {"user": "U1", "kind": "click"})]
    bad = page.post(url, json={"user": "U1", "kind": "nonsense"})
    assert bad.status_code == 400 and "nonsense" in bad.json()["error"]
    json_type = {"Content-Type": "application/json"}
    assert page.post(url, content=b"[1]", headers=json_type).status_code == 400
    assert page.post(url, content=b"{not json", headers=json_type).status_code == 400


# ---- no other web page may drive it -------------------------------------------------------


def test_another_host_name_is_refused(server) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: nothing is served to it."""
    running, seen = server
    page = the_page(running)
    for path in ("/", "/static/app.js", "/api/state?user=U1"):
        refused = page.get(path, headers={"Host": f"evil.example:{running.port}"})
        assert refused.status_code == 421, path
    clicked = page.post(
        "/api/act", json={"user": "U1", "kind": "click"}, headers={"Host": "evil.example"}
    )
    assert clicked.status_code == 421
    assert page.get("/", headers={"Host": f"localhost:{running.port}"}).status_code == 200
    assert [s for s in seen if s[0] == "act"] == []


def test_a_request_from_another_origin_is_refused(server) -> None:
    running, seen = server
    page = the_page(running)
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ):
        clicked = page.post("/api/act", json={"user": "U1", "kind": "click"}, headers=headers)
        assert clicked.status_code == 403, headers
        assert page.get("/api/state?user=U1", headers=headers).status_code == 403, headers
    own = {"Origin": f"http://127.0.0.1:{running.port}", "Sec-Fetch-Site": "same-origin"}
    assert page.post("/api/act", json={"user": "U1", "kind": "ok"}, headers=own).status_code == 200
    assert [s[2]["kind"] for s in seen if s[0] == "act"] == ["ok"]


def test_an_action_must_be_json(server) -> None:
    """What a cross-origin form or a "simple" fetch can send (text/plain, a form) is refused."""
    running, seen = server
    page = the_page(running)
    body = b'{"user": "U1", "kind": "click"}'
    refused = ("text/plain", "application/x-www-form-urlencoded", "", "multipart/form-data")
    for content_type in refused:
        sent = page.post("/api/act", content=body, headers={"Content-Type": content_type})
        assert sent.status_code == 415, content_type
    typed = {"Content-Type": "application/json; charset=utf-8"}
    assert page.post("/api/act", content=body, headers=typed).status_code == 200
    assert len([s for s in seen if s[0] == "act"]) == 1


def test_the_api_wants_this_runs_token(server) -> None:
    running, seen = server
    base = f"http://127.0.0.1:{running.port}"
    for token in (None, "", "not-the-token", running.token + "x"):
        headers = {} if token is None else {TOKEN_HEADER: token}
        clicked = httpx.post(
            f"{base}/api/act", json={"user": "U1", "kind": "click"}, headers=headers
        )
        assert clicked.status_code == 403, token
        assert httpx.get(f"{base}/api/state?user=U1", headers=headers).status_code == 403
    assert seen == []


def test_the_token_and_the_signing_secret_are_new_for_each_run() -> None:
    from kandev_slack.preview.app import own_identity

    def noop(*args: Any) -> dict[str, Any]:
        return {}

    first, second = PreviewHttpServer(0, noop, noop), PreviewHttpServer(0, noop, noop)
    try:
        assert first.token != second.token and len(first.token) >= 32
        assert first.token.encode() in first.page() and second.token.encode() not in first.page()
    finally:
        first.server_close()
        second.server_close()
    one, other = own_identity(), own_identity()
    assert one.signing_secret != other.signing_secret and len(one.signing_secret) >= 32
    assert one.bot_token != other.bot_token and one.bot_token.startswith("xoxb-")


def raw_post(running: PreviewHttpServer, length: str, body: bytes = b"{}") -> int:
    """A POST whose Content-Length says ``length`` (httpx would not send a wrong one)."""
    conn = http.client.HTTPConnection("127.0.0.1", running.port, timeout=10)
    try:
        conn.putrequest("POST", "/api/act", skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", f"127.0.0.1:{running.port}")
        conn.putheader("Content-Type", "application/json")
        conn.putheader(TOKEN_HEADER, running.token)
        conn.putheader("Content-Length", length)
        conn.endheaders(body)
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_bad_or_huge_length_is_refused(server) -> None:
    running, seen = server
    assert raw_post(running, "-1") == 400
    assert raw_post(running, "-100000") == 400
    assert raw_post(running, "1e3") == 400
    assert raw_post(running, str(MAX_BODY + 1)) == 413
    assert raw_post(running, str(10**30)) == 413
    assert seen == []


def test_a_closed_tab_prints_no_traceback(capfd) -> None:
    """A page closed while its long poll is answered: the answer finds no one; nothing is
    printed (the standard library prints a traceback for it)."""
    import socket
    import time

    answered = threading.Event()

    def state(user: str, since: str, wait: float) -> dict[str, Any]:
        time.sleep(0.3)  # the tab is closed meanwhile
        answered.set()
        return {"version": "v", "big": "x" * 4_000_000}

    running = PreviewHttpServer(0, state, lambda user, request: {})
    running.serve_in_thread()
    try:
        page = the_page(running)
        token = page.headers[TOKEN_HEADER]
        with socket.create_connection(("127.0.0.1", running.port)) as tab:
            request = (
                f"GET /api/state?user=U1&since=v0 HTTP/1.1\r\nHost: 127.0.0.1:{running.port}\r\n"
                f"{TOKEN_HEADER}: {token}\r\n\r\n"
            )
            tab.sendall(request.encode())
            tab.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        assert answered.wait(5)
        time.sleep(0.5)
    finally:
        running.shutdown()
        running.server_close()
    printed = capfd.readouterr()
    assert "Traceback" not in printed.err + printed.out, printed.err
