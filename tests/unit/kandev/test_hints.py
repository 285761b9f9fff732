"""WebSocket hints: message classification, and the listener against a local fake /ws server."""

import json
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.kandev import hints as hints_module
from kandev_slack.kandev.hints import (
    KandevHints,
    NewPending,
    PermissionWaiting,
    Resolved,
    TaskStatus,
    parse_hint,
    ws_url,
)
from tests.kit.fakews import FakeWs


def note(action: str, payload: dict, **extra) -> dict:
    return {"type": "notification", "action": action, "payload": payload, **extra}


def test_parse_hint():
    requested = note(
        "session.clarification_requested",
        {"occurrence_id": "p1", "task_id": "t", "session_id": "s"},
        id="p1",
    )
    assert parse_hint(requested) == NewPending("p1", task_id="t", session_id="s")
    assert parse_hint({**requested, "payload": {}}) == NewPending("p1")
    odd = {**requested, "payload": {"occurrence_id": "p1", "task_id": 7, "session_id": None}}
    assert parse_hint(odd) == NewPending("p1")
    resolved = note("session.pending_action_changed", {"pending_action": None, "session_id": "s"})
    assert parse_hint(resolved) == Resolved("s")
    raised = note("session.pending_action_changed", {"pending_action": "clarification"})
    assert parse_hint(raised) is None
    assert parse_hint(note("session.pending_action_changed", {})) is None
    assert parse_hint(note("task.updated", {"id": "t"})) is None
    assert parse_hint({"type": "response", "action": "user.subscribe"}) is None
    assert parse_hint("garbage") is None


def test_a_permission_request_is_a_hint_naming_its_task_and_session():
    # contract §6, as pushed to every client about 20 ms after the request
    waiting = note(
        "session.pending_action_changed",
        {
            "pending_action": "permission",
            "pending_action_revision": {"epoch": "1", "sequence": 10},
            "session_id": "s",
            "task_id": "t",
            "workspace_id": "w",
        },
    )
    assert parse_hint(waiting) == PermissionWaiting("t", "s", "w")
    assert (
        parse_hint(note("session.pending_action_changed", {"pending_action": "permission"})) is None
    )


def test_permission_hints_go_to_on_permission_only_when_it_is_given():
    waiting = note(
        "session.pending_action_changed",
        {"pending_action": "permission", "task_id": "t", "session_id": "s"},
    )

    def script(ws):
        ws.send(json.dumps(waiting))
        ws.send(json.dumps(note("session.clarification_requested", {"occurrence_id": "p1"})))
        ws.recv()

    seen: list[object] = []
    for on_permission in (seen.append, None):
        server = FakeWs([script])
        hints = KandevHints(
            f"http://127.0.0.1:{server.port}",
            None,
            seen.append,
            lambda hint: None,
            lambda: None,
            on_permission=on_permission,
        )
        try:
            hints.start()
            wait_for(lambda: NewPending("p1") in seen)
        finally:
            hints.stop()
            server.close()
        seen.remove(NewPending("p1"))
    assert seen == [PermissionWaiting("t", "s")]


def test_a_task_status_summary_is_a_hint_naming_the_task_and_its_pending_action():
    # kandev-permissions.md §6, kandev-identity.md §6: sent to every reader of the workspace
    summary = {
        "revision": 12,
        "primary_session": {"id": "s", "state": "WAITING_FOR_INPUT"},
        "pending_action": "permission",
    }
    waiting = note(
        "task.status_summary.updated",
        {"task_id": "t", "workspace_id": "w", "status_summary": summary},
    )
    assert parse_hint(waiting) == TaskStatus("t", "s", "w", "permission")
    del summary["pending_action"]
    assert parse_hint(waiting) == TaskStatus("t", "s", "w", "")
    bare = note("task.status_summary.updated", {"task_id": "t", "status_summary": "odd"})
    assert parse_hint(bare) == TaskStatus("t")
    assert parse_hint(note("task.status_summary.updated", {"status_summary": summary})) is None


def test_status_hints_go_to_on_status_and_a_lost_link_to_on_disconnected():
    status = note(
        "task.status_summary.updated",
        {"task_id": "t", "status_summary": {"primary_session": {"id": "s"}}},
    )

    def first(ws):
        ws.send(json.dumps(status))
        time.sleep(0.1)
        ws.close()

    server = FakeWs([first])
    events: list[object] = []
    hints = KandevHints(
        f"http://127.0.0.1:{server.port}",
        None,
        lambda hint: None,
        lambda hint: None,
        lambda: events.append("connected"),
        backoff_initial=0.05,
        on_status=events.append,
        on_disconnected=lambda: events.append("disconnected"),
    )
    try:
        hints.start()
        wait_for(lambda: events.count("connected") == 2)
    finally:
        hints.stop()
        server.close()
    assert events[:4] == ["connected", TaskStatus("t", "s"), "disconnected", "connected"]
    assert events[-1] == "disconnected"  # stopped: the link is gone too


def test_ws_url():
    assert ws_url("http://127.0.0.1:38429") == "ws://127.0.0.1:38429/ws"
    assert ws_url("https://kandev.example.com/base/") == "wss://kandev.example.com/base/ws"


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError("condition not met in time")


def test_listener_dispatches_hints_and_reconnects_after_a_drop():
    def first(ws):
        ws.send("not json")
        ws.send(json.dumps(note("task.updated", {"id": "t"})))
        ws.send(json.dumps(note("session.clarification_requested", {"occurrence_id": "p1"})))
        ws.send(json.dumps(note("session.pending_action_changed", {"pending_action": None})))
        time.sleep(0.1)
        ws.close()  # the server drops us: the client must reconnect and say so

    server = FakeWs([first])
    events: list[tuple] = []
    hints = KandevHints(
        f"http://127.0.0.1:{server.port}",
        "kandev_pat_secret",
        on_new_pending=lambda hint: events.append(("new", hint.pending_id)),
        on_resolved=lambda hint: events.append(("resolved", hint.session_id)),
        on_connected=lambda: events.append(("connected",)),
        backoff_initial=0.05,
    )
    try:
        hints.start()
        wait_for(lambda: events.count(("connected",)) == 2)
        assert events == [("connected",), ("new", "p1"), ("resolved", ""), ("connected",)]
        assert hints.connected and hints.connections == 2
        assert server.connections[0] == {
            "path": "/ws",
            "authorization": "Bearer kandev_pat_secret",
        }
    finally:
        started = time.monotonic()
        hints.stop()
        server.close()
    assert time.monotonic() - started < 3
    assert not hints.connected


def test_a_failing_callback_does_not_stop_the_listener():
    def script(ws):
        ws.send(json.dumps(note("session.clarification_requested", {"occurrence_id": "p1"})))
        ws.send(json.dumps(note("session.clarification_requested", {"occurrence_id": "p2"})))
        ws.recv()

    server = FakeWs([script])
    seen: list[str] = []

    def on_new(hint):
        seen.append(hint.pending_id)
        raise RuntimeError("boom")

    hints = KandevHints(f"http://127.0.0.1:{server.port}", None, on_new, lambda: None, lambda: None)
    try:
        hints.start()
        wait_for(lambda: seen == ["p1", "p2"])
        assert server.connections[0]["authorization"] is None
    finally:
        hints.stop()
        server.close()


@pytest.mark.parametrize("status", [401, 503])
def test_refused_connections_are_retried_with_backoff_until_stopped(status):
    server = FakeWs([], status=status)
    connected: list[bool] = []
    hints = KandevHints(
        f"http://127.0.0.1:{server.port}",
        "bad",
        lambda pid: None,
        lambda: None,
        lambda: connected.append(True),
        backoff_initial=0.02,
        backoff_max=0.1,
    )
    try:
        hints.start()
        wait_for(lambda: len(server.connections) >= 3)
        assert not connected and not hints.connected
    finally:
        hints.stop()
        server.close()


def test_nothing_listening_keeps_retrying_and_stops_promptly(unused_port):
    hints = KandevHints(
        f"http://127.0.0.1:{unused_port}", None, lambda p: None, lambda: None, lambda: None
    )
    hints.start()
    time.sleep(0.2)
    started = time.monotonic()
    hints.stop()
    assert time.monotonic() - started < 2


_ACTIONS = st.sampled_from(
    [
        "session.clarification_requested",
        "session.pending_action_changed",
        "task.status_summary.updated",
        "session.message.added",
        "session.message.updated",
        "task.updated",
        "session.state_changed",
    ]
)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=8,
)
_PAYLOADS = st.fixed_dictionaries(
    {},
    optional={
        "pending_action": st.none() | st.sampled_from(["permission", "clarification"]),
        "occurrence_id": st.text(max_size=8),
        "task_id": st.text(max_size=8),
        "session_id": st.text(max_size=8),
        "status_summary": _VALUES,
        "text": _VALUES,
    },
)


@given(action=_ACTIONS, payload=_PAYLOADS, as_bytes=st.booleans())
def test_a_message_left_undecoded_never_carries_a_hint(action, payload, as_bytes):
    message = note(action, payload, id="p1")
    raw = json.dumps(message)
    if not hints_module._may_hint(raw.encode() if as_bytes else raw):
        assert parse_hint(message) is None


def test_messages_naming_no_hint_action_are_not_decoded(monkeypatch):
    decoded: list[str] = []
    decode = hints_module._decode

    def recording(raw):
        decoded.append(raw)
        return decode(raw)

    monkeypatch.setattr(hints_module, "_decode", recording)
    chatter = json.dumps(note("session.message.added", {"content": "x" * 100_000}))
    resolved = json.dumps(note("session.pending_action_changed", {"pending_action": None}))

    def serve(ws):
        time.sleep(0.3)  # no answer to the subscription: the listener goes on without it
        ws.send(chatter)
        ws.send(resolved)
        time.sleep(0.2)

    server = FakeWs([serve])
    events: list[tuple] = []
    hints = KandevHints(
        f"http://127.0.0.1:{server.port}",
        "kandev_pat_secret",
        on_new_pending=lambda hint: events.append(hint),
        on_resolved=lambda hint: events.append(("resolved", hint.session_id)),
        on_connected=lambda: None,
        subscribe_timeout=0.05,  # no answer to the subscription: it goes on without
    )
    try:
        hints.start()
        wait_for(lambda: ("resolved", "") in events)
    finally:
        hints.stop()
        server.close()
    assert chatter not in decoded
    assert resolved in decoded
