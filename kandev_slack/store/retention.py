"""Retention: what is old enough to delete, across every table, in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select

from kandev_slack.store.base import Sql
from kandev_slack.store.kinds import resolved as kind_resolved
from kandev_slack.store.records import OutboxStatus
from kandev_slack.store.schema import (
    audit_log,
    card_followups,
    card_messages,
    cards,
    digests_sent,
    dm_gathers,
    home_viewers,
    outbox,
    parked_clicks,
    submissions,
    thread_replies,
)

#: Finished outbox rows only keep their dedupe keys (a redelivered change is not re-sent):
#: after a week nothing re-sends them, so they are kept that long at most.
OUTBOX_KEEP = timedelta(days=7)
#: A click parked until its person connects is offered for minutes; a day after, it goes.
PARKED_KEEP = timedelta(days=1)
#: How long resolved cards, audit entries and Home viewers are kept (RETENTION_DAYS).
DEFAULT_RETENTION_DAYS = 90


@dataclass(frozen=True)
class Purged:
    """How many rows one :meth:`Retention.purge` deleted, per table."""

    cards: int = 0
    submissions: int = 0
    outbox: int = 0
    audit: int = 0
    home_viewers: int = 0
    thread_replies: int = 0
    gatherings: int = 0


class Retention:
    """Deletes what the retention period ``keep`` no longer covers (RETENTION_DAYS)."""

    def __init__(self, sql: Sql, keep: timedelta = timedelta(days=DEFAULT_RETENTION_DAYS)) -> None:
        self._sql = sql
        self.keep = keep

    def purge(self, older_than: timedelta | None = None) -> Purged:
        """Delete what is older than the retention period ``older_than`` (default:
        :attr:`keep`), by the database's clock, in one transaction: cards resolved before it
        with their submissions, finished submissions and audit entries from before it, Home
        viewers not seen since, gathering DMs no card joined since (a card of a forgotten
        gathering comes on its own), and finished outbox rows and thread replies offered as an
        answer (at most :data:`OUTBOX_KEEP` old: a prompt's buttons die with its response_url
        after 30 min, a redelivery comes within minutes), and clicks parked by people who
        never connected (at most :data:`PARKED_KEEP` old).
        Waiting cards, unfinished submissions and pending outbox rows are never deleted."""
        older_than = self.keep if older_than is None else older_than
        cutoff = self._sql.ago(older_than.total_seconds())
        outbox_cutoff = self._sql.ago(min(older_than, OUTBOX_KEEP).total_seconds())
        # Only cards of a kind this release knows (a newer kind's are left alone).
        resolved = select(cards.c.pending_id).where(kind_resolved(), cards.c.resolved_at <= cutoff)
        finished = (OutboxStatus.DONE.value, OutboxStatus.FAILED.value)
        with self._sql.write() as conn:
            # Two statements, each on its own index: one ``IN (...) OR ...`` reads the whole
            # table on PostgreSQL (a hashed subplan cannot drive an index).
            subs = conn.execute(
                delete(submissions).where(submissions.c.pending_id.in_(resolved))
            ).rowcount
            subs += conn.execute(
                delete(submissions).where(
                    submissions.c.finished_at.is_not(None), submissions.c.finished_at <= cutoff
                )
            ).rowcount
            for table in (card_messages, card_followups):  # a purged card's other messages
                conn.execute(delete(table).where(table.c.pending_id.in_(resolved)))
            gone = conn.execute(
                delete(cards).where(kind_resolved(), cards.c.resolved_at <= cutoff)
            ).rowcount
            rows = conn.execute(
                delete(outbox).where(
                    outbox.c.status.in_(finished), outbox.c.finished_at <= outbox_cutoff
                )
            ).rowcount
            entries = conn.execute(delete(audit_log).where(audit_log.c.at <= cutoff)).rowcount
            viewers = conn.execute(
                delete(home_viewers).where(home_viewers.c.opened_at <= cutoff)
            ).rowcount
            replies = conn.execute(
                delete(thread_replies).where(thread_replies.c.created_at <= outbox_cutoff)
            ).rowcount
            gatherings = conn.execute(
                delete(dm_gathers).where(dm_gathers.c.last_at <= cutoff)
            ).rowcount
            # a digest's (target, local date) row matters on its day only
            conn.execute(delete(digests_sent).where(digests_sent.c.sent_at <= cutoff))
            # a click parked by someone who never connected
            parked_cutoff = self._sql.ago(min(older_than, PARKED_KEEP).total_seconds())
            conn.execute(delete(parked_clicks).where(parked_clicks.c.parked_at <= parked_cutoff))
        return Purged(
            cards=gone,
            submissions=subs,
            outbox=rows,
            audit=entries,
            home_viewers=viewers,
            thread_replies=replies,
            gatherings=gatherings,
        )
