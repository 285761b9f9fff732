"""Prometheus metrics of this process: every ``kandev_slack_*`` series is defined here.

The edges and use-cases record what happens through the small functions below (one line at
the place where it happens); gauges of durable state (waiting cards, the outbox) are read from
the store when Prometheus scrapes, by :class:`StateCollector`. Each process has its own
registry (:data:`REGISTRY`): every replica serves its own series, nothing is shared through a
file, and Prometheus tells the replicas apart by their scrape target.

Label values come from small fixed sets (:data:`SOURCES`, :data:`OUTCOMES`, :data:`ACK_KINDS`,
:data:`KANDEV_ERROR_KINDS`), so no label can grow without bound; a Slack error code is cut to
its code (no free text).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

# No ``*_created`` series: a counter's start time adds nothing a scrape does not show.
disable_created_metrics()

PREFIX = "kandev_slack"
CONTENT_TYPE = CONTENT_TYPE_LATEST

#: Where an answer came from.
SOURCES = ("button", "modal", "list", "home", "shortcut", "dm", "recovery")
#: How an answer ended: Kandev's verdict, or the bot's refusal before anything was sent.
OUTCOMES = (
    "won",
    "lost",
    "undecided",
    "ended",
    "invalid",
    "unavailable",
    "refused",
    "not_recorded",
    "unconfirmed",
    "duplicate",
)
#: Slack interaction kinds whose acknowledgement is timed.
ACK_KINDS = ("block_actions", "view_submission", "view_closed", "shortcut", "command", "event")
#: Kinds of Kandev errors.
KANDEV_ERROR_KINDS = (
    "unreachable",
    "unconfirmed",
    "auth",
    "protocol",
    "validation",
    "not_found",
    "conflict",
    "tool",
)

REGISTRY = CollectorRegistry(auto_describe=True)

#: The kinds of pending item (kandev_slack.core.pending.ItemKind), the ``kind`` label.
ITEM_KINDS = ("question", "approval")

CARDS_POSTED = Counter(
    f"{PREFIX}_cards_posted",
    "Cards posted to Slack, by the kind of item (question, approval).",
    ["kind"],
    registry=REGISTRY,
)
ANSWERS = Counter(
    f"{PREFIX}_answers",
    "Answers, rejections and approvals from Slack, by where they came from, how they ended "
    "and the kind of item.",
    ["source", "outcome", "kind"],
    registry=REGISTRY,
)
TIME_TO_CARD = Histogram(
    f"{PREFIX}_time_to_card_seconds",
    "From the item's creation in Kandev to its card posted in Slack, by kind.",
    ["kind"],
    buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800),
    registry=REGISTRY,
)
ANSWER_SECONDS = Histogram(
    f"{PREFIX}_answer_seconds",
    "From a click (or form submission) recorded to Kandev's verdict.",
    buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30),
    registry=REGISTRY,
)
ACK_SECONDS = Histogram(
    f"{PREFIX}_ack_seconds",
    "From a Slack request reaching the app to its acknowledgement, by interaction kind.",
    ["kind"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3),
    registry=REGISTRY,
)
GC_PAUSE_SECONDS = Histogram(
    f"{PREFIX}_gc_pause_seconds",
    "How long a garbage collection of generation 1 or 2 (2: the whole heap) stopped every "
    "thread, an ack's too.",
    ["generation"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25),
    registry=REGISTRY,
)
SLACK_API_ERRORS = Counter(
    f"{PREFIX}_slack_api_errors",
    "Slack Web API calls that failed, by method and Slack's error code.",
    ["method", "error"],
    registry=REGISTRY,
)
KANDEV_ERRORS = Counter(
    f"{PREFIX}_kandev_errors",
    "Kandev calls that failed, by kind.",
    ["kind"],
    registry=REGISTRY,
)
KANDEV_REQUESTS = Counter(
    f"{PREFIX}_kandev_requests",
    "HTTP requests sent to Kandev (every attempt), by call: the MCP tool or method, or the "
    "REST route.",
    ["call"],
    registry=REGISTRY,
)
APPROVAL_SWEEPS = Counter(
    f"{PREFIX}_approval_sweeps",
    "Approval sweeps run, by kind: full (every flagged task and every waiting card looked at) "
    "or light (the task lists read, then only what changed looked at).",
    ["kind"],
    registry=REGISTRY,
)
APPROVAL_SWEEP_CPU = Counter(
    f"{PREFIX}_approval_sweep_cpu_seconds",
    "CPU time of the approval sweeps (their thread's), by kind.",
    ["kind"],
    registry=REGISTRY,
)
FOLLOWUP_YIELD_SECONDS = Histogram(
    f"{PREFIX}_followup_yield_seconds",
    "How long a step of follow-up work (group lines, card edits, offers) waited for the "
    "urgent work in flight (acks, answers not yet sent to Kandev), by what waited.",
    ["work"],
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1),
    registry=REGISTRY,
)
FOLLOWUPS_NOT_MADE = Counter(
    f"{PREFIX}_followups_not_made",
    "Follow-up work left out because its bounded queue was full (a Send-to-all offer: "
    "ephemeral, never a durable write), by what.",
    ["work"],
    registry=REGISTRY,
)
#: What follow-up work is (the ``work`` label).
FOLLOWUP_WORK = ("group_line", "card_edit", "offer", "listing", "followup")


# ---- recording (one call where it happens) ------------------------------------------------


def source_label(source: str, via: str = "card") -> str:
    """The ``source`` label of an answer: its audit source (``slack:button``,
    ``slack:modal:<via>``, ``slack:shortcut``, ``recovery``…) and where it was clicked."""
    if source == "recovery":
        return "recovery"
    if source.startswith("slack:dm"):
        return "dm"
    if via in ("list", "home", "shortcut"):
        return via
    if source.startswith("slack:modal"):
        origin = source.split(":")[2] if source.count(":") >= 2 else "card"
        return origin if origin in ("list", "home", "shortcut") else "modal"
    if source == "slack:shortcut":
        return "shortcut"
    return "button"


_OUTCOME_OF = {
    "won": "won",
    "lost": "lost",
    "undecided": "undecided",
    "already_answered": "duplicate",  # the same person's earlier answer won
    "duplicate": "duplicate",
    "redelivered": "duplicate",  # Slack's copy of a click already answered
    "ended": "ended",
    "invalid": "invalid",
    "unavailable": "unavailable",
    "unknown_bundle": "unavailable",
    "not_recorded": "not_recorded",
    "unconfirmed": "unconfirmed",
    "forbidden": "refused",
}


def outcome_label(kind: str) -> str:
    """The ``outcome`` label of a verdict kind; every refusal before Kandev is ``refused``."""
    return _OUTCOME_OF.get(kind, "refused")


def _item(kind: str) -> str:
    return kind if kind in ITEM_KINDS else "question"


def answer(source: str, via: str, kind: str, *, item: str = "question") -> None:
    """An answer, rejection or approval of an ``item`` kind ended with ``kind`` (a verdict or
    a refusal kind)."""
    ANSWERS.labels(source_label(source, via), outcome_label(kind), _item(item)).inc()


def answered_in(seconds: float) -> None:
    """Kandev's verdict came ``seconds`` after the click was recorded."""
    ANSWER_SECONDS.observe(max(seconds, 0.0))


def card_posted(created_at: datetime | None, *, kind: str = "question") -> None:
    """A card is in Slack; ``created_at``: when Kandev created its item (of ``kind``)."""
    CARDS_POSTED.labels(_item(kind)).inc()
    if created_at is not None:
        created = created_at
        if created.tzinfo is None:
            created = created.replace(tzinfo=UTC)
        seconds = max((datetime.now(UTC) - created).total_seconds(), 0.0)
        TIME_TO_CARD.labels(_item(kind)).observe(seconds)


def gc_paused(generation: int, seconds: float) -> None:
    GC_PAUSE_SECONDS.labels(str(generation)).observe(max(seconds, 0.0))


def acked(kind: str, seconds: float) -> None:
    ACK_SECONDS.labels(kind if kind in ACK_KINDS else "event").observe(max(seconds, 0.0))


_ERROR_CODE = re.compile(r"[a-z0-9_]{1,60}")


def slack_api_error(method: str, error: str) -> None:
    """A Slack call failed with ``error`` (its code only: any detail after it is dropped)."""
    match = _ERROR_CODE.match(error.strip().lower())
    SLACK_API_ERRORS.labels(method, match.group(0) if match else "other").inc()


def yielded(work: str, seconds: float) -> None:
    """A step of follow-up ``work`` waited ``seconds`` for urgent work in flight."""
    FOLLOWUP_YIELD_SECONDS.labels(work if work in FOLLOWUP_WORK else "followup").observe(
        max(seconds, 0.0)
    )


def followup_not_made(work: str) -> None:
    """Follow-up ``work`` left out: its bounded queue was full."""
    FOLLOWUPS_NOT_MADE.labels(work if work in FOLLOWUP_WORK else "followup").inc()


def kandev_request(call: str) -> None:
    KANDEV_REQUESTS.labels(call).inc()


def approval_sweep(kind: str, cpu_seconds: float) -> None:
    """An approval sweep of ``kind`` (``full``, ``light``) ran, taking ``cpu_seconds``."""
    APPROVAL_SWEEPS.labels(kind).inc()
    APPROVAL_SWEEP_CPU.labels(kind).inc(cpu_seconds)


def kandev_error(kind: str) -> None:
    KANDEV_ERRORS.labels(kind if kind in KANDEV_ERROR_KINDS else "tool").inc()


# ---- gauges read at scrape time -----------------------------------------------------------


@dataclass(frozen=True)
class State:
    """What the state gauges show, read from the store and the health registry."""

    pending_cards: int
    oldest_pending_created_at: datetime | None
    outbox_pending: int
    outbox_failed: int
    health_problems: tuple[str, ...]  # components with a problem
    last_sync_age_s: float | None
    linked_people: int = 0  # Slack people linked to their Kandev account, link working
    broken_links: int = 0  # links whose token Kandev refused (they are asked to reconnect)


#: Every health component, so each has a series (0) before its first problem.
HEALTH_COMPONENTS = (
    "kandev",
    "sync",
    "unroutable",
    "routing",
    "database",
    "slack",
    "outbox",
    "cards",
)


class StateCollector(Collector):
    """Gauges computed when Prometheus scrapes: waiting cards and the oldest one's age, the
    outbox's depth and failed items (a few indexed counts), the people linked to their Kandev
    account and the broken links, health by component and the age of the last good sync
    cycle. A database that does not answer leaves the store's gauges out
    of that scrape (the ``database`` health gauge says why)."""

    def __init__(self, read: Callable[[], State]) -> None:
        self._read = read

    def describe(self) -> Iterator[Metric]:
        return iter(())  # read at scrape time only (no store access at registration)

    def collect(self) -> Iterator[Metric]:
        try:
            state = self._read()
        except Exception as exc:  # a scrape must answer even when the database does not
            log.warning("metrics: could not read the store (%s)", type(exc).__name__)
            return
        yield _gauge("pending_cards", "Question cards waiting for an answer.", state.pending_cards)
        age = 0.0
        if state.oldest_pending_created_at is not None:
            oldest = state.oldest_pending_created_at
            age = max((datetime.now(UTC) - oldest).total_seconds(), 0.0)
        yield _gauge(
            "oldest_pending_age_seconds",
            "Age of the oldest question card still waiting (0 when none waits).",
            age,
        )
        yield _gauge(
            "outbox_pending",
            "Card posts and edits not done yet (outbox depth).",
            state.outbox_pending,
        )
        yield _gauge(
            "outbox_failed", "Card posts and edits given up for good (failed).", state.outbox_failed
        )
        yield _gauge(
            "linked_people",
            "Slack people linked to their own Kandev account, whose link works.",
            state.linked_people,
        )
        yield _gauge(
            "broken_links",
            "Links to Kandev accounts whose token no longer works (they are asked to reconnect).",
            state.broken_links,
        )
        health = GaugeMetricFamily(
            f"{PREFIX}_health_problem",
            "1 while a component has a problem (what /healthz reports), else 0.",
            labels=["component"],
        )
        for component in sorted(set(HEALTH_COMPONENTS) | set(state.health_problems)):
            health.add_metric([component], 1.0 if component in state.health_problems else 0.0)
        yield health
        if state.last_sync_age_s is not None:
            yield _gauge(
                "last_sync_age_seconds",
                "Seconds since the last good sync cycle with Kandev.",
                state.last_sync_age_s,
            )


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{PREFIX}_{name}", doc, value=float(value))


_state_lock = threading.Lock()
_state_collector: StateCollector | None = None


def watch_state(read: Callable[[], State]) -> None:
    """Serve the state gauges from ``read`` (replacing an earlier one in this process)."""
    global _state_collector
    with _state_lock:
        if _state_collector is not None:
            REGISTRY.unregister(_state_collector)
        _state_collector = StateCollector(read)
        REGISTRY.register(_state_collector)


def exposition() -> bytes:
    """Every series of this process in Prometheus' text format."""
    started = time.perf_counter()
    body = generate_latest(REGISTRY)
    log.debug("metrics rendered in %.1f ms", (time.perf_counter() - started) * 1000)
    return body
