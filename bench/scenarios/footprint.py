"""6. Footprint: the bot's memory and idle CPU with 0, 10,000 and 100,000 cards in its store, on
SQLite and on PostgreSQL, and the plans of the store's hot queries against the largest store.

Per backend one fresh database (a SQLite file; a PostgreSQL database created for the run and
dropped after it) grows from empty to each size. The history is written in bulk (SQLAlchemy
Core ``executemany``, in batches) as a long-running deployment accumulates it within the 90
days of retention: resolved cards (answered in Slack or in Kandev, rejected, ended) with their
outcome, two audit entries each, the Slack answer's submission, a follow-up row, a DM card for
one in ten (a gathering DM for one in ten of those), the done outbox rows and a thread reply
for one in four of the last 7 days, a released quiet-hours hold for each of the last day; plus
``pending`` cards waiting, which are real bundles in Kandev (listed at every poll) whose cards
are posted: 1,000 by default, as many as the big queues scenario, which runs next and keeps
them (``World.waiting``: a session each, for which Kandev starts a mock agent, so they are made
once per run).

Each size: the bot starts as a process on that database, syncs, idles (CPU time over a window
divided by the poll cycles in it, poll every second by default; RSS at the end), then runs each
hot path once — a click answering a freshly posted card (→ the card edited),
``/kandev-questions``, the App Home tab opened — while its own loops run the recovery scan, the
reminders and subscriptions ticks and the retention purge (at its first cycle); the peak RSS
(VmHWM) is read after them.

Query plans: the statements of every hot query (:mod:`tests.kit.hot_queries`) are captured on a
small probe database and explained on the 100,000-card one (SQLite as the bot has it; PostgreSQL
after ``ANALYZE``); a plan that reads a large table whole is flagged.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
from sqlalchemy import Engine

from bench.cardlog import CardLog
from bench.kandev import Asked, WaitingPool, delete_tasks
from bench.procstat import cpu_seconds, peak_rss_mb, rss_mb
from bench.transport import KeepAliveTransport
from bench.world import Route, World, wait_synced
from kandev_slack.core.clarification import Answer, Bundle, Option, Question
from kandev_slack.core.domain import CardOutcome, CardState
from kandev_slack.kits.fakeslack import FakeSlack, SlackDriver
from kandev_slack.store import Database, normalize_url
from kandev_slack.store.records import SubmissionContent, SubmissionVerdict
from kandev_slack.store.schema import (
    audit_log,
    card_followups,
    card_messages,
    cards,
    dm_gathers,
    held_items,
    home_viewers,
    outbox,
    submissions,
    subscriptions,
    thread_replies,
)
from kandev_slack.store.sql.engine import make_engine
from tests.kit.harness import PG_ADMIN, BotProcess, KandevHarnessError
from tests.kit.hot_queries import HOT_QUERIES, Plan, capture, plans, prepare_probe

BACKENDS = ("sqlite", "postgresql")
WARMUP_S = 2.0
SPAN = timedelta(days=85)  # the history's age: within the default retention (90 days)
OUTBOX_SPAN = timedelta(days=7)  # finished outbox rows are kept a week
BATCH = 2000
GOLDEN = 0.6180339887498949  # spreads card n's age over the span, whatever the count
SLASH_COMMAND = "/kandev-questions"
POSTED_TIMEOUT_S = 30.0
EDIT_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Measured:
    backend: str
    cards: int
    rss_mb: float  # idle, before the hot paths
    peak_rss_mb: float  # VmHWM after the hot paths
    after_mb: float  # RSS after the hot paths
    cpu_ms_per_cycle: float
    cpu_percent: float
    cycles: float
    #: VmHWM after each step: "start" (start-up and the idle window), "click", "slash",
    #: "home": which step makes the peak.
    peaks: dict[str, float] = field(default_factory=dict)


@dataclass
class Footprint:
    poll_interval_s: float
    window_s: float
    pending: int
    runs: list[Measured] = field(default_factory=list)
    fill_s: dict[str, float] = field(default_factory=dict)  # per backend, the whole history
    plans: dict[str, list[Plan]] = field(default_factory=dict)  # per backend, largest size
    plan_cards: int = 0
    problems: list[str] = field(default_factory=list)


def sizes(cards: int) -> list[int]:
    return sorted({0, cards // 10, cards})


def run(
    world: World,
    *,
    cards: int,
    pending: int,
    poll_interval: float,
    window: float,
    backends: Sequence[str] = BACKENDS,
) -> Footprint:
    result = Footprint(poll_interval, window, pending)
    env = {"KANDEV_POLL_INTERVAL": f"{poll_interval:g}"}
    fake = world.fake_slack()
    with contextlib.ExitStack() as stack:
        urls = {b: stack.enter_context(_database(b, world.work_dir)) for b in backends}
        # The waiting bundles' sessions are made while the empty stores are measured (only the
        # bot's own CPU time and memory are measured); they ask after, so that no bundle waits
        # while the store is empty. They stay waiting after this scenario (the big queues
        # use them: see WaitingPool), until Kandev stops.
        pool = world.waiting
        # Noticing (before) leaves the pool's bundles waiting: the empty stores are measured
        # with their cards already posted, as a bot that ran while they came has them.
        early = bool(pool.asked)
        failed: list[BaseException] = []
        preparing = threading.Thread(
            target=_prepare, args=(pool, pending, failed), name="footprint-prepare", daemon=True
        )
        preparing.start()
        if early:
            preparing.join()
            posted = _waiting(world, fake, pool, pending, failed, result)
        for backend, url in urls.items():  # the empty stores first
            Database(url).close()  # its schema
            if early:
                fill(url, world.routes, start=0, count=0, waiting=posted)
            result.runs.append(_measure(world, fake, backend, url, 0, env, window, result))
            if early:
                _still_waiting(url, len(posted), f"{backend}, 0 cards", result.problems)
        if not early:
            preparing.join()
            posted = _waiting(world, fake, pool, pending, failed, result)
        for backend, url in urls.items():
            have = 0
            for size in sizes(cards)[1:]:
                started = time.monotonic()
                fill(
                    url,
                    world.routes,
                    start=have,
                    count=size - have,
                    waiting=posted if not have and not early else (),
                    people=not have and not early,
                )
                result.fill_s[backend] = (
                    result.fill_s.get(backend, 0.0) + time.monotonic() - started
                )
                have = size
                _say(f"footprint: {backend} history of {size:,} cards written")
                result.runs.append(_measure(world, fake, backend, url, size, env, window, result))
                _still_waiting(url, len(posted), f"{backend}, {size:,} cards", result.problems)
            if have:
                result.plans[backend] = query_plans(url, world.work_dir)
                _say(f"footprint: {backend} query plans read")
                result.plan_cards = have
    return result


def _waiting(
    world: World,
    fake: FakeSlack,
    pool: WaitingPool,
    pending: int,
    failed: list[BaseException],
    result: Footprint,
) -> list[Waiting]:
    """At least ``pending`` of the pool's bundles waiting, their cards posted in ``fake``."""
    if failed:
        raise RuntimeError(f"making the waiting bundles failed: {failed[0]}") from failed[0]
    asked = pool.ask(pending)
    result.pending = len(asked)
    _say(f"footprint: {len(asked)} bundles waiting (sessions made in {pool.prepare_s:.0f} s)")
    return _post_waiting(fake, world.routes, asked)


def _still_waiting(url: str, waiting: int, where: str, problems: list[str]) -> None:
    """The waiting cards are still waiting after the bot ran: Kandev still lists their bundles
    (a card whose bundle left the list is ended by the bot)."""
    with Database(url) as store:
        left = store.cards.count(CardState.PENDING)
    if left != waiting:
        problems.append(f"{where}: {left} of the {waiting} waiting cards still waiting")


def _prepare(pool: WaitingPool, count: int, failed: list[BaseException]) -> None:
    try:
        pool.prepare(count)
    except BaseException as exc:  # told to the scenario's thread
        failed.append(exc)


def _post_waiting(fake, routes: list[Route], asked: Sequence[Asked]) -> list[Waiting]:
    """The waiting bundles' cards as messages in the fake Slack (through its Web API, as the
    bot posted them), so that listing them finds their permalinks."""
    by_workspace = {r.workspace_id: r for r in routes}
    out: list[Waiting] = []
    with httpx.Client(timeout=10.0, trust_env=False) as client:
        for bundle in asked:
            route = by_workspace[bundle.workspace_id]
            response = client.post(
                f"{fake.api_url.rstrip('/')}/chat.postMessage",
                headers={"Authorization": f"Bearer {fake.workspace.bot_token}"},
                json={"channel": route.channel, "text": f"Waiting question {bundle.pending_id}"},
            )
            body = response.json()
            if not body.get("ok"):
                raise RuntimeError(f"posting a waiting card failed: {body}")
            out.append(Waiting(bundle.pending_id, bundle.task_id, route, body["ts"]))
    return out


@dataclass(frozen=True)
class Waiting:
    pending_id: str
    task_id: str
    route: Route
    ts: str


@contextlib.contextmanager
def _database(backend: str, work_dir: Path) -> Iterator[str]:
    """A URL of a fresh, empty database of ``backend``, dropped afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{work_dir / f'footprint-{uuid.uuid4().hex[:8]}.db'}"
        return
    name = f"kandev_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    host = psycopg.conninfo.conninfo_to_dict(PG_ADMIN)
    user = host.get("user", "postgres")
    try:
        yield f"postgresql+psycopg://{user}@{host.get('host')}:{host.get('port', 5432)}/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (name,),
            )
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')


def _say(text: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


# ---- measuring ---------------------------------------------------------------------------


def _measure(
    world: World,
    fake,
    backend: str,
    url: str,
    size: int,
    env: dict[str, str],
    window: float,
    result: Footprint,
) -> Measured:
    _say(f"footprint: {backend}, {size:,} cards")
    bot = world.bot(fake, f"footprint-{backend}-{size}", url=url, **env)
    bot.start()
    try:
        wait_synced(bot)
        time.sleep(WARMUP_S)
        assert bot.proc is not None
        pid = bot.proc.pid
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        time.sleep(window)
        cpu1, t1 = cpu_seconds(pid), time.monotonic()
        idle = rss_mb(pid)
        peaks = {"start": peak_rss_mb(pid)}
        _hot_paths(world, fake, bot, f"{backend}, {size:,} cards", result.problems, peaks)
        cycles = (t1 - t0) / float(env["KANDEV_POLL_INTERVAL"])
        return Measured(
            backend=backend,
            cards=size,
            rss_mb=idle,
            peak_rss_mb=peak_rss_mb(pid),
            after_mb=rss_mb(pid),
            peaks=peaks,
            cpu_ms_per_cycle=(cpu1 - cpu0) * 1000.0 / cycles,
            cpu_percent=(cpu1 - cpu0) * 100.0 / (t1 - t0),
            cycles=cycles,
        )
    finally:
        bot.stop()


def _hot_paths(
    world: World, fake, bot: BotProcess, where: str, problems: list[str], peaks: dict[str, float]
) -> None:
    """A click answering a new card, ``/kandev-questions``, the Home tab opened (``peaks``:
    the process's VmHWM after each)."""
    route = world.routes[0]
    transport = KeepAliveTransport(bot.events_url, fake.workspace.signing_secret)
    driver = SlackDriver(fake, transport)
    assert bot.proc is not None
    pid = bot.proc.pid
    try:
        _click(world, fake, driver, transport, route, where, problems)
        peaks["click"] = peak_rss_mb(pid)
        steps = (
            ("slash", lambda: driver.slash(SLASH_COMMAND, "", channel=route.channel)),
            ("home", driver.app_home_opened),
        )
        for what, step in steps:
            ack = step()
            if ack.status != 200:
                problems.append(f"{where}: {what} answered HTTP {ack.status}")
            # The list is sent and the Home view published after their acks.
            fake.settle(quiet=1.0, timeout=30.0)
            peaks[what] = peak_rss_mb(pid)
    finally:
        transport.close()


def _click(world: World, fake, driver, transport, route: Route, where: str, problems) -> None:
    """A new bundle with a waiting agent, its card, a click on an option → the card edited."""
    log = CardLog(fake)
    try:
        [bundle] = world.kandev.seed_many(1, workspace_id=route.workspace_id)
    except (httpx.HTTPError, KandevHarnessError) as exc:
        problems.append(f"{where}: no bundle to click (Kandev: {exc})")
        return
    try:
        if not log.wait_posted([bundle.pending_id], POSTED_TIMEOUT_S):
            problems.append(f"{where}: the hot-path bundle got no card")
            return
        channel, ts = log.card(bundle.pending_id)
        ack = driver.click(channel, ts, text="Option 1.2")
        sent = transport.last_sent_at
        if ack.status != 200 or log.wait_edit(bundle.pending_id, sent, EDIT_TIMEOUT_S) is None:
            told = [e.text for e in fake.ephemerals(user=driver.user().id) if e.at >= sent]
            problems.append(
                f"{where}: the click did not edit the card within {EDIT_TIMEOUT_S:g} s "
                f"(HTTP {ack.status}; the clicker was told {told or 'nothing'})"
            )
    finally:
        delete_tasks(world.kandev, [bundle.task_id])


# ---- query plans -------------------------------------------------------------------------


def query_plans(url: str, work_dir: Path) -> list[Plan]:
    """Every hot query's statements, captured on a probe store, explained on ``url``."""
    engine = make_engine(normalize_url(url))
    try:
        postgres = engine.dialect.name == "postgresql"
        with _probe_url(url, postgres, work_dir) as probe_url, Database(probe_url) as probe:
            prepare_probe(probe)
            captured = capture(probe, HOT_QUERIES)
        with engine.connect() as conn:
            if postgres:  # as autovacuum keeps them: the planner's statistics
                conn.exec_driver_sql("ANALYZE")
            return plans(captured, conn)
    finally:
        engine.dispose()


@contextlib.contextmanager
def _probe_url(url: str, postgres: bool, work_dir: Path) -> Iterator[str]:
    if not postgres:
        yield f"sqlite:///{work_dir / f'probe-{uuid.uuid4().hex[:8]}.db'}"
        return
    engine = make_engine(normalize_url(url))
    schema = f"probe_{uuid.uuid4().hex[:8]}"
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
        yield (
            normalize_url(url)
            .update_query_dict({"options": f"-csearch_path={schema}"})
            .render_as_string(hide_password=False)
        )
    finally:
        with engine.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        engine.dispose()


# ---- the history -------------------------------------------------------------------------


def fill(
    url: str,
    routes: list[Route],
    *,
    start: int,
    count: int,
    waiting: Sequence[Waiting] = (),
    people: bool | None = None,
) -> None:
    """Cards ``start`` .. ``start + count - 1`` of a history (see the module's docstring) and
    the ``waiting`` bundles' posted cards, written in batches; the people's rows too when
    ``people`` (by default: when the history starts)."""
    now = datetime.now(UTC)
    engine = make_engine(normalize_url(url))
    try:
        rows = _Rows(now)
        for n in range(start, start + count):
            rows.resolved(n, routes[n % len(routes)])
            if len(rows.cards) >= BATCH:
                rows.flush(engine)
        for n, card in enumerate(waiting):
            rows.waiting(n, card)
        if start == 0 if people is None else people:
            rows.people()
        rows.flush(engine)
    finally:
        engine.dispose()


_TEMPLATE_ID = "00000000-0000-4000-8000-00000000feed"
_TEMPLATE_TASK = "00000000-0000-4000-8000-00000000beef"
_TEMPLATE_AT = "2031-02-03T04:05:06.789012Z"


def _iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _bundle_json() -> str:
    return Bundle(
        pending_id=_TEMPLATE_ID,
        task_id=_TEMPLATE_TASK,
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
        context="We need to choose how to store the *orders* before the migration.",
        questions=[
            Question(
                question_id="q1",
                title="Database",
                prompt="Which database should we use for **orders**?",
                status="answered",
                options=[
                    Option(option_id="q1_opt1", label="PostgreSQL", description="Relational"),
                    Option(option_id="q1_opt2", label="MongoDB", description="Document store"),
                    Option(option_id="q1_opt3", label="SQLite", description="One file"),
                ],
            )
        ],
    ).model_dump_json()


_ANSWER = [Answer(question_id="q1", selected_options=["q1_opt2"])]
_STATES = (  # (state, via, by a Slack user)
    (CardState.ANSWERED, "slack", True),
    (CardState.ANSWERED, "kandev", False),
    (CardState.REJECTED, "slack", True),
    (CardState.ENDED, "kandev", False),
)


class _Rows:
    """Rows of every table for a batch of cards."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.bundle = _bundle_json()
        self.cards: list[dict[str, Any]] = []
        self.audit: list[dict[str, Any]] = []
        self.submissions: list[dict[str, Any]] = []
        self.outbox: list[dict[str, Any]] = []
        self.followups: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        self.viewers: list[dict[str, Any]] = []
        self.subscriptions: list[dict[str, Any]] = []
        self.replies: list[dict[str, Any]] = []
        self.held: list[dict[str, Any]] = []
        self.gathers: list[dict[str, Any]] = []
        self.won = SubmissionVerdict(kind="won").encode()
        self.outcomes = [
            CardOutcome(
                state=state,
                via=via,
                by_user="U0ALICE001" if slack else None,
                answers=_ANSWER if state is CardState.ANSWERED else [],
                at=datetime.fromisoformat(_TEMPLATE_AT),
            ).model_dump_json()
            for state, via, slack in _STATES
        ]
        self.content = SubmissionContent(action="answer", answers=_ANSWER).encode()

    def _card(
        self, pending_id: str, task_id: str, n: int, route: Route, at: datetime
    ) -> dict[str, Any]:
        return {
            "pending_id": pending_id,
            "task_id": task_id,
            "session_id": str(uuid.UUID(int=n + (1 << 64))),
            "workspace_id": route.workspace_id,
            "channel": route.channel,
            "ts": f"{1_600_000_000 + n}.{n % 1_000_000:06d}",
            "bundle_json": self.bundle.replace(_TEMPLATE_ID, pending_id).replace(
                _TEMPLATE_TASK, task_id
            ),
            "task_json": json.dumps(
                {
                    "task_id": task_id,
                    "title": f"Historic task {n}",
                    "workspace_id": route.workspace_id,
                    "workspace_name": route.workspace_name,
                }
            ),
            "question_key": f"{route.workspace_id}|which database for orders {n % 50}",
            "past_json": None,
            "claimed_at": at,
            "posted_at": at + timedelta(seconds=1),
            "created_at": at,
        }

    def resolved(self, n: int, route: Route) -> None:
        pending_id, task_id = str(uuid.UUID(int=n)), str(uuid.UUID(int=n + (1 << 96)))
        at = self.now - SPAN * ((n * GOLDEN) % 1.0) - timedelta(hours=1)
        done = at + timedelta(minutes=5 + n % 55)
        state, via, slack = _STATES[n % len(_STATES)]
        user = "U0ALICE001" if slack else None
        outcome = self.outcomes[n % len(_STATES)].replace(_TEMPLATE_AT, _iso(done))
        card = self._card(pending_id, task_id, n, route, at)
        card.update(
            state=state.value,
            outcome_json=outcome,
            resolved_at=done,
            updated_at=done,
        )
        self.cards.append(card)
        self.audit.append(
            self._audit(pending_id, at, None, "post", "kandev", "queued", route.channel)
        )
        if slack:
            action = "answer" if state is CardState.ANSWERED else "reject"
            self.audit.append(self._audit(pending_id, done, user, action, "button", "won", ""))
            self.submissions.append(
                {
                    "submission_key": f"{pending_id}:click",
                    "pending_id": pending_id,
                    "user_id": user,
                    "payload_json": self.content,
                    "result_json": self.won,
                    "created_at": done,
                    "leased_at": done,
                    "finished_at": done,
                    "resends": 0,
                }
            )
        else:
            self.audit.append(
                self._audit(pending_id, done, None, state.value, "kandev", "synced", "")
            )
        self.followups.append(
            {
                "pending_id": pending_id,
                "reminders_sent": 1 if n % 5 == 0 else 0,
                "escalated": 0,
                "updated_at": at,
                "notified": 1,
            }
        )
        if n % 10 == 0:
            self.messages.append(
                {
                    "key": f"dm:{pending_id}:U0BOB00001",
                    "pending_id": pending_id,
                    "kind": "dm",
                    "target": "U0BOB00001",
                    "channel": "D0BOB00001",
                    "ts": f"{1_600_000_000 + n}.{n % 1_000_000:06d}",
                    "note": "",
                    "created_at": at,
                    "posted_at": at + timedelta(seconds=1),
                }
            )
        if n % 100 == 0:
            self.gathers.append(
                {
                    "key": f"gather:U0BOB00001:dm:{pending_id}:U0BOB00001",
                    "user_id": "U0BOB00001",
                    "since": at - timedelta(minutes=10),
                    "last_at": at + timedelta(minutes=2),
                    "channel": "D0BOB00001",
                    "ts": f"{1_600_000_000 + n}.{n % 1_000_000 + 1:06d}",
                    "created_at": at,
                }
            )
        if self.now - at <= timedelta(days=1):  # released holds are kept a day
            self.held.append(
                {
                    "key": f"held:reminder:{pending_id}",
                    "target": "U0ALICE001",
                    "pending_id": pending_id,
                    "what": "reminder",
                    "release_at": at + timedelta(minutes=1),
                    "released_at": at + timedelta(minutes=1),
                    "created_at": at,
                }
            )
        if self.now - done <= OUTBOX_SPAN and n % 4 == 0:
            ts = card["ts"]
            self.replies.append(
                {
                    "id": str(uuid.UUID(int=n + (1 << 80))),
                    "message_key": f"{route.channel}:{ts}1",
                    "pending_id": pending_id,
                    "channel": route.channel,
                    "thread_ts": ts,
                    "user_id": "U0ALICE001",
                    "question_id": "db",
                    "option_id": None,
                    "text": "use the cluster",
                    "state": "sent",
                    "created_at": at + timedelta(minutes=1),
                    "updated_at": done,
                }
            )
        if self.now - done <= OUTBOX_SPAN:
            for kind, key, finished in (
                ("post", f"post:{pending_id}", at),
                ("update", f"update:{pending_id}:{state.value}", done),
            ):
                self.outbox.append(self._outbox(kind, key, pending_id, route.channel, at, finished))

    def waiting(self, n: int, waiting: Waiting) -> None:
        at = self.now - timedelta(minutes=1 + n % 30)
        pending_id, route = waiting.pending_id, waiting.route
        card = self._card(pending_id, waiting.task_id, 10_000_000 + n, route, at)
        card.update(
            ts=waiting.ts,
            state=CardState.PENDING.value,
            outcome_json=None,
            resolved_at=None,
            updated_at=at,
        )
        self.cards.append(card)
        self.audit.append(
            self._audit(pending_id, at, None, "post", "kandev", "queued", route.channel)
        )
        self.followups.append(
            {
                "pending_id": pending_id,
                "reminders_sent": 0,
                "escalated": 0,
                "updated_at": at,
                "notified": 1,
            }
        )
        self.outbox.append(
            self._outbox("post", f"post:{pending_id}", pending_id, route.channel, at, at)
        )

    def people(self) -> None:
        for n in range(50):  # opened Home over a day ago: not refreshed on every change
            self.viewers.append(
                {"user_id": f"U0VIEW{n:04d}", "opened_at": self.now - timedelta(days=2 + n)}
            )
        for n in range(20):
            self.subscriptions.append(
                {
                    "user_id": f"U0SUBS{n:04d}",
                    "kind": "label",
                    "value": f"label-{n}",
                    "created_at": self.now,
                }
            )

    @staticmethod
    def _audit(pending_id, at, user, action, source, result, detail) -> dict[str, Any]:
        return {
            "at": at,
            "pending_id": pending_id,
            "user_id": user or "bot",
            "action": action,
            "source": source,
            "result": result,
            "detail": detail,
        }

    @staticmethod
    def _outbox(kind, key, pending_id, channel, at, finished) -> dict[str, Any]:
        return {
            "kind": kind,
            "dedupe_key": key,
            "channel": channel,
            "payload_json": json.dumps({"pending_id": pending_id}),
            "status": "done",
            "attempts": 1,
            "not_before": at,
            "lease_owner": None,
            "lease_until": None,
            "last_error": "",
            "created_at": at,
            "updated_at": finished,
            "finished_at": finished,
        }

    def flush(self, engine: Engine) -> None:
        """Write the rows at the driver's speed: ``COPY`` on PostgreSQL, the driver's own
        ``executemany`` on SQLite (timestamps as the store writes them: naive UTC text)."""
        batches = (
            (cards, self.cards),
            (audit_log, self.audit),
            (submissions, self.submissions),
            (outbox, self.outbox),
            (card_followups, self.followups),
            (card_messages, self.messages),
            (home_viewers, self.viewers),
            (subscriptions, self.subscriptions),
            (thread_replies, self.replies),
            (held_items, self.held),
            (dm_gathers, self.gathers),
        )
        raw = engine.raw_connection()
        try:
            cursor = raw.cursor()
            postgres = engine.dialect.name == "postgresql"
            if not postgres:  # a page cache that holds the indexes being filled, no fsync
                cursor.execute("PRAGMA cache_size = -262144")
                cursor.execute("PRAGMA synchronous = OFF")
                cursor.execute("BEGIN")
            for table, rows in batches:
                if not rows:
                    continue
                columns = list(rows[0])
                names = ", ".join(columns)
                if postgres:
                    with cursor.copy(f"COPY {table.name} ({names}) FROM STDIN") as copy:
                        for row in rows:
                            copy.write_row([row[c] for c in columns])
                else:
                    marks = ", ".join("?" for _ in columns)
                    cursor.executemany(
                        f"INSERT INTO {table.name} ({names}) VALUES ({marks})",
                        [tuple(_sqlite(row[c]) for c in columns) for row in rows],
                    )
                rows.clear()
            if postgres:
                raw.commit()
            else:
                cursor.execute("COMMIT")
        finally:
            raw.close()


def _sqlite(value: Any) -> Any:
    """A timestamp as SQLAlchemy stores UTCDateTime on SQLite (naive UTC, microseconds)."""
    return _sqlite_time(value) if isinstance(value, datetime) else value


@functools.lru_cache(maxsize=1 << 16)  # a card's few instants recur in its other rows
def _sqlite_time(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
