"""What a use-case appends to the audit log (:meth:`kandev_slack.store.AuditRepository.audit`)."""

from __future__ import annotations

from typing import Protocol


class Audit(Protocol):
    """Appends one entry to the audit log (kandev_slack.store.AuditRepository)."""

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
    ) -> int: ...
