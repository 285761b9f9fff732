"""Typed views of the Slack interaction payloads the listeners read (extra fields ignored).

Parsing raises ``PayloadError`` with a short reason when a payload lacks what we need, so a
malformed or forged payload is refused cleanly instead of crashing a listener.
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class PayloadError(ValueError):
    """An interaction payload that does not have the shape Slack sends."""


class _P(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _User(_P):
    id: str = Field(min_length=1)
    #: The person's own workspace (T…), or their organisation (E…) on Enterprise Grid: a
    #: Slack Connect member of a shared channel carries theirs, not the app's.
    team_id: str = ""


class _ByPerson(_P):
    """A payload of something a person did: who they are, as Slack's signed payload says."""

    user: _User

    @property
    def user_id(self) -> str:
        return self.user.id

    @property
    def user_team(self) -> str:
        return self.user.team_id


class _Container(_P):
    type: str = ""
    channel_id: str = ""
    message_ts: str = ""
    is_ephemeral: bool = False
    view_id: str = ""


class _Channel(_P):
    id: str = ""


class _Selected(_P):
    value: str = ""


class _Action(_P):
    action_id: str = Field(min_length=1)
    block_id: str = ""
    type: str = ""  # "button", "overflow", "static_select"…
    value: str = ""  # a button's
    selected_option: _Selected | None = None  # a static_select's choice


class _ViewRef(_P):
    """The view a button was clicked in (a modal or the App Home)."""

    id: str = ""
    type: str = ""
    callback_id: str = ""
    private_metadata: str = ""


class BlockAction(_ByPerson):
    """A ``block_actions`` payload reduced to the one action that was clicked."""

    trigger_id: str = ""
    response_url: str = ""
    container: _Container = _Container()
    channel: _Channel | None = None
    view: _ViewRef | None = None
    actions: list[_Action] = Field(min_length=1)

    @property
    def in_modal(self) -> bool:
        """Clicked in a modal (the Conversation view), not on a message or the App Home."""
        return (
            self.container.type == "view" and self.view is not None and (self.view.type == "modal")
        )

    @property
    def action(self) -> _Action:
        return self.actions[0]

    @property
    def channel_id(self) -> str:
        return self.container.channel_id or (self.channel.id if self.channel else "")

    @property
    def on_message(self) -> bool:
        """Clicked on a (non-ephemeral) message: a card, recognised by (channel, ts)."""
        return self.container.type == "message" and not self.container.is_ephemeral


class _InputState(BaseModel):
    """One input's state in ``view.state.values[block_id][action_id]`` (other keys kept)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str = ""
    value: str | None = None
    selected_option: _Selected | None = None


class _State(_P):
    values: dict[str, dict[str, _InputState]] = Field(default_factory=dict)


class _View(_P):
    id: str = ""
    callback_id: str = ""
    private_metadata: str = ""
    state: _State = Field(default_factory=_State)

    @property
    def values(self) -> dict[str, dict[str, dict[str, Any]]]:
        """``state.values`` as plain dicts, each input's state checked to have Slack's shape."""
        return {
            block_id: {
                action_id: state.model_dump(exclude_none=True)
                for action_id, state in inputs.items()
            }
            for block_id, inputs in self.state.values.items()
        }


class ViewSubmission(_ByPerson):
    view: _View


class _Message(_P):
    ts: str = Field(min_length=1)


class MessageShortcut(_ByPerson):
    callback_id: str = ""
    trigger_id: str = ""
    response_url: str = ""
    channel: _Channel
    message: _Message


M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], body: Any) -> M:
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise PayloadError(
            f"{model.__name__}: {where or 'payload'} {first.get('msg', '')}"
        ) from exc


def parse_click(body: Any, log: logging.Logger) -> BlockAction | None:
    """A button click's payload, or None (logged) when it does not have Slack's shape."""
    try:
        return parse(BlockAction, body)
    except PayloadError as exc:
        log.warning("refused a malformed click: %s", exc)
        return None
