"""7. "Conversation" click → modal filled, beside Kandev's own session-messages call.

Bundles whose mock agent said and ran a few dozen things before asking; one at a time: a
signed click on the card's "Conversation" button → the fake Slack records the ``views.update``
that fills the modal (the bot read the task and the session's messages from Kandev and
rendered them), and Kandev's ``GET /task-sessions/{id}/messages`` (one page of 100, newest
first) from a bare, warmed-up httpx client.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import httpx

from bench.cardlog import CardLog
from bench.kandev import delete_tasks
from bench.stats import Summary
from bench.transport import KeepAliveTransport
from bench.world import World, wait_synced
from kandev_slack.cards import ids
from kandev_slack.kits.fakeslack import SlackDriver
from tests.kit.harness import QuestionSpec, SeededBundle, question

FILL_TIMEOUT_S = 15.0
PAUSE_S = 0.1
#: What each agent says and runs before asking (two session messages per step).
STEPS = 20


def transcript(steps: int = STEPS) -> list[dict]:
    """A session of ``2 * steps`` messages: Markdown text and a shell command, alternating."""
    found: list[dict] = []
    for n in range(steps):
        found.append({"say": f"Step **{n}**: read `module_{n}.py` and found a problem."})
        found.append({"tool": f"test {n}", "command": f"pytest tests/test_{n}.py", "exit": n % 2})
    return found


@dataclass
class ConversationBench:
    count: int
    kandev_messages: Summary | None = None
    click_filled: Summary | None = None
    ack: Summary | None = None
    problems: list[str] = field(default_factory=list)


def run(world: World, *, count: int) -> ConversationBench:
    kandev = world.kandev
    fake = world.fake_slack()
    bot = world.bot(fake, "conversation")
    result = ConversationBench(count)
    filled: list[float] = []
    own: list[float] = []
    acks: list[float] = []
    bundles: list[SeededBundle] = []
    transport = KeepAliveTransport(bot.events_url, fake.workspace.signing_secret)
    rest = httpx.Client(base_url=f"{kandev.base_url}/api/v1", timeout=30.0, trust_env=False)

    # A question of its own each (identical ones would be grouped: the thread's cards are
    # compact, without Conversation).
    def asked(n: int) -> list[QuestionSpec]:
        return [question("q1", "Choice", f"Which option, {n}?", ("A", "first"), ("B", "second"))]

    try:
        bot.start()
        wait_synced(bot)
        log = CardLog(fake)
        workspace = world.workspace_ids[0]
        for n in range(count):
            bundles.append(
                kandev.seed_bundle(asked(n), workspace_id=workspace, transcript=transcript())
            )
        if not log.wait_posted([b.pending_id for b in bundles], timeout=60.0):
            result.problems.append("not every seeded bundle got a card within 60 s")
        fake.settle(quiet=1.0, timeout=60.0)
        driver = SlackDriver(fake, transport)
        rest.get("/workspaces").raise_for_status()  # warm the bare client's connection
        for bundle in bundles:
            _kandev_messages(rest, bundle, own, result)
            _click(fake, driver, transport, log, bundle, filled, acks, result)
    finally:
        transport.close()
        rest.close()
        bot.stop()
        delete_tasks(kandev, [b.task_id for b in bundles])
    result.kandev_messages = Summary.of_seconds(own)
    result.click_filled = Summary.of_seconds(filled)
    result.ack = Summary.of_seconds(acks)
    return result


def _kandev_messages(rest: httpx.Client, bundle: SeededBundle, samples, result) -> None:
    started = time.perf_counter()
    response = rest.get(
        f"/task-sessions/{bundle.session_id}/messages", params={"limit": 100, "sort": "desc"}
    )
    samples.append(time.perf_counter() - started)
    if response.status_code != 200:
        result.problems.append(f"messages of {bundle.session_id}: HTTP {response.status_code}")


def _click(fake, driver, transport, log, bundle, filled, acks, result) -> None:
    channel, ts = log.card(bundle.pending_id)
    mark = fake.mark()
    ack = driver.choose(channel, ts, text="Conversation")  # in the card's "More" overflow
    sent = transport.last_sent_at
    acks.append(ack.elapsed)
    if ack.status != 200:
        result.problems.append(f"Conversation on {bundle.pending_id}: HTTP {ack.status}")
        return
    try:
        opened = fake.wait_for_call(
            "views.open",
            lambda c: (
                (c.params.get("view") or {}).get("callback_id") == ids.CALLBACK_CONVERSATION
                and c.ok
            ),
            timeout=FILL_TIMEOUT_S,
            after=mark,
        )
        view_id = opened.response["view"]["id"]
        update = fake.wait_for_call(
            "views.update",
            lambda c: c.params.get("view_id") == view_id and c.ok,
            timeout=FILL_TIMEOUT_S,
            after=mark,
        )
    except TimeoutError:
        result.problems.append(f"Conversation on {bundle.pending_id}: the modal was not filled")
        return
    filled.append(update.at - sent)
    time.sleep(PAUSE_S)
