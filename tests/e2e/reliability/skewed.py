"""A bot replica whose machine clock is off: runs in a spawned process (see test_clock_skew.py).

``skew_clock`` shifts the Python clock of every loaded ``bot`` module (their ``datetime``) by a
number of seconds, as a replica on a machine with a drifting clock would see time; the database
keeps its own clock.
"""

from __future__ import annotations

import datetime as _dt
import sys
import time
from typing import Any

_REAL = _dt.datetime


class _AnyDatetime(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _REAL)


def skew_clock(offset_s: float) -> None:
    """From now on ``datetime.now()`` in every loaded ``bot.*`` module is ``offset_s`` off."""

    class Skewed(_REAL, metaclass=_AnyDatetime):
        @classmethod
        def now(cls, tz: Any = None) -> _dt.datetime:  # type: ignore[override]
            return _REAL.now(tz) + _dt.timedelta(seconds=offset_s)

    for name, module in list(sys.modules.items()):
        if name.startswith("bot.") and getattr(module, "datetime", None) is _REAL:
            module.datetime = Skewed  # type: ignore[attr-defined]


def replica(
    url: str, name: str, offset_s: float, work_s: float, live_key: str, results: Any
) -> None:
    """Drain the outbox like a publisher whose Slack calls take ``work_s`` each, then try to
    take over the submission ``live_key`` as crash recovery would. Puts ``(name, report)``."""
    try:
        from kandev_slack.store import Database
        from kandev_slack.usecases.leases import OUTBOX_LEASE_S, SUBMISSION_LEASE_S

        skew_clock(offset_s)
        taken: list[int] = []
        with Database(url) as store:
            deadline = time.monotonic() + 60
            while store.outbox.outbox_pending_count() and time.monotonic() < deadline:
                batch = store.outbox.outbox_take(None, 1, name, lease_s=OUTBOX_LEASE_S)
                for item in batch:
                    taken.append(item.id)
                    time.sleep(work_s)  # the Slack call
                    store.outbox.outbox_done(item.id)
                if not batch:
                    time.sleep(0.02)
            stale = [
                s.submission_key
                for s in store.submissions.unfinished_submissions(older_than_s=SUBMISSION_LEASE_S)
            ]
            reclaimed = store.submissions.take_over_submission(live_key, SUBMISSION_LEASE_S)
        results.put((name, {"taken": taken, "stale": stale, "reclaimed": reclaimed}))
    except BaseException as exc:  # report instead of leaving the parent waiting
        results.put((name, {"error": repr(exc)}))
        raise
