"""Alembic's environment for kandev-slack's schema.

At run time :func:`kandev_slack.store.migrations.migrate` hands over its connection (in a
transaction,
under the migrators' lock) in ``config.attributes["connection"]``. Without one (a developer's
``command.revision(..., autogenerate=True)`` or ``command.upgrade`` on a config with
``sqlalchemy.url`` set) this opens that database the way the store does, under the same lock.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from kandev_slack.store.migrations import locked_transaction, record_legacy
from kandev_slack.store.schema import metadata
from kandev_slack.store.sql.engine import make_engine
from kandev_slack.store.sql.url import normalize_url


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection, target_metadata=metadata, on_version_apply=record_legacy
    )
    with context.begin_transaction():
        context.run_migrations()


def _main() -> None:
    if context.is_offline_mode():
        raise SystemExit("kandev-slack's migrations run on a database connection (no --sql)")
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit("set sqlalchemy.url (the DATABASE_URL) on the Alembic config")
    engine = make_engine(normalize_url(url))
    try:
        with locked_transaction(engine) as conn:
            _run(conn)
    finally:
        engine.dispose()


_main()
