"""15. A click made with a person's own Kandev token (issue 32): a signed click on an option
button by a person linked to their Kandev account → the agent has the answer (and → the card
edited), beside the same click by a person who is not linked, so made with the bot's token — in
the same run, same bot, same route (``identity = "linked"``), one after the other (each path
first by turns) so both see the same conditions. Target: p50 within 5 ms of the bot's.

Kandev with auth on has people only then, so this scenario starts its own Kandev (auth and the
Needs-you inbox on) with the tests' cast (kandevkit ``Cast``: the bot is its admin, Ana a
collaborator on its default workspace) and runs the bot as a process (waitress, SQLite, push
hints on) on it, Alice linked to Ana through the store (her token sealed with the bot's
``KANDEV_SLACK_SECRET_KEY``). Each bundle asks a question of its own (no identical questions:
no Send-to-all offer in either path), its mock agent waiting. One pair of clicks first warms
both paths (not timed: Ana's client is made and her workspaces read then; kept 60 s after).
Last, Alice allows one tool-permission request and Kandev's own audit must name Ana
(``permission_resolution.actor_user_id``): the row measured what it says.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from bench.cardlog import CardLog
from bench.scenarios.answering import AGENT_TIMEOUT_S, EDIT_TIMEOUT_S, PAUSE_S
from bench.stats import Summary
from bench.transport import KeepAliveTransport
from bench.world import World, wait_synced
from kandev_slack.kits.fakeslack import ALICE, BOB, SlackDriver, SlackUser
from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database
from tests.kit.harness import (
    BLOCK_SIZE,
    INSTANCE_OFFSET,
    BotProcess,
    Cast,
    KandevServer,
    Permissions,
    SeededBundle,
    bot_env,
    ensure_runtime,
    permission_spec,
    question,
)

#: The person linked to their Kandev account (Ana's), and the one who is not (the bot's token).
LINKED, UNLINKED = ALICE, BOB
#: Agents started at once while seeding.
SEED_WORKERS = 4
PORT_MARGIN = 10


@dataclass
class IdentityBench:
    clicks: int  # timed clicks per path
    linked_agent: Summary | None = None  # their token: click → the agent has the answer
    bot_agent: Summary | None = None  # the bot's token: the same
    linked_card: Summary | None = None  # their token: click → the card edited
    bot_card: Summary | None = None
    credited: bool | None = None  # Kandev's audit named Ana for Alice's approval
    problems: list[str] = field(default_factory=list)

    @property
    def p50_gap_ms(self) -> float | None:
        """Their token's click → agent p50 minus the bot's."""
        if self.linked_agent is None or self.bot_agent is None:
            return None
        return self.linked_agent.median - self.bot_agent.median


@dataclass
class _Samples:
    linked_agent: list[float] = field(default_factory=list)
    bot_agent: list[float] = field(default_factory=list)
    linked_card: list[float] = field(default_factory=list)
    bot_card: list[float] = field(default_factory=list)


def run(world: World, *, clicks: int) -> IdentityBench:
    result = IdentityBench(clicks)
    cells = math.ceil((2 * (clicks + 1) + 1 + PORT_MARGIN + INSTANCE_OFFSET) / BLOCK_SIZE)
    server = KandevServer(
        ensure_runtime(), auth=True, features=["needs_you_inbox"], port_cells=max(1, cells)
    )
    try:
        server.start()
        cast = Cast.build(server)
        _measure(world, cast, clicks, result)
    finally:
        server.close()
    return result


def _measure(world: World, cast: Cast, clicks: int, result: IdentityBench) -> None:
    channel = world.routes[0].channel
    routing = world.work_dir / "identity-routing.toml"
    routing.write_text(f'[defaults]\nchannel = "{channel}"\nidentity = "linked"\n')
    key = Vault.new_key()
    db_url = f"sqlite:///{world.work_dir / 'identity.db'}"
    fake = world.fake_slack()
    env = bot_env(
        fake,
        cast.server,
        db_url,
        KANDEV_POLL_INTERVAL="5",
        KANDEV_SLACK_CONFIG=str(routing),
        KANDEV_SLACK_SECRET_KEY=key,
    )
    bot = BotProcess(env, mode="http", log_path=world.work_dir / "identity.log")
    transport = KeepAliveTransport(bot.events_url, fake.workspace.signing_secret)
    samples = _Samples()
    try:
        bot.start()
        wait_synced(bot)
        _link(db_url, key, LINKED, cast)
        log = CardLog(fake)
        bundles = _seed(cast.server, 2 * (clicks + 1))
        if not log.wait_posted([b.pending_id for b in bundles], timeout=120.0):
            result.problems.append("identity: not every seeded bundle got a card within 120 s")
        fake.settle(quiet=1.0, timeout=60.0)
        driver = SlackDriver(fake, transport)
        pairs = list(zip(bundles[0::2], bundles[1::2], strict=True))
        for n, (theirs, bots) in enumerate(pairs):
            kept = samples if n > 0 else None  # the first pair warms both paths
            pair = [(theirs, LINKED), (bots, UNLINKED)]
            for bundle, user in pair if n % 2 else reversed(pair):  # each goes first by turns
                _click(cast.server, driver, transport, log, bundle, user, result, kept)
        result.credited = _approval_credits_them(cast, driver, log, result)
    finally:
        transport.close()
        bot.stop()
    for name in samples.__dataclass_fields__:
        setattr(result, name, Summary.of_seconds(getattr(samples, name)))


def _link(db_url: str, key: str, user: SlackUser, cast: Cast) -> None:
    ana = cast.ana
    with Database(db_url, vault=Vault.from_keys(key)) as store:
        store.links.link(user.id, ana.user_id, ana.display_name, ana.email, ana.token)


def _seed(server: KandevServer, count: int) -> list[SeededBundle]:
    """``count`` bundles, each asking its own question (in order), their agents waiting."""

    def one(n: int) -> SeededBundle:
        asked = question(
            "q1",
            f"Identity {n}",
            f"Which option for identity part {n}?",
            ("Alpha", f"The first way for part {n}"),
            ("Beta", f"The second way for part {n}"),
        )
        return server.seed_bundle([asked], title=f"Identity bench {n}")

    with ThreadPoolExecutor(SEED_WORKERS) as pool:
        return list(pool.map(one, range(count)))


def _click(
    server: KandevServer,
    driver: SlackDriver,
    transport: KeepAliveTransport,
    log: CardLog,
    bundle: SeededBundle,
    user: SlackUser,
    result: IdentityBench,
    samples: _Samples | None,
) -> None:
    channel, ts = log.card(bundle.pending_id)
    ack = driver.click(channel, ts, text="Beta", user=user)
    sent = transport.last_sent_at
    who = "their token" if user is LINKED else "the bot's token"
    if ack.status != 200:
        result.problems.append(f"identity: click ({who}) on {bundle.pending_id}: {ack.status}")
        return
    answered = _agent_answered_at(server, bundle.task_id)
    edit = log.wait_edit(bundle.pending_id, sent, EDIT_TIMEOUT_S)
    if answered is None:
        result.problems.append(f"identity: click ({who}) on {bundle.pending_id}: no answer")
    if edit is None:
        result.problems.append(f"identity: click ({who}) on {bundle.pending_id}: no edit")
    if samples is not None:
        to_agent = samples.linked_agent if user is LINKED else samples.bot_agent
        to_card = samples.linked_card if user is LINKED else samples.bot_card
        if answered is not None:
            to_agent.append(answered - sent)
        if edit is not None:
            to_card.append(edit.at - sent)
    time.sleep(PAUSE_S)


def _agent_answered_at(server: KandevServer, task_id: str) -> float | None:
    deadline = time.monotonic() + AGENT_TIMEOUT_S
    while time.monotonic() < deadline:
        record = server.agent_result(task_id, timeout=max(deadline - time.monotonic(), 0.0))
        if record and record.get("tool"):
            return float(record["updated_at"])
        time.sleep(0.05)
    return None


def _approval_credits_them(
    cast: Cast, driver: SlackDriver, log: CardLog, result: IdentityBench
) -> bool | None:
    """Alice allows one request: Kandev's own audit must name Ana."""
    spec = permission_spec("Run make bench", "execute", {"command": "make bench"})
    permissions = Permissions(cast.server)
    seeded = permissions.seed([spec], "Identity bench: an approval")
    key = f"perm:{seeded.request_id}"
    if not log.wait_posted([key], timeout=60.0):
        result.problems.append("identity: the approval got no card within 60 s")
        return None
    channel, ts = log.card(key)
    driver.click(channel, ts, text="Allow once", user=LINKED)
    deadline = time.monotonic() + AGENT_TIMEOUT_S
    while time.monotonic() < deadline:
        resolution = permissions.resolution(seeded)
        if resolution is not None:
            return resolution.get("actor_user_id") == cast.ana.user_id
        time.sleep(0.1)
    result.problems.append("identity: Alice's approval was not resolved in Kandev")
    return None
