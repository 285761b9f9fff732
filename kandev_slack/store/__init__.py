"""Durable state of kandev-slack (SQLAlchemy Core; SQLite by default, PostgreSQL for replicas).

Open a :class:`Database` and hand each use-case only the repositories it uses
(``db.cards``, ``db.submissions``, ``db.outbox``, ``db.followups``, ``db.audit_log``,
``db.viewers``, ``db.links``, ``db.retention``). Everything else here is the typed rows and helpers.
"""

from kandev_slack.store.audit import AuditRepository
from kandev_slack.store.cards.cards import CardsRepository
from kandev_slack.store.cards.claims import ClaimsRepository
from kandev_slack.store.cards.followups import FollowupsRepository
from kandev_slack.store.cards.snoozes import SnoozesRepository
from kandev_slack.store.database import Database, StoreStats
from kandev_slack.store.errors import StoreError
from kandev_slack.store.migrations import SCHEMA_VERSION, Revision, migrate, revisions
from kandev_slack.store.people.digests import DigestsRepository
from kandev_slack.store.people.home import HomeViewersRepository
from kandev_slack.store.people.links import LinksRepository, NoSecretKey
from kandev_slack.store.queues.outbox import OutboxRepository
from kandev_slack.store.queues.submissions import SubmissionsRepository
from kandev_slack.store.records import (
    AuditEntry,
    KandevLink,
    OutboxEntry,
    OutboxStatus,
    Submission,
)
from kandev_slack.store.retention import Purged, Retention
from kandev_slack.store.sql.types import utc_now
from kandev_slack.store.sql.url import DEFAULT_DATABASE_URL, normalize_url


def __getattr__(name: str) -> tuple[Revision, ...]:
    """``REVISIONS`` (every schema revision, oldest first) is read on first use: it loads
    Alembic, which a serving process does not need (see migrations.py)."""
    if name == "REVISIONS":
        return revisions()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_DATABASE_URL",
    "REVISIONS",
    "SCHEMA_VERSION",
    "AuditEntry",
    "AuditRepository",
    "CardsRepository",
    "ClaimsRepository",
    "Database",
    "DigestsRepository",
    "FollowupsRepository",
    "HomeViewersRepository",
    "KandevLink",
    "LinksRepository",
    "NoSecretKey",
    "OutboxEntry",
    "OutboxRepository",
    "OutboxStatus",
    "Purged",
    "Retention",
    "Revision",
    "SnoozesRepository",
    "StoreError",
    "StoreStats",
    "Submission",
    "SubmissionsRepository",
    "migrate",
    "normalize_url",
    "revisions",
    "utc_now",
]
