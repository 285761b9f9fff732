"""Typed rows the store returns besides :class:`bot.domain.Card`."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict


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


class Submission(_Row):
    """One answer/reject submission on its way to Kandev (``result_json`` once it got there)."""

    submission_key: str
    pending_id: str
    user: str
    payload_json: str
    result_json: str | None = None
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


class OutboxItem(_Row):
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
