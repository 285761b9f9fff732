"""People's own Kandev accounts: each Slack person's link to their Kandev user, with their
personal access token sealed by KANDEV_SLACK_SECRET_KEY (kandev_slack/ops/vault.py), and the
one click a person not yet connected left parked until they connect.

A token is in clear only in memory, in the :class:`KandevLink` a read returns (whose repr never
shows it); the database holds only what the vault sealed. A row no key opens any more (its key
was dropped from KANDEV_SLACK_SECRET_KEY) reads as a broken link with an empty token, never as
an error: that person is asked to connect again. :meth:`LinksRepository.mark_broken` is a
compare-and-set on the sealed token read, so a reconnect that races a 401 of the old token is
never marked broken. Every timestamp is the database's clock (kandev_slack/store/base.py).
"""

from __future__ import annotations

import hmac
import json
import logging
import threading
from datetime import datetime
from typing import Any

from sqlalchemy import Row, delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from kandev_slack.ops.vault import SECRET_KEY_SETTING, Vault, VaultError
from kandev_slack.store.base import Repository, Sql
from kandev_slack.store.errors import StoreError
from kandev_slack.store.records import KandevLink
from kandev_slack.store.schema import kandev_links, parked_clicks

log = logging.getLogger(__name__)


class NoSecretKey(StoreError):
    """A Kandev token cannot be stored: KANDEV_SLACK_SECRET_KEY is not set."""

    def __init__(self) -> None:
        super().__init__(
            f"{SECRET_KEY_SETTING} is not set: a person's Kandev token is never stored "
            f"unencrypted; run `kandev-slack secret-key` and set {SECRET_KEY_SETTING} to the "
            "key it prints"
        )


class LinksRepository(Repository):
    """Slack people linked to their Kandev accounts, and their parked clicks. ``vault`` None
    (no KANDEV_SLACK_SECRET_KEY): nothing can be linked, and a stored link reads as broken."""

    def __init__(self, sql: Sql, vault: Vault | None) -> None:
        super().__init__(sql)
        self._vault = vault
        #: The people whose unreadable token was logged already (once per person and process).
        self._unopened: set[str] = set()
        self._unopened_lock = threading.Lock()

    @property
    def stores_tokens(self) -> bool:
        """Whether tokens can be stored here (a secret key is set)."""
        return self._vault is not None

    # ---- links ----------------------------------------------------------------------------

    def link(
        self,
        slack_user_id: str,
        kandev_user_id: str,
        display_name: str | None,
        email: str | None,
        token: str,
    ) -> None:
        """Link (or link anew) ``slack_user_id`` to ``kandev_user_id`` with ``token``, sealed:
        replaces an earlier link of that person and clears its broken mark. Raises
        :class:`NoSecretKey` without a vault, ValueError on an empty id or token."""
        if not slack_user_id or not kandev_user_id:
            raise ValueError("a Kandev link needs a Slack user id and a Kandev user id")
        if not token:
            raise ValueError("a Kandev link needs a token")
        if self._vault is None:
            raise NoSecretKey()
        now = self._now()
        values = {
            "slack_user_id": slack_user_id,
            "kandev_user_id": kandev_user_id,
            "display_name": display_name or None,
            "email": email or None,
            "token_sealed": self._vault.seal(token),
            "linked_at": now,
            "checked_at": now,
            "broken_at": None,
        }
        with self._write() as conn:
            make = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            stmt = make(kandev_links).values(**values)
            replaced = {name: stmt.excluded[name] for name in values if name != "slack_user_id"}
            conn.execute(
                stmt.on_conflict_do_update(index_elements=["slack_user_id"], set_=replaced)
            )
        with self._unopened_lock:
            self._unopened.discard(slack_user_id)

    def get(self, slack_user_id: str) -> KandevLink | None:
        """The person's link, None when they never linked (or unlinked). A token no key opens
        reads as a broken link with an empty token."""
        stmt = select(kandev_links, self._now().label("db_now")).where(
            kandev_links.c.slack_user_id == slack_user_id
        )
        with self._read() as conn:
            row = conn.execute(stmt).first()
        return None if row is None else self._link(row)

    def by_kandev_user(self, kandev_user_id: str) -> KandevLink | None:
        """The Slack person linked to ``kandev_user_id`` (a working link first, then the
        latest), None when nobody is."""
        stmt = (
            select(kandev_links, self._now().label("db_now"))
            .where(kandev_links.c.kandev_user_id == kandev_user_id)
            .order_by(
                kandev_links.c.broken_at.is_(None).desc(),
                kandev_links.c.linked_at.desc(),
                kandev_links.c.slack_user_id,
            )
            .limit(1)
        )
        with self._read() as conn:
            row = conn.execute(stmt).first()
        return None if row is None else self._link(row)

    def all_links(self) -> list[KandevLink]:
        """Every link, by Slack user id (broken ones too)."""
        stmt = select(kandev_links, self._now().label("db_now")).order_by(
            kandev_links.c.slack_user_id
        )
        with self._read() as conn:
            rows = conn.execute(stmt).all()
        return [self._link(row) for row in rows]

    def unlink(self, slack_user_id: str) -> bool:
        """Forget the person's link (their token with it) and their parked click; False when
        they had no link."""
        with self._write() as conn:
            conn.execute(
                delete(parked_clicks).where(parked_clicks.c.slack_user_id == slack_user_id)
            )
            gone = conn.execute(
                delete(kandev_links).where(kandev_links.c.slack_user_id == slack_user_id)
            ).rowcount
        with self._unopened_lock:
            self._unopened.discard(slack_user_id)
        return bool(gone)

    def mark_broken(self, slack_user_id: str, token: str) -> bool:
        """Mark the person's link broken (Kandev refused ``token``) — only while the stored
        token is still ``token``: True then (also when it was marked already), False when the
        person linked another token meanwhile, has no link, or no key opens theirs."""
        if not token or self._vault is None:
            return False
        with self._write() as conn:
            sealed = conn.scalar(
                select(kandev_links.c.token_sealed).where(
                    kandev_links.c.slack_user_id == slack_user_id
                )
            )
            if sealed is None or not self._holds(sealed, token):
                return False
            marked = conn.execute(
                update(kandev_links)
                .where(
                    kandev_links.c.slack_user_id == slack_user_id,
                    kandev_links.c.token_sealed == sealed,  # the fence: no reconnect since
                )
                .values(broken_at=func.coalesce(kandev_links.c.broken_at, self._now()))
            ).rowcount
        return bool(marked)

    def counts(self) -> tuple[int, int]:
        """(people linked whose link works, broken links), in one read."""
        stmt = select(func.count(), func.count(kandev_links.c.broken_at))
        with self._read() as conn:
            total, broken = conn.execute(stmt).one()
        return int(total or 0) - int(broken or 0), int(broken or 0)

    def reseal_all(self) -> int:
        """Seal anew under the newest key every token an older key of KANDEV_SLACK_SECRET_KEY
        sealed (run once at start-up: a key rotation completes, and the old key may then go);
        how many were. A token no key opens is left as it is (logged)."""
        vault = self._vault
        if vault is None:
            return 0
        with self._read() as conn:
            rows = conn.execute(
                select(kandev_links.c.slack_user_id, kandev_links.c.token_sealed)
            ).all()
        stale: list[tuple[str, str, str]] = []
        unopened = 0
        for row in rows:
            if vault.sealed_with_newest(row.token_sealed):
                continue
            try:
                stale.append((row.slack_user_id, row.token_sealed, vault.reseal(row.token_sealed)))
            except VaultError:
                unopened += 1
        moved = 0
        if stale:
            with self._write() as conn:
                moved = sum(self._reseal(conn, *change) for change in stale)
        if unopened:
            log.warning(
                "%d Kandev link(s) sealed under a key no longer in %s: those people are asked "
                "to connect again",
                unopened,
                SECRET_KEY_SETTING,
            )
        if moved:
            log.info("%d Kandev token(s) sealed anew under the newest key", moved)
        return moved

    # ---- parked clicks --------------------------------------------------------------------

    def park_click(self, slack_user_id: str, pending_id: str, payload: dict[str, Any]) -> None:
        """Keep what the person clicked (``payload``, JSON) on ``pending_id`` until they
        connect; replaces their earlier parked click."""
        if not slack_user_id or not pending_id:
            raise ValueError("a parked click needs a Slack user id and a pending id")
        if not isinstance(payload, dict):
            raise TypeError(f"a parked click's payload is a dict, not {type(payload).__name__}")
        now = self._now()
        values = {
            "slack_user_id": slack_user_id,
            "pending_id": pending_id,
            "payload": json.dumps(payload, sort_keys=True, separators=(",", ":")),
            "parked_at": now,
        }
        with self._write() as conn:
            make = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            stmt = make(parked_clicks).values(**values)
            replaced = {name: stmt.excluded[name] for name in values if name != "slack_user_id"}
            conn.execute(
                stmt.on_conflict_do_update(index_elements=["slack_user_id"], set_=replaced)
            )

    def take_parked_click(
        self, slack_user_id: str, max_age_s: float
    ) -> tuple[str, dict[str, Any]] | None:
        """Take the person's parked click, deleting it in the same statement (whoever takes it
        first has it): (its pending id, its payload) when it was parked within ``max_age_s``
        by the database's clock, else None (an older one is deleted all the same)."""
        if not max_age_s >= 0:
            raise ValueError(f"max_age_s must be a number of seconds from 0 (got {max_age_s!r})")
        fresh = parked_clicks.c.parked_at >= self._ago(max_age_s)
        stmt = (
            delete(parked_clicks)
            .where(parked_clicks.c.slack_user_id == slack_user_id)
            .returning(parked_clicks.c.pending_id, parked_clicks.c.payload, fresh.label("fresh"))
        )
        with self._write() as conn:
            row = conn.execute(stmt).first()
        if row is None or not row.fresh:
            return None
        try:
            payload = json.loads(row.payload)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            log.warning("the parked click of %s was not a stored click; dropped", slack_user_id)
            return None
        return str(row.pending_id), payload

    # ---- helpers --------------------------------------------------------------------------

    def _reseal(self, conn: Connection, slack_user_id: str, old: str, new: str) -> int:
        """Replace the sealed token ``old`` by ``new``, unless the person linked anew since."""
        return int(
            conn.execute(
                update(kandev_links)
                .where(
                    kandev_links.c.slack_user_id == slack_user_id,
                    kandev_links.c.token_sealed == old,
                )
                .values(token_sealed=new)
            ).rowcount
        )

    def _holds(self, sealed: str, token: str) -> bool:
        """Whether ``sealed`` opens to ``token`` (False when no key opens it)."""
        assert self._vault is not None
        try:
            stored = self._vault.open(sealed)
        except VaultError:
            return False
        return hmac.compare_digest(stored.encode("utf-8"), token.encode("utf-8"))

    def _link(self, row: Row[Any]) -> KandevLink:
        """A stored row as a link; a token no key opens: broken (since now), token empty."""
        token = ""
        broken_at: datetime | None = row.broken_at
        if self._vault is not None:
            try:
                token = self._vault.open(row.token_sealed)
            except VaultError:
                token = ""
        if not token:
            broken_at = broken_at or row.db_now
            self._say_unopened(row.slack_user_id)
        return KandevLink(
            slack_user_id=row.slack_user_id,
            kandev_user_id=row.kandev_user_id,
            display_name=row.display_name or "",
            email=row.email or "",
            token=token,
            linked_at=row.linked_at,
            broken_at=broken_at,
        )

    def _say_unopened(self, slack_user_id: str) -> None:
        with self._unopened_lock:
            if slack_user_id in self._unopened:
                return
            self._unopened.add(slack_user_id)
        why = "no key of it opens" if self._vault is not None else "it is not set, nothing opens"
        log.warning(
            "the Kandev link of %s reads as broken: %s %s their token; they are asked to "
            "connect again",
            slack_user_id,
            SECRET_KEY_SETTING,
            why,
        )
