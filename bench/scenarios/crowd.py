"""8. Crowds: N people click N different cards within a window (50 in one second by default).

For each Slack transport (HTTP under waitress, then Socket Mode) a bot process posts a card for
N seeded bundles (their mock agents wait), 2 N for the first transport. Then:

- the floor, with the first bot: N calls of Kandev's own ``POST /clarification/{id}/respond`` on
  N of the bundles, from bare httpx clients (one warmed-up connection each), started evenly over
  the window, each in its own thread: HTTP round trip, and → the agent has the answer;
- the crowd, once the bot is quiet again: N distinct people each click one option on one of the
  other N cards, started evenly over the window, each in its own thread on its own connection
  (HTTP: a new connection per person, as Slack's; Socket Mode: envelopes on the bot's one
  WebSocket): each ack (request sent → HTTP 200 / the envelope's ack), click → the agent has
  the answer (the mock agent's record), click → the card edited (the fake's ``chat.update``).

Then every answer is checked: it reached its agent exactly once (the agent's tool result is the
option clicked, and nothing more came), every card shows its winner, and nobody was told the
bot is busy.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import httpx

from bench.cardlog import CardLog
from bench.kandev import delete_tasks
from bench.scenarios.answering import seed_spread
from bench.stats import Summary
from bench.transport import KeepAliveTransport
from bench.world import World, wait_synced
from bot.cards.messages import busy_message
from tests.fakeslack import Ack, Delivery, FakeSlack, SlackDriver, SlackUser, Transport
from tests.harness import SeededBundle

MODES = ("http", "socket")
MODE_LABELS = {"http": "HTTP (waitress)", "socket": "Socket Mode"}
OPTION = "Option 1.2"
OPTION_PARSED = {"q1": {"selected_option": "q1_opt2"}}
AGENT_TIMEOUT_S = 30.0
EDIT_TIMEOUT_S = 30.0
CARDS_TIMEOUT_S = 120.0
BUSY = busy_message()[:40]


@dataclass
class CrowdRun:
    """One transport's figures."""

    mode: str
    ack: Summary | None = None
    click_agent: Summary | None = None
    click_card: Summary | None = None
    delivered: int = 0  # answers that reached their agent exactly once
    cards_won: int = 0  # cards showing their winner
    busy: int = 0  # people told "busy"
    edit_429s: int = 0  # chat.update refused by the fake's rate limit
    problems: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return MODE_LABELS.get(self.mode, self.mode)


@dataclass
class Crowd:
    crowd: int
    window_s: float
    #: Kandev's own respond from bare clients, the same crowd over the same window.
    floor_http: Summary | None = None
    floor_agent: Summary | None = None
    runs: list[CrowdRun] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return [f"crowd ({r.label}): {p}" for r in self.runs for p in r.problems]


def run(world: World, *, crowd: int, window: float, modes: Sequence[str] = MODES) -> Crowd:
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"unknown Slack transport(s) {unknown} (use {', '.join(MODES)})")
    result = Crowd(crowd, window)
    kandev = world.kandev
    for n, mode in enumerate(modes):
        # The floor's bundles with the first crowd's; each crowd's agents go before the next.
        bundles = seed_spread(kandev, world.workspace_ids, crowd * (2 if n == 0 else 1))
        try:
            floor, clicked = bundles[: len(bundles) - crowd], bundles[len(bundles) - crowd :]
            result.runs.append(_run_mode(world, mode, floor, clicked, window, result))
        finally:
            delete_tasks(kandev, [b.task_id for b in bundles])
    return result


def _run_mode(
    world: World,
    mode: str,
    floor: list[SeededBundle],
    clicked: list[SeededBundle],
    window: float,
    result: Crowd,
) -> CrowdRun:
    """One bot over one transport; the floor first (with this bot running and editing its
    cards, as during the crowd), then the crowd once the bot is quiet."""
    fake = world.fake_slack()
    bot = world.bot(fake, f"crowd-{mode}", mode=mode)
    out = CrowdRun(mode)
    log = CardLog(fake)  # before the bot starts: its first sync posts every card
    try:
        bot.start()
        wait_synced(bot)
        wanted = [b.pending_id for b in floor + clicked]
        if not log.wait_posted(wanted, timeout=CARDS_TIMEOUT_S):
            out.problems.append(f"not every bundle got a card within {CARDS_TIMEOUT_S:.0f} s")
            return out
        fake.settle(quiet=1.0, timeout=60.0)
        if floor:
            result.floor_http, result.floor_agent, problems = _floor(world, floor, window)
            out.problems += problems
            fake.settle(quiet=1.0, timeout=60.0)  # the floor's cards edited: the bot is quiet
        people = [
            fake.add_user(SlackUser(id=f"U0CROWD{n:03d}", name=f"person{n}"))
            for n in range(len(clicked))
        ]
        mark = fake.mark()
        clicks = _clicks(fake, bot.events_url, mode, log, clicked, people, window, out)
        _check(world, fake, log, clicked, people, clicks, mark, out)
    finally:
        bot.stop()
    return out


@dataclass
class _Sent:
    at: float = 0.0  # time.time() when the request left
    ack: Ack | None = None
    error: str = ""


def _burst(count: int, window: float, act: Callable[[int, float], None]) -> None:
    """Run ``act(n, start)`` in ``count`` threads, the n-th at ``start`` = t0 + n·window/count
    (time.monotonic()), all threads ready before t0."""
    ready = threading.Barrier(count + 1)
    t0 = [0.0]

    def person(n: int) -> None:
        ready.wait()
        start = t0[0] + window * n / count
        time.sleep(max(start - time.monotonic(), 0.0))
        act(n, start)

    threads = [threading.Thread(target=person, args=(n,), daemon=True) for n in range(count)]
    for thread in threads:
        thread.start()
    t0[0] = time.monotonic() + 0.2
    ready.wait()
    for thread in threads:
        thread.join(timeout=window + 120.0)


def _floor(
    world: World, bundles: list[SeededBundle], window: float
) -> tuple[Summary | None, Summary | None, list[str]]:
    """Kandev's own respond, N bare clients spread over the window (one connection each)."""
    kandev = world.kandev
    body = {
        "answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": ""}],
        "rejected": False,
        "reject_reason": "",
    }
    clients = [
        httpx.Client(base_url=f"{kandev.base_url}/api/v1", timeout=30.0, trust_env=False)
        for _ in bundles
    ]
    sent = [_Sent() for _ in bundles]
    round_trips: list[float | None] = [None] * len(bundles)
    try:
        for client in clients:  # each its own connection, open and warm
            client.get("/workspaces").raise_for_status()

        def respond(n: int, _start: float) -> None:
            sent[n].at = time.time()
            began = time.perf_counter()
            try:
                response = clients[n].post(
                    f"/clarification/{bundles[n].pending_id}/respond", json=body
                )
            except httpx.HTTPError as exc:
                sent[n].error = f"{type(exc).__name__}: {exc}"
                return
            round_trips[n] = time.perf_counter() - began
            if response.status_code != 200:
                sent[n].error = f"HTTP {response.status_code}"

        _burst(len(bundles), window, respond)
    finally:
        for client in clients:
            client.close()
    agent: list[float] = []
    problems: list[str] = []
    for n, bundle in enumerate(bundles):
        if sent[n].error:
            problems.append(f"floor respond {bundle.pending_id}: {sent[n].error}")
            continue
        answered = _agent_answered_at(world, bundle.task_id)
        if answered is None:
            problems.append(f"floor respond {bundle.pending_id}: the agent got no answer")
        else:
            agent.append(answered - sent[n].at)
    http = Summary.of_seconds([t for t in round_trips if t is not None])
    return http, Summary.of_seconds(agent), problems


class _TimedTransport:
    """Notes when a request left, around another transport (one per person: thread-safe)."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.sent_at = 0.0

    def deliver(self, kind, payload, *, accepts_response_payload: bool, delivery: Delivery) -> Ack:
        self.sent_at = time.time()
        return self.inner.deliver(
            kind, payload, accepts_response_payload=accepts_response_payload, delivery=delivery
        )


def _clicks(
    fake: FakeSlack,
    events_url: str,
    mode: str,
    log: CardLog,
    bundles: list[SeededBundle],
    people: list[SlackUser],
    window: float,
    out: CrowdRun,
) -> list[_Sent]:
    """Each person clicks one option of their own card; a transport (connection) each."""
    secret = fake.workspace.signing_secret
    drivers: list[SlackDriver] = []
    timed: list[_TimedTransport | KeepAliveTransport] = []
    for _ in people:
        if mode == "socket":
            inner = SlackDriver.over_socket_mode(fake).transport
            transport: _TimedTransport | KeepAliveTransport = _TimedTransport(inner)
        else:
            transport = KeepAliveTransport(events_url, secret)  # its own, new connection
        timed.append(transport)
        drivers.append(SlackDriver(fake, transport))
    cards = [log.card(b.pending_id) for b in bundles]
    sent = [_Sent() for _ in bundles]

    def click(n: int, _start: float) -> None:
        channel, ts = cards[n]
        try:
            ack = drivers[n].click(channel, ts, text=OPTION, user=people[n])
        except Exception as exc:  # a click that got no ack at all (Socket Mode: NoAck)
            sent[n].error = f"{type(exc).__name__}: {exc}"
            return
        transport = timed[n]
        sent[n].at = (
            transport.sent_at if isinstance(transport, _TimedTransport) else transport.last_sent_at
        )
        sent[n].ack = ack

    try:
        _burst(len(bundles), window, click)
    finally:
        for transport in timed:
            if isinstance(transport, KeepAliveTransport):
                transport.close()
    out.ack = Summary.of_seconds([s.ack.elapsed for s in sent if s.ack is not None])
    return sent


def _check(
    world: World,
    fake: FakeSlack,
    log: CardLog,
    bundles: list[SeededBundle],
    people: list[SlackUser],
    sent: list[_Sent],
    mark: int,
    out: CrowdRun,
) -> None:
    """Every answer reached its agent once, every card shows its winner, nobody was busy."""
    to_agent: list[float] = []
    to_card: list[float] = []
    for n, bundle in enumerate(bundles):
        s = sent[n]
        if s.ack is None or s.ack.status != 200:
            out.problems.append(
                f"click on {bundle.pending_id}: {s.error or f'HTTP {s.ack and s.ack.status}'}"
            )
            continue
        answered = _agent_answered_at(world, bundle.task_id)
        record = world.kandev.agent_result(bundle.task_id, timeout=0) or {}
        tool = record.get("tool") or {}
        if answered is None:
            out.problems.append(f"click on {bundle.pending_id}: the agent got no answer")
        elif tool.get("parsed") != OPTION_PARSED or record.get("prompts"):
            out.problems.append(f"click on {bundle.pending_id}: the agent got {record!r:.300}")
        else:
            out.delivered += 1
            to_agent.append(answered - s.at)
        edit = log.wait_edit(bundle.pending_id, s.at, EDIT_TIMEOUT_S)
        if edit is None:
            out.problems.append(f"click on {bundle.pending_id}: the card was not edited")
            continue
        to_card.append(edit.at - s.at)
        channel, ts = log.card(bundle.pending_id)
        if f"Answered by <@{people[n].id}>" in fake.message(channel, ts).all_text:
            out.cards_won += 1
        else:
            out.problems.append(f"card of {bundle.pending_id} does not name {people[n].id}")
    fake.settle(quiet=0.5, timeout=30.0)
    told = [e.all_text for e in fake.ephemerals()] + [str(p.body) for p in fake.response_posts()]
    out.busy = sum(BUSY in text for text in told)
    since = fake.calls()[mark:]
    out.edit_429s = sum(c.method == "chat.update" and c.status == 429 for c in since)
    out.click_agent = Summary.of_seconds(to_agent)
    out.click_card = Summary.of_seconds(to_card)


def _agent_answered_at(world: World, task_id: str) -> float | None:
    """When the task's mock agent received the result of its question (time.time())."""
    deadline = time.monotonic() + AGENT_TIMEOUT_S
    while time.monotonic() < deadline:
        record = world.kandev.agent_result(task_id, timeout=max(deadline - time.monotonic(), 0.0))
        if record and record.get("tool"):
            return float(record["updated_at"])
        time.sleep(0.05)
    return None
