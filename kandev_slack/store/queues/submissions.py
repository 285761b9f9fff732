"""Submissions: a lease per distinct answer so each one reaches Kandev once across replicas."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import and_, bindparam, delete, select, true, update

from kandev_slack.store.base import Repository, insert_unless_exists
from kandev_slack.store.records import Submission, SubmissionContent, SubmissionVerdict
from kandev_slack.store.schema import submissions
from kandev_slack.store.sql.write_queue import soon, urgent

#: The unfinished submission of a key (the statements built once: kandev_slack/store/base.py
#: ``Sql.prepared``).
_UNFINISHED = and_(
    submissions.c.submission_key == bindparam("key"), submissions.c.finished_at.is_(None)
)
#: How old a released submission's lease is made: older than any lease or recovery backoff.
RELEASED_LEASE_AGE_S = 24 * 3600.0


def _submission(row: Any) -> Submission:
    verdict = SubmissionVerdict.read(row.result_json)
    return Submission(
        submission_key=row.submission_key,
        pending_id=row.pending_id,
        user=row.user_id,
        content=SubmissionContent.decode(row.payload_json),
        verdict=None if verdict is None else verdict.kind,
        verdict_message="" if verdict is None else verdict.message,
        resends=row.resends,
        created_at=row.created_at,
        leased_at=row.leased_at,
        finished_at=row.finished_at,
    )


class SubmissionsRepository(Repository):
    """Submissions: one lease per distinct answer on its way to Kandev."""

    def begin_submission(
        self, pending_id: str, submission_key: str, user: str, content: SubmissionContent
    ) -> bool:
        """Record a submission before calling Kandev: True for the first caller with this key.

        ``submission_key`` identifies one distinct submission (e.g. the Slack action/view id
        plus the answers); a redelivery or a second replica gets False and must not call Kandev.
        A person's ack waits for this write: it goes before this process's other writers.
        """
        values = {
            "submission_key": submission_key,
            "pending_id": pending_id,
            "user_id": user,
            "payload_json": content.encode(),
            "result_json": None,
            "resends": 0,
            "finished_at": None,
        }
        with urgent(), self._write() as conn:

            def build() -> Any:
                now = self._now()
                return (
                    insert_unless_exists(conn, submissions, "submission_key")
                    .values(created_at=now, leased_at=now)
                    .returning(submissions.c.submission_key)
                )

            stmt = self._prepared("submissions.begin", build)
            return conn.execute(stmt, values).first() is not None

    def finish_submission(self, submission_key: str, verdict: str, message: str = "") -> bool:
        """Record what Kandev answered (``message``: what the person was told, to repeat it
        to a resubmission); False when unknown or already finished."""
        stmt = self._prepared(
            "submissions.finish",
            lambda: (
                update(submissions)
                .where(_UNFINISHED)
                .values(finished_at=self._now(), result_json=bindparam("verdict"))
            ),
        )
        verdict_json = SubmissionVerdict(kind=verdict, message=message).encode()
        with self._write() as conn:
            return (
                conn.execute(stmt, {"key": submission_key, "verdict": verdict_json}).rowcount == 1
            )

    def get_submission(self, submission_key: str) -> Submission | None:
        with self._read() as conn:
            row = conn.execute(
                select(submissions).where(submissions.c.submission_key == submission_key)
            ).first()
        return _submission(row) if row else None

    def unfinished_submissions(self, older_than_s: float = 0) -> list[Submission]:
        """Submissions without a verdict whose lease is at least ``older_than_s`` old."""
        with self._read() as conn:
            rows = conn.execute(
                select(submissions)
                .where(
                    submissions.c.finished_at.is_(None),
                    submissions.c.leased_at <= self._ago(older_than_s),
                )
                .order_by(submissions.c.leased_at, submissions.c.submission_key)
            ).all()
        return [_submission(row) for row in rows]

    def submission_in_flight(self, pending_id: str, within_s: float, *, besides: str = "") -> bool:
        """An unfinished submission for ``pending_id`` (other than the key ``besides``) whose
        lease was renewed within ``within_s`` by the database's clock: it is on its way."""
        stmt = self._prepared(
            ("submissions.in_flight", within_s),
            lambda: (
                select(submissions.c.submission_key)
                .where(
                    submissions.c.pending_id == bindparam("pending_id"),
                    submissions.c.submission_key != bindparam("besides"),
                    submissions.c.finished_at.is_(None),
                    submissions.c.leased_at >= self._ago(within_s),
                )
                .limit(1)
            ),
        )
        with self._read() as conn:
            return (
                conn.execute(stmt, {"pending_id": pending_id, "besides": besides}).first()
                is not None
            )

    def take_over_submission(self, submission_key: str, older_than_s: float) -> bool:
        """Take over an unfinished submission whose lease is ``older_than_s`` old (crash
        recovery): compare-and-set on the lease, so exactly one replica reconciles it. Counts
        the take-over in ``resends``."""
        return self._change_unfinished(
            submission_key,
            (submissions.c.leased_at <= self._ago(older_than_s),),
            leased_at=self._now(),
            resends=submissions.c.resends + 1,
        )

    def hold_submission(self, submission_key: str, holder: int, lease_s: float) -> bool:
        """The fence right before a submission is sent to Kandev: renew its lease, only while
        ``holder`` still holds it (its take-over count: 0 for the process that recorded it,
        ``resends`` for the recovery that reclaimed it) and the lease, ``lease_s`` long, is
        live, in the one statement. False: a process frozen past its lease (another replica
        may be re-sending it now) must not send it."""
        stmt = self._prepared(
            ("submissions.hold", lease_s),
            lambda: (
                update(submissions)
                .where(
                    _UNFINISHED,
                    submissions.c.resends == bindparam("holder"),
                    submissions.c.leased_at > self._ago(lease_s),
                )
                .values(leased_at=self._now())
            ),
        )
        # The answer waits for it on its way to Kandev: after acks, before others.
        with soon(), self._write() as conn:
            return conn.execute(stmt, {"key": submission_key, "holder": holder}).rowcount == 1

    def _change_unfinished(self, submission_key: str, conditions: Any, **values: Any) -> bool:
        """One compare-and-set on the unfinished submission ``submission_key``."""
        with self._write() as conn:
            stmt = (
                update(submissions)
                .where(
                    submissions.c.submission_key == submission_key,
                    submissions.c.finished_at.is_(None),
                    *conditions,
                )
                .values(**values)
            )
            return conn.execute(stmt).rowcount == 1

    def renew_submissions(
        self, submission_keys: Collection[str], lease_s: float | None = None
    ) -> int:
        """Refresh the lease of unfinished submissions this process is still sending (its
        heartbeat), so crash recovery never takes over a submission that is alive. With
        ``lease_s``, only live leases (a process woken from a freeze longer than its lease
        cannot revive one that recovery may have taken over)."""
        live = None if lease_s is None else submissions.c.leased_at > self._ago(lease_s)
        return self._lease_submissions(submission_keys, self._now(), live=live)

    def release_submissions(
        self, submission_keys: Collection[str], *, within_s: float | None = None
    ) -> int:
        """Make unfinished submissions this process will not finish stale now (their lease
        as old as a day), so crash recovery — on another replica, or this one after a
        restart — takes them over at its next cycle instead of after the lease period.
        ``within_s``: the statement's bound (PostgreSQL), see ``Sql.write``."""
        stale = self._ago(RELEASED_LEASE_AGE_S)
        return self._lease_submissions(submission_keys, stale, within_s)

    def _lease_submissions(
        self,
        submission_keys: Collection[str],
        leased_at: Any,
        within_s: float | None = None,
        *,
        live: Any = None,
    ) -> int:
        keys = list(submission_keys)
        if not keys:
            return 0
        with self._write(within_s) as conn:
            stmt = (
                update(submissions)
                .where(
                    submissions.c.submission_key.in_(keys),
                    submissions.c.finished_at.is_(None),
                    true() if live is None else live,
                )
                .values(leased_at=leased_at)
            )
            return int(conn.execute(stmt).rowcount)

    def submissions_for(self, pending_id: str) -> list[Submission]:
        """Every submission recorded for one bundle, oldest first."""
        with self._read() as conn:
            rows = conn.execute(
                select(submissions)
                .where(submissions.c.pending_id == pending_id)
                .order_by(submissions.c.created_at, submissions.c.submission_key)
            ).all()
        return [_submission(row) for row in rows]

    def drop_submission(self, submission_key: str) -> bool:
        """Forget an unfinished submission that never reached Kandev (so it may be retried)."""
        with self._write() as conn:
            stmt = delete(submissions).where(
                submissions.c.submission_key == submission_key,
                submissions.c.finished_at.is_(None),
            )
            return conn.execute(stmt).rowcount == 1

    def won_submission(self, pending_id: str) -> Submission | None:
        """The Slack submission that won this bundle in Kandev, if one did."""
        # Rows written before results were encoded here read {"kind": "won"} (with a space).
        won = (SubmissionVerdict(kind="won").encode(), '{"kind": "won"}')
        with self._read() as conn:
            row = conn.execute(
                select(submissions)
                .where(submissions.c.pending_id == pending_id, submissions.c.result_json.in_(won))
                .order_by(submissions.c.finished_at)
                .limit(1)
            ).first()
        return _submission(row) if row else None
