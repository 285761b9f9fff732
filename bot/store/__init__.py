"""Durable state of kandev-slack (SQLAlchemy Core; SQLite by default, PostgreSQL for replicas).

Use :class:`Store`; everything else here is the typed rows it returns and a few helpers.
"""

from bot.store.errors import StoreError
from bot.store.migrations import REVISIONS, SCHEMA_VERSION, Revision, migrate
from bot.store.records import AuditEntry, OutboxItem, OutboxStatus, Submission
from bot.store.store import Store
from bot.store.types import utc_now
from bot.store.url import DEFAULT_DATABASE_URL, normalize_url

__all__ = [
    "DEFAULT_DATABASE_URL",
    "REVISIONS",
    "SCHEMA_VERSION",
    "AuditEntry",
    "OutboxItem",
    "OutboxStatus",
    "Revision",
    "Store",
    "StoreError",
    "Submission",
    "migrate",
    "normalize_url",
    "utc_now",
]
