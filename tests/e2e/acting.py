"""What the "acting as them" tests share (issue 32, point 4): the bot on the people's Kandev
(``kandev_people``) behind a recording proxy, a routing file naming the identity mode, and the
Slack people linked to Kandev accounts directly through the store (the Connect UI is not what
is tested here).

Kandev records no author on a clarification's answer, so which token answered is read from the
proxy: each answer call keeps its bearer's display prefix (``KandevProxy``, ``bearer_of``).
Approvals are also checked in Kandev's own audit (``permission_resolution.actor_user_id``)."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from kandev_slack.kits.fakeslack import ALICE, BOB, FakeSlack, SlackDriver, SlackUser
from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database
from kandev_slack.store.records import KandevLink
from tests.e2e.helpers import outcome_line, start_bot
from tests.kit.harness import (
    CHANNEL,
    PG_ADMIN,
    BotProcess,
    Cast,
    InProcessBot,
    KandevProxy,
    Person,
    bearer_of,
)
from tests.kit.polling import eventually

#: The Slack people of these tests. Alice is linked to Ana (collaborator on the default
#: workspace) unless a test says otherwise; Bob to Ben (a viewer there); Cat to Cat (in no
#: workspace); Dora is never linked.
CAT = SlackUser(id="U0CAT00003", name="cat", real_name="Cat Stevens")
DORA = SlackUser(id="U0DORA0004", name="dora", real_name="Dora Explorer")
__all__ = ["ALICE", "BOB", "CAT", "DORA", "Scene", "pg_database", "scene"]

PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test?options=-csearch_path%3D{schema}"


@dataclass
class Scene:
    """The bot (in this process or as a process), its driver, the proxy in front of Kandev,
    the cast, and what the store needs to link people (the bot's database and secret key)."""

    bot: InProcessBot | BotProcess
    driver: SlackDriver
    proxy: KandevProxy
    cast: Cast
    fake: FakeSlack
    db_url: str
    key: str

    @contextmanager
    def store(self) -> Iterator[Database]:
        """The bot's database, opened here with its secret key (its links readable)."""
        if isinstance(self.bot, InProcessBot) and self.bot.bot is not None:
            yield self.bot.bot.store
            return
        with Database(self.db_url, vault=Vault.from_keys(self.key)) as store:
            yield store

    def link(self, user: SlackUser, person: Person, token: str | None = None) -> None:
        """Link ``user`` to ``person``'s Kandev account (their token, or ``token``)."""
        self.driver.user(user)  # a person the fake Slack knows
        with self.store() as store:
            store.links.link(
                user.id, person.user_id, person.display_name, person.email, token or person.token
            )

    def link_of(self, user: SlackUser) -> KandevLink | None:
        with self.store() as store:
            return store.links.get(user.id)

    def bearers(self, pending_id: str, *, at_least: int = 1) -> list[str]:
        """Whose token made each answer call of ``pending_id`` that reached Kandev (display
        prefixes, in order), once ``at_least`` did (the proxy records a call once Kandev
        replied, a moment after Kandev's record shows it)."""

        def recorded() -> list[str] | None:
            calls = self.proxy.answer_calls(pending_id)
            return [call.bearer for call in calls] if len(calls) >= at_least else None

        return eventually(recorded, timeout=10)

    def sent_nothing(self, pending_id: str) -> bool:
        """No answer call of ``pending_id`` reached the proxy (delivered or not)."""
        return self.proxy.answer_calls(pending_id, delivered_only=False) == []

    def as_(self, person: Person) -> str:
        return bearer_of(person.token)

    def pending_in_kandev(self, task_id: str, pending_id: str) -> bool:
        return self.cast.server.final_status(task_id, pending_id)["status"] == "pending"

    def unchanged(self, ts: str, edits: int) -> bool:
        """The card at ``ts`` waits, with no edit since ``edits`` were counted."""
        return outcome_line(self.fake.message(CHANNEL, ts)) is None and self.edits(ts) == edits

    def edits(self, ts: str) -> int:
        return len([c for c in self.fake.calls("chat.update") if c.ok and c.params.get("ts") == ts])


def routing(tmp_path: Path, identity: str, answerers: list[str] | None = None) -> Path:
    config = tmp_path / f"routing-{uuid.uuid4().hex[:6]}.toml"
    lines = ["[defaults]", f'channel = "{CHANNEL}"', f'identity = "{identity}"']
    if answerers is not None:
        lines.append("answerers = [" + ", ".join(f'"{a}"' for a in answerers) + "]")
    config.write_text("\n".join(lines) + "\n")
    return config


def scene(
    factory: Callable[..., InProcessBot] | Callable[..., BotProcess],
    cast: Cast,
    fake: FakeSlack,
    slack_driver: Callable[..., SlackDriver],
    tmp_path: Path,
    proxy: KandevProxy,
    *,
    identity: str = "linked",
    answerers: list[str] | None = None,
    db_url: str | None = None,
    mode: str = "http",
) -> Scene:
    """The bot with ``identity`` in its [defaults] (and ``answerers``), its Kandev behind
    ``proxy`` (push hints off: the proxy counts every call), a fresh secret key."""
    key = Vault.new_key()
    env: dict[str, str] = {
        "KANDEV_URL": proxy.base_url,
        "KANDEV_HINTS": "off",
        "KANDEV_SLACK_CONFIG": str(routing(tmp_path, identity, answerers)),
        "KANDEV_SLACK_SECRET_KEY": key,
    }
    if mode != "http":
        env["mode"] = mode
    if db_url is not None:
        env["db_url"] = db_url
    bot = start_bot(factory, **env)
    driver = slack_driver(transport="socket") if mode == "socket" else slack_driver(bot.events_url)
    for user in (ALICE, BOB, CAT, DORA):
        driver.user(user)
    return Scene(bot, driver, proxy, cast, fake, bot.env["DATABASE_URL"], key)


@contextmanager
def pg_database() -> Iterator[str]:
    """DATABASE_URL of a fresh PostgreSQL schema, dropped afterwards (skipped when
    PostgreSQL is unreachable, except on CI)."""
    schema = f"kandev_slack_acting_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"PostgreSQL unreachable on CI: {exc}", pytrace=False)
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    with admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            yield PG_URL.format(schema=schema)
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def quietly(fake: FakeSlack, seconds: float = 1.0) -> None:
    """Let whatever the bot would still do arrive (it must not: the assertions after say)."""
    fake.settle(quiet=seconds, timeout=10)
    time.sleep(0.2)
