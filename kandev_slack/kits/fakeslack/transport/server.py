"""FakeSlack: a local stand-in for Slack's Web API, response_urls and Socket Mode, which
records everything the app does and rejects Block Kit payloads Slack would reject."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from kandev_slack.kits.fakeslack.api.response_urls import ResponseUrls
from kandev_slack.kits.fakeslack.api.view_flow import ViewFlow
from kandev_slack.kits.fakeslack.api.view_state import merged_entries
from kandev_slack.kits.fakeslack.api.webapi import WebApi
from kandev_slack.kits.fakeslack.config import Channel, SlackUser, Workspace
from kandev_slack.kits.fakeslack.context import SlackContext
from kandev_slack.kits.fakeslack.faults import Faults
from kandev_slack.kits.fakeslack.layout import assign_default_ids
from kandev_slack.kits.fakeslack.records import (
    CallRecord,
    Ephemeral,
    PostedMessage,
    ResponseUrlPost,
    ViewRecord,
    Violation,
)
from kandev_slack.kits.fakeslack.store import SlackState
from kandev_slack.kits.fakeslack.transport.http_server import (
    IDLE_S,
    RESPONSE_PREFIX,
    FakeSlackHttpServer,
)
from kandev_slack.kits.fakeslack.transport.socket_mode import FakeSocketModeServer

JsonDict = dict[str, Any]
T = TypeVar("T")


class FakeSlack:
    def __init__(self, workspace: Workspace | None = None, *, http_idle_s: float = IDLE_S) -> None:
        self.workspace = workspace or Workspace()
        #: How long a client's kept connection may stay idle before the fake closes it.
        self.http_idle_s = http_idle_s
        self.state = SlackState()
        self.faults = Faults()
        self.ctx = SlackContext(self.workspace, self.state, self.faults)
        self.web_api = WebApi(self.ctx)
        self.response_urls = ResponseUrls(self.ctx)
        self.view_flow = ViewFlow(self.web_api.views)
        self.socket = FakeSocketModeServer(self.workspace.app_id)
        self.ctx.socket_url = self.socket.issue_url
        self._http: FakeSlackHttpServer | None = None
        self._http_thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> FakeSlack:
        self._http = FakeSlackHttpServer(self.web_api, self.response_urls, idle_s=self.http_idle_s)
        self.response_urls.base_url = f"{self.base_url}{RESPONSE_PREFIX}"
        self._http_thread = threading.Thread(
            target=self._http.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-slack-http",
            daemon=True,
        )
        self._http_thread.start()
        self.socket.start()
        return self

    def stop(self) -> None:
        self.socket.stop()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http.close_connections()
            self._http = None
        if self._http_thread is not None:
            self._http_thread.join(timeout=5)
            self._http_thread = None

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._http is None:
            raise RuntimeError("FakeSlack is not started")
        return f"http://127.0.0.1:{self._http.port}"

    @property
    def http_connections(self) -> int:
        """Connections clients opened to the fake's HTTP side so far."""
        if self._http is None:
            raise RuntimeError("FakeSlack is not started")
        return self._http.accepted

    @property
    def api_url(self) -> str:
        """For WebClient(base_url=...) / SLACK_API_URL."""
        return f"{self.base_url}/api/"

    @property
    def trigger_ttl(self) -> float:
        return self.ctx.trigger_ttl

    @trigger_ttl.setter
    def trigger_ttl(self, seconds: float) -> None:
        self.ctx.trigger_ttl = seconds

    # -- the workspace ------------------------------------------------------------------------
    def add_channel(self, channel_id: str, name: str, *, is_private: bool = False) -> Channel:
        channel = Channel(id=channel_id, name=name, is_private=is_private)
        with self.state.lock:
            self.workspace.channels[channel_id] = channel
        return channel

    def add_user(self, user: SlackUser) -> SlackUser:
        with self.state.lock:
            self.workspace.users[user.id] = user
        return user

    def set_usergroup(self, group_id: str, user_ids: list[str]) -> None:
        with self.state.lock:
            self.workspace.usergroups[group_id] = list(user_ids)

    def set_channel_members(self, channel_id: str, user_ids: list[str]) -> None:
        with self.state.lock:
            self.workspace.channel_members[channel_id] = list(user_ids)

    def post_user_message(
        self,
        channel: str,
        user: str,
        text: str,
        blocks: list[JsonDict] | None = None,
        *,
        thread_ts: str | None = None,
    ) -> PostedMessage:
        """A message a person wrote (e.g. to try a message shortcut on a non-card message);
        ``thread_ts``: a reply in that message's thread (the fake only records it: its
        ``message`` event is the driver's ``reply_in_thread``)."""
        channel_id = self.ctx.resolve_channel(channel)
        message = PostedMessage(
            channel=channel_id,
            ts=self.ctx.clock.next(channel_id),
            text=text,
            blocks=assign_default_ids(blocks or []),
            user=user,
            bot_id="",
            app_id="",
            team=self.workspace.team_id,
            via="user",
            thread_ts=thread_ts or None,
        )
        self.state.add_message(message)
        return message

    # -- what the fake issues with interactions -------------------------------------------------
    def issue_trigger(self, user: str) -> str:
        return self.web_api.views.issue_trigger(user)

    def issue_response_url(
        self, channel: str, user: str, message_ts: str | None = None, is_ephemeral: bool = False
    ) -> str:
        return self.response_urls.issue(channel, user, message_ts, is_ephemeral)

    def apply_command_ack(self, response_url: str, body: JsonDict | None) -> None:
        """A slash command's ack body is shown like a response_url message (Slack does that)."""
        origin = self.response_urls.origin_of(response_url)
        if origin is not None and body and (body.get("text") or body.get("blocks")):
            self.response_urls.apply(origin, body, source="command_ack")

    # -- queries ------------------------------------------------------------------------------
    def calls(self, method: str | None = None) -> list[CallRecord]:
        return self.state.snapshot_calls(method)

    def mark(self) -> int:
        """The index the next call will get: pass as `after=` to wait only for newer calls."""
        with self.state.lock:
            return len(self.state.calls)

    def messages(self, channel: str) -> list[PostedMessage]:
        """Current (edited) state of the channel's messages, oldest first, deleted ones left out."""
        with self.state.lock:
            return [copy.deepcopy(m) for m in self.state.live_messages(channel)]

    def message(self, channel: str, ts: str) -> PostedMessage:
        with self.state.lock:
            found = self.state.find_message(channel, ts)
            if found is None:
                raise KeyError(f"no message {ts} in {channel}")
            return copy.deepcopy(found)

    def ephemerals(self, user: str | None = None, channel: str | None = None) -> list[Ephemeral]:
        with self.state.lock:
            return [
                e
                for e in self.state.ephemerals
                if (user is None or e.user == user) and (channel is None or e.channel == channel)
            ]

    def views_opened(self) -> list[ViewRecord]:
        """Every modal opened or pushed, in order, in its current state."""
        with self.state.lock:
            return [copy.deepcopy(self.state.views[v]) for v in self.state.modal_order]

    def view(self, view_id: str) -> ViewRecord:
        with self.state.lock:
            return copy.deepcopy(self.state.views[view_id])

    def enter_in_view(self, view_id: str, values: dict[str, dict[str, Any]]) -> ViewRecord:
        """Record what the person picked in the view's inputs (kept by Slack's client until
        the submission); the view as it now is."""
        with self.state.lock:
            record = self.state.views[view_id]
            record.entered = merged_entries(record.entered, values)
            return copy.deepcopy(record)

    def open_views(self, user: str) -> list[ViewRecord]:
        """The user's modal stack, bottom first."""
        with self.state.lock:
            return [copy.deepcopy(v) for v in self.state.view_stack(user)]

    def home(self, user: str) -> ViewRecord | None:
        with self.state.lock:
            view_id = self.state.homes.get(user)
            return copy.deepcopy(self.state.views[view_id]) if view_id else None

    def response_posts(self) -> list[ResponseUrlPost]:
        with self.state.lock:
            return list(self.state.response_posts)

    @property
    def violations(self) -> list[Violation]:
        with self.state.lock:
            return list(self.state.violations)

    def take_violations(self) -> list[Violation]:
        """Return and forget the recorded violations (for tests that expect some)."""
        with self.state.lock:
            found, self.state.violations = self.state.violations, []
            return found

    # -- waiting ------------------------------------------------------------------------------
    def wait_for(
        self, predicate: Callable[[], T | None], timeout: float = 5.0, description: str = ""
    ) -> T:
        return self.state.wait_for(predicate, timeout, description)

    def wait_for_call(
        self,
        method: str,
        predicate: Callable[[CallRecord], bool] | None = None,
        timeout: float = 5.0,
        after: int | None = None,
    ) -> CallRecord:
        """The first call to `method` (with index ≥ `after`) that satisfies `predicate`."""

        def find() -> CallRecord | None:
            for call in self.state.calls[after or 0 :]:
                if call.method == method and (predicate is None or predicate(call)):
                    return call
            return None

        return self.wait_for(find, timeout, f"a {method} call")

    def wait_for_message(
        self,
        channel: str,
        predicate: Callable[[PostedMessage], bool] = lambda m: True,
        timeout: float = 5.0,
    ) -> PostedMessage:
        def find() -> PostedMessage | None:
            return next((m for m in self.messages(channel) if predicate(m)), None)

        return self.wait_for(find, timeout, f"a matching message in {channel}")

    def wait_for_ephemeral(
        self,
        user: str,
        predicate: Callable[[Ephemeral], bool] = lambda e: True,
        timeout: float = 5.0,
    ) -> Ephemeral:
        def find() -> Ephemeral | None:
            return next((e for e in self.ephemerals(user) if predicate(e)), None)

        return self.wait_for(find, timeout, f"an ephemeral message for {user}")

    def wait_for_view(
        self,
        predicate: Callable[[ViewRecord], bool] = lambda v: True,
        timeout: float = 5.0,
    ) -> ViewRecord:
        def find() -> ViewRecord | None:
            return next((v for v in self.views_opened() if predicate(v)), None)

        return self.wait_for(find, timeout, "a matching modal")

    def settle(self, quiet: float = 0.3, timeout: float = 5.0) -> None:
        """Wait until no Web API call arrived for `quiet` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.state.lock:
                last = self.state.calls[-1].at if self.state.calls else 0.0
            if time.time() - last >= quiet:
                return
            time.sleep(quiet / 3)
        raise TimeoutError("fake Slack: the app kept calling")
