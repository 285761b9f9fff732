"""An SQLite file deleted, replaced or made read-only under a running store: noticed, every
write refused (nothing lands in the unlinked file), no empty file created in its place; the
original file put back: writes resume."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev_slack.store import Database
from kandev_slack.store.errors import DatabaseLost
from tests.kit.factories import record_card


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "kandev-slack.db"


@pytest.fixture
def db(path: Path) -> Iterator[Database]:
    with Database(f"sqlite:///{path}") as opened:
        record_card(opened, "p1")
        yield opened


def _remove(path: Path) -> None:
    for companion in path.parent.glob(path.name + "*"):  # rm kandev-slack.db*
        companion.unlink()


def test_a_deleted_file_refuses_writes_and_is_not_created_again(db: Database, path: Path) -> None:
    assert db.problem() is None
    _remove(path)

    assert db.problem() == "the database file kandev-slack.db was deleted"
    with pytest.raises(DatabaseLost):
        db.audit_log.audit("p1", "U1", "answer", "button", "won")
    with pytest.raises(DatabaseLost):
        record_card(db, "p2")
    db.sql.engine.dispose()  # the next read needs a new connection: refused, no empty file
    with pytest.raises(DatabaseLost):
        db.cards.get("p1")
    assert not path.exists()


def test_a_replaced_file_refuses_writes(db: Database, path: Path, tmp_path: Path) -> None:
    backup = tmp_path / "backup.db"
    shutil.copy(path, backup)
    os.replace(backup, path)  # a restore by mv

    assert db.problem() == "the database file kandev-slack.db was replaced by another file"
    with pytest.raises(DatabaseLost):
        db.audit_log.audit("p1", "U1", "answer", "button", "won")


def test_the_original_file_put_back_writes_again(db: Database, path: Path, tmp_path: Path) -> None:
    aside = tmp_path / "aside.db"
    os.link(path, aside)
    path.unlink()
    assert db.problem() is not None
    os.link(aside, path)  # the very same file (inode) is back

    assert db.problem() is None
    db.audit_log.audit("p1", "U1", "answer", "button", "won")
    assert db.audit_log.audit_entries("p1")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_a_read_only_file_refuses_writes(db: Database, path: Path) -> None:
    path.chmod(0o400)
    assert db.problem() == "the database file kandev-slack.db is not writable"
    with pytest.raises(DatabaseLost):
        db.audit_log.audit("p1", "U1", "answer", "button", "won")
