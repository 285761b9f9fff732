"""Typed rows the store returns besides :class:`kandev_slack.core.domain.Card`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kandev_slack.core.clarification import Answer


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True)


class AuditEntry(_Row):
    """One append-only audit record: who did what to which bundle, from where, with what result."""

    id: int
    at: datetime
    pending_id: str | None
    user: str
    action: str
    source: str
    result: str
    detail: str = ""
    #: The Kandev account it was made with, when a person's own (None: the bot's, unknown).
    kandev_user: str | None = None


class SubmissionContent(_Row):
    """What a person submitted: an answer per question, or a rejection with its reason.

    Stored with the submission (``encode``/``decode``) so that crash recovery can re-send
    exactly what was submitted.
    """

    action: Literal["answer", "reject", "approve"]  # approve: an approval's option
    answers: list[Answer] = Field(default_factory=list)
    reason: str = ""
    #: The modal it was sent from, showing "Sending…" until the result replaces it (crash
    #: recovery shows the result there too); empty for a click.
    view_id: str = ""
    #: The Kandev account it was sent with (the person's own Kandev user id; empty: the
    #: bot's), so crash recovery never re-sends a person's answer as the bot.
    kandev_user: str = ""

    def encode(self) -> str:
        # Defaults left out: a click's content reads as rows of earlier versions do.
        return self.model_dump_json(exclude_defaults=True)

    @classmethod
    def decode(cls, raw: str) -> SubmissionContent:
        """Raises ValueError on anything ``encode`` did not write."""
        try:
            return cls.model_validate_json(raw)
        except ValidationError as exc:
            raise ValueError(f"not a stored submission: {exc.errors()[0].get('msg')}") from exc


class SubmissionVerdict(_Row):
    """How a submission ended: the verdict kind (``won``, ``lost``, ``ended``…) and, for a
    refusal worth repeating (Kandev's ``invalid``), what the person was told."""

    kind: str
    message: str = ""

    def encode(self) -> str:
        # Defaults left out: a result without a message reads as rows of earlier versions do.
        return self.model_dump_json(exclude_defaults=True)

    @classmethod
    def decode(cls, raw: str | None) -> str | None:
        read = cls.read(raw)
        return None if read is None else read.kind

    @classmethod
    def read(cls, raw: str | None) -> SubmissionVerdict | None:
        if raw is None:
            return None
        try:
            return cls.model_validate_json(raw)
        except ValidationError:
            return cls(kind="unreadable")


class Submission(_Row):
    """One answer/reject submission on its way to Kandev (``verdict`` once it got there)."""

    submission_key: str
    pending_id: str
    user: str
    content: SubmissionContent
    verdict: str | None = None  # the verdict kind, once finished
    verdict_message: str = ""  # what the person was told, kept for a refusal worth repeating
    resends: int = 0  # times crash recovery re-sent it
    created_at: datetime
    leased_at: datetime
    finished_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.finished_at is not None


class OutboxStatus(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class OutboxEntry(_Row):
    """A pending Slack write. ``attempts`` counts leases taken, including the current one."""

    id: int
    kind: str
    key: str | None
    channel: str | None
    payload: dict[str, Any]
    status: OutboxStatus
    attempts: int
    not_before: datetime
    lease_owner: str | None
    lease_until: datetime | None
    last_error: str
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None
    #: The posting slot of its channel this item holds (a paced post waiting its turn).
    slot_at: datetime | None = None
    #: The kind of the card it writes (kandev_slack/store/kinds.py).
    item_kind: str = "question"


@dataclass(frozen=True)
class KandevLink:
    """A Slack person's own Kandev account (``LinksRepository``): who they are in Kandev and
    their personal access token, in clear in memory only. Its repr and str never show the
    token. ``broken_at``: since when the token no longer works (Kandev refused it, or no key of
    KANDEV_SLACK_SECRET_KEY opens it: then ``token`` is empty); they are asked to reconnect."""

    slack_user_id: str
    kandev_user_id: str
    display_name: str
    email: str
    token: str = field(repr=False)
    linked_at: datetime
    broken_at: datetime | None = None

    @property
    def broken(self) -> bool:
        return self.broken_at is not None
