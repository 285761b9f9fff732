"""Kandev requests per bundle answered in Kandev, with a queue waiting (part of scenario 11).

The bot counts every HTTP request it sends to Kandev (``kandev_slack_kandev_requests_total``,
by call: the MCP tool, or the REST route). With the queue in place and the push bot idle, the
counts over a window of a few poll intervals give the regular poll's share; then ``answered``
waiting bundles are answered in Kandev (by a client of the benchmark's own, not counted),
spread over a window as long, each waited for until the bot edits its card. What the bot
sent beyond the idle rate, divided by the bundles answered, is its cost per bundle answered
in Kandev — beside the floor: one read of that bundle's session conversation (the poll goes on
anyway: its list pages every interval are shown apart).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx
from prometheus_client.parser import text_string_to_metric_families

from kandev_slack.core.clarification import Answer
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevError
from kandev_slack.kandev.models import Won
from kandev_slack.kits.fakeslack import CallRecord, FakeSlack
from tests.kit.harness import BotProcess, KandevServer

METRIC = "kandev_slack_kandev_requests"
LIST_CALL = "mcp list_pending_questions_kandev"
CONVERSATION_CALL = "mcp get_task_conversation_kandev"
LIST_PAGE = 200  # bundles a page of Kandev's list (the bot asks for the largest)
EDIT_TIMEOUT_S = 30.0
QUIET_TIMEOUT_S = 120.0  # how long the bot may take to settle before the idle window
ANSWER = [Answer(question_id="q1", selected_options=["q1_opt1"])]


@dataclass
class KandevRequests:
    waiting: int = 0
    answered: int = 0
    edited: int = 0
    poll_interval_s: float = 5.0
    #: Requests per poll interval while idle: list pages / conversation reads / the rest.
    idle_per_cycle: tuple[float, float, float] | None = None
    #: Requests per bundle answered in Kandev beyond the idle rate, the same three parts.
    per_answer: tuple[float, float, float] | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def list_pages(self) -> int:
        """Pages of Kandev's list a full read of the waiting bundles takes."""
        return max(1, math.ceil(self.waiting / LIST_PAGE))


def measure(
    kandev: KandevServer,
    bot: BotProcess,
    fake: FakeSlack,
    pending_ids: Sequence[str],
    *,
    waiting: int,
    poll_interval_s: float,
    cycles: int = 2,
) -> KandevRequests:
    """Run against the (running, idle) ``bot`` whose cards of ``pending_ids`` are posted."""
    result = KandevRequests(waiting=waiting, poll_interval_s=poll_interval_s)
    url = bot.events_url.rsplit("/slack/", 1)[0] + "/metrics"
    window = cycles * poll_interval_s
    if not _wait_quiet(url, poll_interval_s, result.list_pages):
        result.problems.append("the bot never settled to one list read per poll interval")
    before, t0 = request_counts(url), time.monotonic()
    time.sleep(window)
    idle, idle_s = counts_delta(before, request_counts(url)), time.monotonic() - t0
    result.idle_per_cycle = _parts({k: v * poll_interval_s / idle_s for k, v in idle.items()})
    answering = KandevClient(kandev.base_url, kandev.token)
    before, t0 = request_counts(url), time.monotonic()
    spacing = window / max(len(pending_ids), 1)
    for n, pending_id in enumerate(pending_ids):
        _sleep_until(t0 + n * spacing)
        sent = time.time()
        refused = _respond(answering, pending_id)
        if refused:
            result.problems.append(f"answer {pending_id} in Kandev: {refused}")
            continue
        result.answered += 1
        if _wait_edit(fake, pending_id, sent):
            result.edited += 1
        else:
            result.problems.append(f"answered in Kandev {pending_id}: card not edited")
    answering.close()
    _sleep_until(t0 + window)
    busy, busy_s = counts_delta(before, request_counts(url)), time.monotonic() - t0
    if result.answered:
        extra = {k: busy.get(k, 0.0) - idle.get(k, 0.0) * busy_s / idle_s for k in busy | idle}
        result.per_answer = _parts({k: v / result.answered for k, v in extra.items()})
    return result


def _respond(kandev: KandevClient, pending_id: str) -> str:
    """Answer in Kandev as another client would ("" once it is recorded, else why not). Over
    MCP: Kandev 0.95.1's REST respond to these agentless bundles can take 35 s and fail."""
    try:
        outcome = kandev.answer(pending_id, ANSWER, transport="mcp")
    except KandevError as exc:
        return f"{type(exc).__name__}: {exc}"
    return "" if isinstance(outcome, Won) else repr(outcome)[:200]


def _wait_quiet(
    url: str, interval_s: float, pages: int, timeout_s: float = QUIET_TIMEOUT_S
) -> bool:
    """Wait until a whole poll interval passes with no more list pages than one full read
    (the listings and posts before the idle window have finished their own reads)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        before = request_counts(url)
        time.sleep(interval_s)
        if counts_delta(before, request_counts(url)).get(LIST_CALL, 0.0) <= pages:
            return True
    return False


def _parts(by_call: dict[str, float]) -> tuple[float, float, float]:
    listed = by_call.get(LIST_CALL, 0.0)
    conversation = by_call.get(CONVERSATION_CALL, 0.0)
    return listed, conversation, sum(by_call.values()) - listed - conversation


def request_counts(metrics_url: str) -> dict[str, float]:
    """The bot's Kandev requests so far, by call (``kandev_slack_kandev_requests_total``)."""
    text = httpx.get(metrics_url, timeout=10.0).text
    return {
        sample.labels["call"]: sample.value
        for family in text_string_to_metric_families(text)
        if family.name == METRIC
        for sample in family.samples
        if sample.name.endswith("_total")
    }


def counts_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """What each call's count grew by (the calls that did not grow left out)."""
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v - before.get(k, 0.0)}


def _sleep_until(moment: float) -> None:
    time.sleep(max(moment - time.monotonic(), 0.0))


def _wait_edit(fake: FakeSlack, pending_id: str, since: float) -> bool:
    """The bot edited the bundle's card at or after ``since`` (time.time())."""

    def this_edit(call: CallRecord) -> bool:
        return call.ok and call.at >= since and _names(call, pending_id)

    try:
        fake.wait_for_call("chat.update", this_edit, timeout=EDIT_TIMEOUT_S)
    except TimeoutError:
        return False
    return True


def _names(call: CallRecord, pending_id: str) -> bool:
    metadata = call.params.get("metadata")
    payload = metadata.get("event_payload") if isinstance(metadata, dict) else None
    return isinstance(payload, dict) and payload.get("pending_id") == pending_id
