"""Schema versions, as Alembic revisions shipped in the package (``kandev_slack/store/alembic``).

``migrate`` runs at every start-up. It is idempotent (a database at head is left as it is) and
safe when several processes start at once: the whole upgrade runs in one transaction, on
PostgreSQL under a transaction-scoped advisory lock (per schema), on SQLite under
``BEGIN IMMEDIATE``. DDL is transactional on both, so a failed revision leaves the previous
version intact.

Revision ids are the schema versions, zero-padded (``0001`` … ``0010``), in one line without
branches; a revision's docstring's first line is what ``kandev-slack db upgrade`` prints. Rule:
a revision is never edited once released; a change of the tables in schema.py is a new
revision (``command.revision(alembic_config(), "what it does", rev_id="0011")``, autogenerate
works with ``sqlalchemy.url`` set on that config) with its DDL written out, not imported from
schema.py. Version 15 put triggers on ``cards`` and ``outbox`` (an older release's rows
get the kind their key says): on SQLite a batch alteration of either table drops them, so such
a revision creates them again.

Before Alembic, kandev-slack recorded its version in its own ``schema_version`` table (one row
per applied version). A database that has only that is stamped at the matching revision, then
upgraded. The table stays, kept in step with every revision applied (``record_legacy``), so a
release from before Alembic still recognises the version: it runs on a database at its own
version and refuses a newer one, as it always did.

Alembic (with Mako, and what Mako loads) is imported only when a revision is to be applied or
listed: a start on a database already at head reads the version with one query, and the
versions this kandev-slack knows from the revisions' file names (``versions/vNNNN_what.py``
holds revision ``NNNN``), so a serving process does not keep ~10 MB of migration machinery
it will not use again.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, func, insert, select, text
from sqlalchemy.engine import Connection

from kandev_slack.store.errors import StoreError
from kandev_slack.store.schema import schema_version
from kandev_slack.store.sql.engine import WRITE_OPTION
from kandev_slack.store.sql.types import utc_now

if TYPE_CHECKING:  # Alembic itself is loaded only to apply or list revisions
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext, MigrationInfo
    from alembic.script import ScriptDirectory

#: The Alembic scripts (env.py, versions/), beside this module in a clone and in an install.
SCRIPT_LOCATION = Path(__file__).resolve().parent / "alembic"

_PG_LOCK_SQL = text(
    "SELECT pg_advisory_xact_lock("
    "hashtext('kandev-slack schema ' || coalesce(current_schema(), '')))"
)


log = logging.getLogger("kandev_slack.store")


@dataclass(frozen=True)
class Revision:
    """One schema version: its number, Alembic revision id and what it does."""

    version: int
    revision: str
    description: str


def alembic_config(
    connection: Connection | None = None, script_location: Path = SCRIPT_LOCATION
) -> Config:
    """An Alembic configuration without an ini file; ``connection`` is the one env.py uses
    (otherwise env.py opens ``sqlalchemy.url``, as the ``alembic`` command line would)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(script_location))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def _version_of(revision: str) -> int:
    if not revision.isdigit():
        raise StoreError(f"the database has schema revision {revision!r}, unknown to kandev-slack")
    return int(revision)


def _revision_id(version: int) -> str:
    return f"{version:04d}"


@cache
def _scripts(script_location: Path) -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config(script_location=script_location))


@cache
def revisions(script_location: Path = SCRIPT_LOCATION) -> tuple[Revision, ...]:
    """Every revision, oldest first (loads Alembic and every revision script)."""
    scripts = _scripts(script_location)
    found = [
        Revision(version=_version_of(s.revision), revision=s.revision, description=s.doc)
        for s in scripts.walk_revisions()
    ]
    return tuple(reversed(found))


_REVISION_FILE = re.compile(r"v(\d{4})_\w+\.py")


@cache
def known_versions(script_location: Path = SCRIPT_LOCATION) -> tuple[int, ...]:
    """The version of every revision, oldest first, from the revisions' file names (the file
    ``versions/vNNNN_what.py`` holds revision ``NNNN``; tests/integration/store/test_schema.py
    holds them to Alembic's own list): what a start needs, without loading Alembic."""
    found = (
        _REVISION_FILE.fullmatch(path.name) for path in (script_location / "versions").iterdir()
    )
    return tuple(sorted(int(match.group(1)) for match in found if match))


#: The newest schema version this kandev-slack knows.
SCHEMA_VERSION = known_versions()[-1]


def __getattr__(name: str) -> tuple[Revision, ...]:
    """``REVISIONS``, every revision oldest first, read on first use (it loads Alembic)."""
    if name == "REVISIONS":
        return revisions()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _legacy_version(conn: Connection) -> int:
    """The version recorded the pre-Alembic way (0 without that table)."""
    if not conn.dialect.has_table(conn, schema_version.name):
        return 0
    return int(conn.scalar(select(func.max(schema_version.c.version))) or 0)


#: Alembic's record of the applied revision (one row: the schema has no branches).
ALEMBIC_VERSION_TABLE = "alembic_version"


def alembic_revision(conn: Connection) -> str | None:
    """The revision Alembic recorded (None before its first upgrade), read without Alembic."""
    if not conn.dialect.has_table(conn, ALEMBIC_VERSION_TABLE):
        return None
    found = list(conn.scalars(text(f"SELECT version_num FROM {ALEMBIC_VERSION_TABLE}")))
    if len(found) > 1:
        raise StoreError(f"the database records several schema revisions at once: {found}")
    return str(found[0]) if found else None


def current_revision(conn: Connection) -> str | None:
    """The database's revision id: Alembic's, else the one of its pre-Alembic version record
    (before its first migrate by this code); None for an empty database."""
    revision = alembic_revision(conn)
    if revision is not None:
        return revision
    legacy = _legacy_version(conn)
    return _revision_id(legacy) if legacy else None


def current_version(conn: Connection) -> int:
    """The applied schema version (0 for an empty database)."""
    revision = current_revision(conn)
    return 0 if revision is None else _version_of(revision)


def pending(conn: Connection, script_location: Path = SCRIPT_LOCATION) -> list[Revision]:
    """What ``migrate`` would apply, oldest first; changes nothing. Raises :class:`StoreError`
    for a database newer than this kandev-slack."""
    version = current_version(conn)
    _refuse_newer(version, known_versions(script_location))
    return [r for r in revisions(script_location) if r.version > version]


def _refuse_newer(version: int, known: tuple[int, ...]) -> None:
    head = known[-1] if known else 0
    if version > head or (version and version not in known):
        raise StoreError(
            f"the database has schema version {version}, newer than this kandev-slack "
            f"supports ({head}); upgrade kandev-slack or use another DATABASE_URL"
        )


@contextmanager
def locked_transaction(engine: Engine) -> Iterator[Connection]:
    """One write transaction that no other migrator runs beside (across processes)."""
    with engine.connect() as conn:
        conn.execution_options(**{WRITE_OPTION: True})
        with conn.begin():
            if conn.dialect.name == "postgresql":
                # A migration may take long, and waits for another replica's: unbounded here.
                conn.execute(text("SET LOCAL lock_timeout = 0"))
                conn.execute(text("SET LOCAL statement_timeout = 0"))
                conn.execute(_PG_LOCK_SQL)
            yield conn


def migrate(engine: Engine, target: str = "head", script_location: Path = SCRIPT_LOCATION) -> int:
    """Bring the database up to ``target`` (a revision id, default the newest); return the
    resulting version. A pre-Alembic database is stamped at its version first."""
    known = known_versions(script_location)
    with locked_transaction(engine) as conn:
        recorded = alembic_revision(conn)
        version = current_version(conn)
        _refuse_newer(version, known)
        if target == "head" and recorded == _revision_id(known[-1]):
            return version  # up to date: nothing to load (not even Alembic) or run
        with _quiet_alembic():
            return _upgrade(conn, recorded, version, target, script_location)


def up_to_date(engine: Engine, script_location: Path = SCRIPT_LOCATION) -> bool:
    """Whether the database is at this kandev-slack's head already (one read, no Alembic)."""
    with engine.connect() as conn:
        return alembic_revision(conn) == _revision_id(known_versions(script_location)[-1])


def upgrade_apart(engine: Engine) -> bool:
    """Bring the database up to date in a child process (a fork) when it is behind, so that
    the calling process — a replica about to serve — never loads Alembic: what it imports
    stays in memory for as long as the process lives. Call it before the process starts any
    thread. Returns whether the child brought it up to date; when it did not (no ``fork``
    here, or the upgrade failed), :func:`migrate` in the caller does it, or raises what the
    child met (the child only logs it)."""
    if not hasattr(os, "fork") or up_to_date(engine):
        return False
    engine.dispose()  # the child makes its own connections, never the parent's
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's end is seen through its exit status
        status = 1
        try:
            migrate(engine)
            status = 0
        except BaseException:
            log.exception("upgrading the schema in a child process failed")
        finally:
            os._exit(status)
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _upgrade(
    conn: Connection, recorded: str | None, version: int, target: str, script_location: Path
) -> int:
    from alembic import command
    from alembic.runtime.migration import MigrationContext

    if recorded is None and version:
        MigrationContext.configure(conn).stamp(_scripts(script_location), _revision_id(version))
    config = alembic_config(conn, script_location)
    config.attributes["from_version"] = version  # what a revision may decide by (0015)
    command.upgrade(config, target)
    return current_version(conn)


@contextmanager
def _quiet_alembic() -> Iterator[None]:
    """Alembic narrates every run at INFO ("Context impl …", "Will assume …"); the bot's own
    logs stay as they were."""
    logger = logging.getLogger("alembic")
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)


def record_legacy(
    ctx: MigrationContext,
    step: MigrationInfo,
    heads: Collection[Any],
    run_args: Mapping[str, Any],
) -> None:
    """``on_version_apply`` hook: record an applied revision in ``schema_version`` as well."""
    if not step.is_migration or not step.is_upgrade or step.up_revision_id is None:
        return
    conn = ctx.connection
    assert conn is not None
    if not conn.dialect.has_table(conn, schema_version.name):
        return  # dropped by hand: Alembic's own record is the one that counts
    script = step.revision_map.get_revision(step.up_revision_id)
    description = getattr(script, "doc", "") or ""
    conn.execute(
        insert(schema_version).values(
            version=_version_of(step.up_revision_id),
            description=description,
            applied_at=utc_now(),
        )
    )
