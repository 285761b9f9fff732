"""The preview's HTTP server: 127.0.0.1 only, the page and its files, the state and act
endpoints (their errors as 400s), and a policy that lets the page run nothing but its own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from preview.actions import ActionError
from preview.server import PreviewHttpServer


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


def test_the_state_is_long_polled_only_when_the_page_has_a_version(server) -> None:
    running, seen = server
    base = f"http://127.0.0.1:{running.port}"
    assert httpx.get(f"{base}/api/state?user=U1").json() == {"version": "v2", "user": "U1"}
    httpx.get(f"{base}/api/state?user=U1&since=v1")
    assert [s[3] for s in seen] == [0.0, 20.0]


def test_an_action_is_passed_on_and_a_bad_one_is_a_400(server) -> None:
    running, seen = server
    url = f"http://127.0.0.1:{running.port}/api/act"
    assert httpx.post(url, json={"user": "U1", "kind": "click"}).json() == {"ok": True}
    assert seen == [("act", "U1", {"user": "U1", "kind": "click"})]
    bad = httpx.post(url, json={"user": "U1", "kind": "nonsense"})
    assert bad.status_code == 400 and "nonsense" in bad.json()["error"]
    assert httpx.post(url, content=b"[1]").status_code == 400
    assert httpx.post(url, content=b"{not json").status_code == 400
