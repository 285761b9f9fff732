"""Durable state of kandev-slack (SQLAlchemy Core; SQLite by default, PostgreSQL for replicas).

Open a :class:`Database` and hand each use-case only the repositories it uses
(``db.cards``, ``db.submissions``, ``db.outbox``, ``db.followups``, ``db.audit_log``,
``db.viewers``, ``db.retention``). Everything else here is the typed rows and helpers.
"""

from bot.store.audit import AuditRepository
from bot.store.cards import CardsRepository
from bot.store.claims import ClaimsRepository
from bot.store.database import Database, StoreStats
from bot.store.errors import StoreError
from bot.store.followups import FollowupsRepository
from bot.store.home import HomeViewersRepository
from bot.store.migrations import REVISIONS, SCHEMA_VERSION, Revision, migrate
from bot.store.outbox import OutboxRepository
from bot.store.records import AuditEntry, OutboxItem, OutboxStatus, Submission
from bot.store.retention import Purged, Retention
from bot.store.snoozes import SnoozesRepository
from bot.store.submissions import SubmissionsRepository
from bot.store.types import utc_now
from bot.store.url import DEFAULT_DATABASE_URL, normalize_url

__all__ = [
    "DEFAULT_DATABASE_URL",
    "REVISIONS",
    "SCHEMA_VERSION",
    "AuditEntry",
    "AuditRepository",
    "CardsRepository",
    "ClaimsRepository",
    "Database",
    "FollowupsRepository",
    "HomeViewersRepository",
    "OutboxItem",
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
    "utc_now",
]
