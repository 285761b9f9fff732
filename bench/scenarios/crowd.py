"""8. Crowds: N people click N different cards within a window (50 in one second by default).

For each Slack transport (HTTP under waitress, then Socket Mode), in each of ``rounds`` rounds
(their samples pooled), a fresh bot process posts a card for 2 N freshly seeded bundles (their
mock agents wait). Then:

- the floor, with that bot running: N calls of Kandev's own
  ``POST /clarification/{id}/respond`` on N of the bundles, from bare httpx clients (one
  warmed-up connection each), started evenly over the window, each in its own thread: HTTP
  round trip, and → the agent has the answer (each transport's crowd is compared with the floor
  of its own rounds: Kandev's speed drifts from minute to minute by more than the targets'
  margins);
- the crowd, once the bot is quiet again: N distinct people each click one option on one of the
  other N cards, started evenly over the window, each in its own thread on its own connection
  (HTTP: a new connection per person, as Slack's; Socket Mode: envelopes on the bot's one
  WebSocket): each ack (request sent → HTTP 200 / the envelope's ack), click → the agent has
  the answer (the mock agent's record), click → the card edited (the fake's ``chat.update``).

HTTP requests (the floor's and the people's) are prepared here, then sent and timed from a
process that does nothing else (bench/burst.py): from this one, which runs the fake Slack
answering the bot's edits meanwhile, a request's timing would include waiting for this
process's interpreter. For the same reason the Socket Mode rounds' bot links to a process of
its own (bench/socket_burst.py: the fake's ``apps.connections.open`` hands out its URL), which
sends the people's envelopes, prepared here, and stamps each ack as it arrives.

Then every answer is checked: it reached its agent exactly once (the agent's tool result is the
option clicked, and nothing more came), every card shows its winner, and nobody was told the
bot is busy.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from bench import burst
from bench.cardlog import CardLog
from bench.kandev import delete_tasks
from bench.procstat import CpuMeter, CpuSpent, pin, wait_quiet_machine
from bench.scenarios.answering import seed_spread
from bench.socket_burst import SocketBurst
from bench.stats import Summary
from bench.transport import PreparedEnvelope, PreparedTransport
from bench.world import World, wait_synced
from kandev_slack.cards.words import busy_message
from kandev_slack.kits.fakeslack import Ack, FakeSlack, SlackDriver, SlackUser
from tests.kit.harness import BotProcess, SeededBundle

MODES = ("http", "socket")
MODE_LABELS = {"http": "HTTP (waitress)", "socket": "Socket Mode"}
#: Where the processes run: ``split`` — the bot on a CPU of its own, Kandev and its agents on
#: the other (as in production, where they run elsewhere); ``shared`` — all on both CPUs.
CPUS = ("split", "shared")
CPU_LABELS = {"split": "bot on a CPU of its own", "shared": "all on 2 shared CPUs"}
OPTION = "Option 1.2"
OPTION_PARSED = {"q1": {"selected_option": "q1_opt2"}}
AGENT_TIMEOUT_S = 30.0
EDIT_TIMEOUT_S = 30.0
CARDS_TIMEOUT_S = 120.0
BUSY = busy_message()[:40]
#: The machine counts as quiet when its CPUs are busy less than this share of a second.
QUIET_BELOW = 0.15
QUIET_TIMEOUT_S = 60.0


@dataclass
class Floor:
    """Kandev's own respond from bare clients, the same crowd over the same window, in each
    round of a transport on a CPU arrangement just before its crowd (the same bot running,
    Kandev as loaded as the crowd finds it): HTTP round trips, and until the agent had the
    answer."""

    round_trips_s: list[float] = field(default_factory=list)
    to_agent_s: list[float] = field(default_factory=list)
    #: The CPU the machine spent from the first call until it was quiet again, every round.
    cpu: CpuSpent = field(default_factory=CpuSpent)
    #: The answers ``cpu`` was metered over (a round that stopped before its meter ran has none).
    metered: int = 0

    @property
    def http(self) -> Summary | None:
        return Summary.of_seconds(self.round_trips_s)

    @property
    def agent(self) -> Summary | None:
        return Summary.of_seconds(self.to_agent_s)


@dataclass
class CrowdRun:
    """One transport's figures on one CPU arrangement, every round's samples together."""

    mode: str
    cpus: str = "shared"
    acks_s: list[float] = field(default_factory=list)
    to_agent_s: list[float] = field(default_factory=list)
    to_card_s: list[float] = field(default_factory=list)
    delivered: int = 0  # answers that reached their agent exactly once
    cards_won: int = 0  # cards showing their winner
    busy: int = 0  # people told "busy"
    edit_429s: int = 0  # chat.update refused by the fake's rate limit
    problems: list[str] = field(default_factory=list)
    #: Kandev's own, measured in this run's rounds: what its click → agent is compared with.
    floor: Floor = field(default_factory=Floor)
    #: The CPU the machine spent from the first click until it was quiet again, every round:
    #: beside the floor's, what the bot's share takes from Kandev's on shared CPUs.
    cpu: CpuSpent = field(default_factory=CpuSpent)
    #: The clicks ``cpu`` was metered over.
    metered: int = 0

    @property
    def label(self) -> str:
        return f"{MODE_LABELS.get(self.mode, self.mode)}, {CPU_LABELS.get(self.cpus, self.cpus)}"

    @property
    def ack(self) -> Summary | None:
        return Summary.of_seconds(self.acks_s)

    @property
    def click_agent(self) -> Summary | None:
        return Summary.of_seconds(self.to_agent_s)

    @property
    def click_card(self) -> Summary | None:
        return Summary.of_seconds(self.to_card_s)


@dataclass
class Crowd:
    crowd: int
    window_s: float
    rounds: int = 1
    runs: list[CrowdRun] = field(default_factory=list)

    @property
    def clicks(self) -> int:
        """Clicks per transport and CPU arrangement, every round together."""
        return self.crowd * self.rounds

    @property
    def problems(self) -> list[str]:
        return [f"crowd ({r.label}): {p}" for r in self.runs for p in r.problems]


def run(
    world: World,
    *,
    crowd: int,
    window: float,
    modes: Sequence[str] = MODES,
    rounds: int = 1,
    cpus: Sequence[str] = CPUS,
) -> Crowd:
    """``rounds`` crowds per transport and CPU arrangement (fresh bundles, a fresh bot each),
    their samples pooled: a p99 of 50 clicks is their slowest but one, so more rounds steady
    the figure."""
    unknown = [m for m in modes if m not in MODES] + [c for c in cpus if c not in CPUS]
    if unknown:
        raise ValueError(f"unknown transport(s) or CPU arrangement(s): {unknown}")
    result = Crowd(crowd, window, rounds=max(1, rounds))
    kandev = world.kandev
    for arrangement in cpus:
        for mode in modes:
            out = CrowdRun(mode, arrangement)
            result.runs.append(out)
            if arrangement == "split" and (os.cpu_count() or 1) < 2:
                out.problems.append("a CPU of its own needs 2 CPUs or more: not run")
                continue
            for _ in range(result.rounds):
                # The floor's bundles and the crowd's, each round (Kandev's own beside each
                # transport's crowd: Kandev's speed drifts between rounds by more than the
                # targets' margins); each round's agents go before the next round's are seeded.
                bundles = seed_spread(kandev, world.workspace_ids, crowd * 2)
                try:
                    _run_mode(world, mode, bundles[:crowd], bundles[crowd:], window, out)
                finally:
                    delete_tasks(kandev, [b.task_id for b in bundles])
    return result


@contextmanager
def _arranged(world: World, bot: BotProcess, cpus: str) -> Iterator[None]:
    """``split``: the bot on CPU 0 only, Kandev (its backend, agentctl and every mock agent)
    on CPU 1 only, as when Kandev and its agents run elsewhere; the benchmark's own processes
    (fake Slack, the people's requests) on either. ``shared``: every process on every CPU."""
    if cpus != "split" or bot.proc is None or world.kandev.pid is None:
        yield
        return
    pin(bot.proc.pid, {0})
    pin(world.kandev.pid, {1})
    try:
        yield
    finally:
        pin(world.kandev.pid, None)


def _run_mode(
    world: World,
    mode: str,
    floor: list[SeededBundle],
    clicked: list[SeededBundle],
    window: float,
    out: CrowdRun,
) -> None:
    """One round: one bot over one transport, its processes arranged on the CPUs. Socket
    Mode: the bot links to a process of its own that sends and times the envelopes
    (bench/socket_burst.py), as HTTP's requests are sent from one (bench/burst.py)."""
    fake = world.fake_slack()
    links = SocketBurst(fake.workspace.app_id) if mode == "socket" else None
    if links is not None:
        fake.socket.redirect_url = links.url
    bot = world.bot(fake, f"crowd-{mode}", mode=mode)
    log = CardLog(fake)  # before the bot starts: its first sync posts every card
    try:
        bot.start()
        with _arranged(world, bot, out.cpus):
            _round(world, fake, bot, log, floor, clicked, window, out, links)
    finally:
        bot.stop()
        if links is not None:
            links.close()


def _round(
    world: World,
    fake: FakeSlack,
    bot: BotProcess,
    log: CardLog,
    floor: list[SeededBundle],
    clicked: list[SeededBundle],
    window: float,
    out: CrowdRun,
    links: SocketBurst | None,
) -> None:
    """The floor first (with this bot running and editing its cards, as during the crowd),
    then the crowd once the bot is quiet."""
    wait_synced(bot)
    wanted = [b.pending_id for b in floor + clicked]
    if not log.wait_posted(wanted, timeout=CARDS_TIMEOUT_S):
        out.problems.append(f"not every bundle got a card within {CARDS_TIMEOUT_S:.0f} s")
        return
    fake.settle(quiet=1.0, timeout=60.0)
    assert bot.proc is not None
    meter = CpuMeter(bot.proc.pid, [links.pid] if links is not None else [])
    _quiet(out, "the floor")
    meter.start()
    round_trips, to_agent, problems = _floor(world, floor, window)
    out.floor.round_trips_s.extend(round_trips)
    out.floor.to_agent_s.extend(to_agent)
    out.problems += problems
    fake.settle(quiet=1.0, timeout=60.0)  # the floor's cards edited: the bot is quiet
    _quiet(out, "the crowd")  # Kandev's work after the floor's answers is done too
    out.floor.cpu += meter.stop()
    out.floor.metered += len(floor)
    people = [
        fake.add_user(SlackUser(id=f"U0CROWD{n:03d}", name=f"person{n}"))
        for n in range(len(clicked))
    ]
    mark = fake.mark()
    cards = [log.card(b.pending_id) for b in clicked]
    meter.start()
    clicks = (
        _socket_clicks(fake, links, cards, people, window)
        if links is not None
        else _http_clicks(fake, bot.events_url, cards, people, window)
    )
    out.acks_s += [s.ack.elapsed for s in clicks if s.ack is not None]
    _check(world, fake, log, clicked, people, clicks, mark, out)
    # Until Kandev's work after the answers is done, as the floor's is measured.
    wait_quiet_machine(QUIET_BELOW, timeout=QUIET_TIMEOUT_S)
    out.cpu += meter.stop()
    out.metered += len(clicked)


def _quiet(out: CrowdRun, before: str) -> None:
    """Wait for the machine to be quiet (the agents just started, Kandev's own work after the
    seeding, the previous crowd's edits): the floor and the crowd each start from the same
    idle machine, not from whatever the previous step left running."""
    busy = wait_quiet_machine(QUIET_BELOW, timeout=QUIET_TIMEOUT_S)
    if busy >= QUIET_BELOW:
        out.problems.append(
            f"the CPUs were still {busy:.0%} busy before {before} after {QUIET_TIMEOUT_S:.0f} s"
        )


@dataclass
class _Sent:
    at: float = 0.0  # time.time() when the request left
    ack: Ack | None = None
    error: str = ""


def _floor(
    world: World, bundles: list[SeededBundle], window: float
) -> tuple[list[float], list[float], list[str]]:
    """Kandev's own respond, N bare clients spread over the window (one warmed-up connection
    each), sent and timed from a process of their own as the people's clicks are."""
    api = f"{world.kandev.base_url}/api/v1"
    body = json.dumps(
        {
            "answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": ""}],
            "rejected": False,
            "reject_reason": "",
        }
    )
    requests = [
        burst.Request(
            url=f"{api}/clarification/{b.pending_id}/respond",
            body=body,
            headers={"Content-Type": "application/json"},
            warm_url=f"{api}/workspaces",
        )
        for b in bundles
    ]
    sent = burst.send(requests, window)
    agent: list[float] = []
    problems: list[str] = []
    until = time.monotonic() + AGENT_TIMEOUT_S  # one wait for them all (see _check)
    for bundle, out in zip(bundles, sent, strict=True):
        error = out.error or (f"HTTP {out.status}" if out.status != 200 else "")
        if error:
            problems.append(f"floor respond {bundle.pending_id}: {error}")
            continue
        answered = _agent_answered_at(world, bundle.task_id, until)
        if answered is None:
            problems.append(f"floor respond {bundle.pending_id}: the agent got no answer")
        else:
            agent.append(answered - out.sent_at)
    round_trips = [s.elapsed for s in sent if s.elapsed is not None and not s.error]
    return round_trips, agent, problems


def _http_clicks(
    fake: FakeSlack,
    events_url: str,
    cards: list[tuple[str, str]],
    people: list[SlackUser],
    window: float,
) -> list[_Sent]:
    prepared: list[burst.Request] = []
    for (channel, ts), person in zip(cards, people, strict=True):
        transport = PreparedTransport(events_url, fake.workspace.signing_secret)
        SlackDriver(fake, transport).click(channel, ts, text=OPTION, user=person)
        assert transport.request is not None
        prepared.append(transport.request)
    return [
        _Sent(at=r.sent_at, error=r.error)
        if r.error or r.elapsed is None
        else _Sent(at=r.sent_at, ack=Ack(r.status, r.body, r.elapsed, {}))
        for r in burst.send(prepared, window)
    ]


def _socket_clicks(
    fake: FakeSlack,
    links: SocketBurst,
    cards: list[tuple[str, str]],
    people: list[SlackUser],
    window: float,
) -> list[_Sent]:
    envelopes = []
    for (channel, ts), person in zip(cards, people, strict=True):
        prepared = PreparedEnvelope()
        SlackDriver(fake, prepared).click(channel, ts, text=OPTION, user=person)
        assert prepared.envelope is not None
        envelopes.append(prepared.envelope)
    return [
        _Sent(at=a.sent_at, error=a.error)
        if a.error or a.elapsed is None
        else _Sent(at=a.sent_at, ack=Ack(200, a.payload, a.elapsed, {}))
        for a in links.send(envelopes, window)
    ]


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
    """Every answer reached its agent once, every card shows its winner, nobody was busy.

    The waits share one deadline (agents, then edits): when Kandev refused a crowd (its own
    "persistence unavailable", which one of its probes timing out under load turns on), 50
    answers that never come cost one wait, not one each (25 minutes in two partial runs)."""
    agents_by = time.monotonic() + AGENT_TIMEOUT_S
    edits_by = agents_by + EDIT_TIMEOUT_S

    def left(until: float) -> float:
        return max(until - time.monotonic(), 0.0)

    for n, bundle in enumerate(bundles):
        s = sent[n]
        if s.ack is None or s.ack.status != 200:
            out.problems.append(
                f"click on {bundle.pending_id}: {s.error or f'HTTP {s.ack and s.ack.status}'}"
            )
            continue
        answered = _agent_answered_at(world, bundle.task_id, agents_by)
        record = world.kandev.agent_result(bundle.task_id, timeout=0) or {}
        tool = record.get("tool") or {}
        if answered is None:
            out.problems.append(f"click on {bundle.pending_id}: the agent got no answer")
        elif tool.get("parsed") != OPTION_PARSED or record.get("prompts"):
            out.problems.append(f"click on {bundle.pending_id}: the agent got {record!r:.300}")
        else:
            out.delivered += 1
            out.to_agent_s.append(answered - s.at)
        edit = log.wait_edit(bundle.pending_id, s.at, left(edits_by))
        if edit is None:
            out.problems.append(f"click on {bundle.pending_id}: the card was not edited")
            continue
        out.to_card_s.append(edit.at - s.at)
        channel, ts = log.card(bundle.pending_id)
        named = f"Answered by <@{people[n].id}>"
        text = _card_text(fake, channel, ts, named, left(edits_by))
        if named in text:
            out.cards_won += 1
        else:
            out.problems.append(
                f"card of {bundle.pending_id} does not name {people[n].id}: {text[-300:]!r}"
            )
    fake.settle(quiet=0.5, timeout=30.0)
    told = [e.all_text for e in fake.ephemerals()] + [str(p.body) for p in fake.response_posts()]
    out.busy = sum(BUSY in text for text in told)
    since = fake.calls()[mark:]
    out.edit_429s = sum(c.method == "chat.update" and c.status == 429 for c in since)


def _card_text(fake, channel: str, ts: str, wanted: str, timeout: float) -> str:
    """The card's text once it shows ``wanted``, or as it is after ``timeout`` (then said in
    the problem: the 12:35 run reported one card of 100 without its text, so it could not say
    whether the card was read before its answer's edit or showed something else)."""
    deadline = time.monotonic() + timeout
    while True:
        text = fake.message(channel, ts).all_text
        if wanted in text or time.monotonic() >= deadline:
            return text
        time.sleep(0.05)


def _agent_answered_at(world: World, task_id: str, deadline: float) -> float | None:
    """When the task's mock agent received the result of its question (time.time()), if it
    did by ``deadline`` (time.monotonic()); a record already there is read even past it."""
    while True:
        record = world.kandev.agent_result(task_id, timeout=max(deadline - time.monotonic(), 0.0))
        if record and record.get("tool"):
            return float(record["updated_at"])
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)
