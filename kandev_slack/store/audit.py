"""The audit log: append-only, one row per attempt (allowed or not) and its result."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select

from kandev_slack.store.base import Repository
from kandev_slack.store.records import AuditEntry
from kandev_slack.store.schema import audit_log

#: The ``user`` of entries the bot itself made (posting, syncing).
SYSTEM_USER = "bot"


class AuditRepository(Repository):
    """The append-only audit log."""

    def audit(
        self,
        pending_id: str | None,
        user: str | None,
        action: str,
        source: str,
        result: str,
        detail: str = "",
        *,
        kandev_user: str | None = None,
    ) -> int:
        """Append one entry stamped with the current UTC time; returns its id.

        ``action`` e.g. answer/reject/post; ``source`` e.g. button/modal/shortcut/sync;
        ``result`` e.g. won/lost/refused/not_active/error. ``pending_id`` may be None when the
        attempt could not be tied to a bundle (a malformed payload). ``kandev_user``: the
        Kandev account it was made with, when a person's own (None: the bot's, or unknown).
        """
        stmt = self._prepared(
            "audit.audit",
            lambda: insert(audit_log).values(at=self._now()).returning(audit_log.c.id),
        )
        values = {
            "pending_id": pending_id,
            "user_id": user or SYSTEM_USER,
            "action": action,
            "source": source,
            "result": result,
            "detail": detail,
            "kandev_user_id": kandev_user or None,
        }
        with self._write() as conn:
            return int(conn.execute(stmt, values).scalar_one())

    def audit_entries(self, pending_id: str | None = None, limit: int = 100) -> list[AuditEntry]:
        """The newest ``limit`` entries (of one bundle when ``pending_id`` is given), newest
        first."""
        stmt = select(audit_log).order_by(audit_log.c.id.desc()).limit(limit)
        if pending_id is not None:
            stmt = stmt.where(audit_log.c.pending_id == pending_id)
        with self._read() as conn:
            rows = conn.execute(stmt).all()
        return [
            AuditEntry(user=row.user_id, kandev_user=row.kandev_user_id, **_entry_columns(row))
            for row in rows
        ]


def _entry_columns(row: Any) -> dict[str, Any]:
    """The columns of an audit_log row that an AuditEntry takes by the same name."""
    renamed = ("user_id", "kandev_user_id")
    return {name: value for name, value in row._mapping.items() if name not in renamed}
