"""What the fake remembers: calls, messages (with their edit history), ephemerals, views."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

from kandev_slack.kits.fakeslack.layout import blocks_text

JsonDict = dict[str, Any]


@dataclass(frozen=True)
class CallRecord:
    """One request to the fake Web API, as the app sent it (JSON strings already decoded)."""

    index: int
    method: str
    params: JsonDict
    at: float
    token: str | None
    status: int
    response: JsonDict

    @property
    def ok(self) -> bool:
        return bool(self.response.get("ok"))

    @property
    def error(self) -> str | None:
        return self.response.get("error")


@dataclass(frozen=True)
class Violation:
    """A Block Kit rule the app broke. `level="error"` calls were rejected like Slack does."""

    method: str
    pointer: str
    message: str
    level: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        return f"[{self.level.upper()}] {self.method}: {self.message} [json-pointer:{self.pointer}]"


@dataclass
class PostedMessage:
    """A message in a channel, in its current state; `versions` holds what it was before."""

    channel: str
    ts: str
    text: str
    blocks: list[JsonDict]
    user: str
    bot_id: str  # "" for a message a person wrote
    app_id: str
    team: str
    metadata: JsonDict | None = None
    attachments: list[JsonDict] | None = None
    thread_ts: str | None = None
    edited_ts: str | None = None
    deleted: bool = False
    via: str = "chat.postMessage"
    versions: list[JsonDict] = field(default_factory=list)

    @property
    def all_text(self) -> str:
        """The fallback text plus every piece of text in the blocks, for assertions."""
        return "\n".join(part for part in (self.text, blocks_text(self.blocks)) if part)

    def to_slack(self, *, include_metadata: bool = True) -> JsonDict:
        """The message object as Slack shows it (postMessage `message`, history, payloads)."""
        out: JsonDict = {
            "type": "message",
            "text": self.text,
            "user": self.user,
            "team": self.team,
            "ts": self.ts,
            "blocks": copy.deepcopy(self.blocks),
        }
        if self.bot_id:
            out["bot_id"] = self.bot_id
            out["app_id"] = self.app_id
        if self.thread_ts:
            out["thread_ts"] = self.thread_ts
        if self.attachments:
            out["attachments"] = copy.deepcopy(self.attachments)
        if self.edited_ts:
            out["edited"] = {"user": self.user, "ts": self.edited_ts}
        if include_metadata and self.metadata:
            out["metadata"] = copy.deepcopy(self.metadata)
        return out


@dataclass(frozen=True)
class Ephemeral:
    """A message only `user` sees (chat.postEphemeral, a response_url or a slash-command ack)."""

    channel: str
    user: str
    message_ts: str
    text: str
    blocks: list[JsonDict]
    thread_ts: str | None
    source: Literal["chat.postEphemeral", "response_url", "command_ack"]
    at: float
    #: Replaced through a response_url of one of its buttons (``replace_original``: the newest
    #: text and blocks are these), or deleted (``delete_original``: Slack removes it).
    replaced: int = 0
    deleted: bool = False

    @property
    def all_text(self) -> str:
        return "\n".join(part for part in (self.text, blocks_text(self.blocks)) if part)


@dataclass
class ViewRecord:
    """A modal or Home tab the app opened/published, in its current state."""

    id: str
    team_id: str
    app_id: str
    bot_id: str
    user: str
    definition: JsonDict
    hash: str
    opened_by: str
    opened_at: float
    root_view_id: str
    previous_view_id: str | None = None
    trigger_id: str | None = None
    external_id: str = ""
    is_open: bool = True
    history: list[JsonDict] = field(default_factory=list)
    #: Submitted, the app's answer (ack) not applied yet (see ViewFlow.submitting).
    submitting: bool = False
    #: What the person picked in the view's inputs so far, before submitting ({block_id:
    #: {action_id: value}}, test values as for a submission): Slack's client keeps it, sends
    #: it in ``view.state`` with every action and the submission, and keeps it across a
    #: ``views.update`` for an input whose block_id and action_id the new view still has.
    entered: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def type(self) -> str:
        return str(self.definition.get("type", ""))

    @property
    def callback_id(self) -> str:
        return str(self.definition.get("callback_id", ""))

    @property
    def private_metadata(self) -> str:
        return str(self.definition.get("private_metadata", ""))

    @property
    def blocks(self) -> list[JsonDict]:
        return list(self.definition.get("blocks", []))

    @property
    def notify_on_close(self) -> bool:
        return bool(self.definition.get("notify_on_close", False))

    @property
    def all_text(self) -> str:
        title = self.definition.get("title") or {}
        return "\n".join(p for p in (title.get("text", ""), blocks_text(self.blocks)) if p)

    def to_slack(self, state_values: JsonDict | None = None) -> JsonDict:
        """The view object as Slack returns it from views.* and sends it in payloads."""
        d = copy.deepcopy(self.definition)
        out: JsonDict = {
            "id": self.id,
            "team_id": self.team_id,
            "type": d.get("type"),
            "blocks": d.get("blocks", []),
            "private_metadata": d.get("private_metadata", ""),
            "callback_id": d.get("callback_id", ""),
            "state": {"values": state_values or {}},
            "hash": self.hash,
            "title": d.get("title"),
            "clear_on_close": bool(d.get("clear_on_close", False)),
            "notify_on_close": bool(d.get("notify_on_close", False)),
            "close": d.get("close"),
            "submit": d.get("submit"),
            "previous_view_id": self.previous_view_id,
            "root_view_id": self.root_view_id,
            "app_id": self.app_id,
            "external_id": self.external_id,
            "app_installed_team_id": self.team_id,
            "bot_id": self.bot_id,
        }
        if out["type"] == "home":
            for key in ("close", "submit", "previous_view_id"):
                out.pop(key, None)
        return out


@dataclass(frozen=True)
class ResponseUrlPost:
    """One POST the app made to a response_url the fake issued."""

    url_id: str
    body: JsonDict
    at: float
    status: int
    response: JsonDict
