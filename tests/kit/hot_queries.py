"""The store's hot queries and how the database plans them.

A *hot* query runs per poll cycle, per Slack interaction, per tick of the publisher, crash
recovery, reminders, subscribers' DM cards or lease heartbeat, per metrics scrape, or in the
retention purge. Each must find its rows through an index: a store of 100,000 cards must cost
no more per cycle than an empty one. This module lists them (as calls on a :class:`Database`
and its repositories, so the SQL is the real one), captures the statements each call sends and
asks the database for their plans (``EXPLAIN QUERY PLAN`` on SQLite, ``EXPLAIN`` on
PostgreSQL). The store tests assert that no hot query reads a large table whole; the footprint
benchmark prints the plans against 100,000 cards.

The calls run against a *probe* store (:func:`prepare_probe`: one waiting, posted card with a
message, a submission and outbox rows), so that each takes its full path (every statement of
a compare-and-set, a purge, a lease); the captured statements can then be explained on
another database of the same schema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection

from kandev_slack.core.clarification import Answer, Bundle, Option, Question
from kandev_slack.core.domain import Card, CardOutcome, CardState, NewCard, TaskInfo
from kandev_slack.core.outbox import DigestPost
from kandev_slack.core.snooze import Snooze
from kandev_slack.core.timing.quiet import quiet_hours
from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database, LinksRepository
from kandev_slack.store.cards.copies import Gathering
from kandev_slack.store.cards.followups import NewCopy, OutboxRow
from kandev_slack.store.cards.thread_replies import ThreadReply
from kandev_slack.store.queues.pace import Pace
from kandev_slack.store.records import SubmissionContent

#: Tables that grow with the history (one or more rows per card): never read whole.
LARGE_TABLES = frozenset(
    {
        "cards",
        "audit_log",
        "submissions",
        "outbox",
        "card_messages",
        "card_followups",
        "thread_replies",
        "held_items",
        "dm_gathers",
    }
)

PROBE = "p-hot-probe"
PROBE_CHANNEL = "C0HOTPROBE"
PROBE_TS = "1700000000.000100"
PROBE_SUBMISSION = "s-hot-probe"
PROBE_WORKER = "w-hot-probe"
PROBE_QUESTION_KEY = "ws-probe|which database?"
#: The probe person's Kandev token (a made-up one, shaped like Kandev's) and the key it is
#: sealed with: the links are read and written through a vault of their own, whatever vault
#: the probe store was opened with.
PROBE_TOKEN = "kandev_pat_0badc0de_" + "p" * 43
PROBE_VAULT = Vault.from_keys(Vault.new_key())


@dataclass(frozen=True)
class HotQuery:
    name: str
    when: str  # what runs it
    call: Callable[[Database], object]


_A_DAY_BEFORE = datetime(2030, 1, 1, tzinfo=UTC)  # "opened Home since": any instant plans alike
_OUTCOME = CardOutcome(
    state=CardState.ANSWERED, via="slack", by_user="U0PROBE", at=datetime(2030, 1, 1, tzinfo=UTC)
)
_PROBE_CARD = Card.model_validate(
    {
        "pending_id": "p-hot-later",
        "task_id": "t",
        "channel": PROBE_CHANNEL,
        "item": {
            "pending_id": "p-hot-later",
            "task_id": "t",
            "created_at": "2030-01-01T00:00:00Z",
            "questions": [{"question_id": "q1", "title": "Database"}],
        },
        "task": {"task_id": "t"},
        "created_at": "2030-01-01T00:00:00Z",
        "updated_at": "2030-01-01T00:00:00Z",
    }
)
_WRITE = OutboxRow(
    kind="reply", key="hot-probe-reply", payload={"pending_id": PROBE}, channel=PROBE_CHANNEL
)
_DIGEST = DigestPost("U0PROBE", "hot-probe-digest", {"text": "digest", "blocks": []})
_THREAD_REPLY = ThreadReply(
    id="",
    message_key=f"{PROBE_CHANNEL}:1700000000.000200",
    pending_id=PROBE,
    channel=PROBE_CHANNEL,
    thread_ts=PROBE_TS,
    user_id="U0PROBE",
    question_id="db",
    option_id=None,
    text="the probe's reply",
)
_MESSAGE = NewCopy(key=f"escalation:{PROBE}", kind="escalation", target="C0ESCALATE", note="")
_DM = NewCopy(key=f"dm:{PROBE}:U0PROBE", kind="dm", target="U0PROBE", note="")

HOT_QUERIES: tuple[HotQuery, ...] = (
    # the poll cycle (kandev_slack/usecases/intake/sync.py)
    HotQuery(
        "get",
        "poll cycle: a listed bundle unknown to this process; clicks",
        lambda s: s.cards.get(PROBE),
    ),
    HotQuery(
        "answered_like",
        "poll cycle: a new bundle's past answer",
        lambda s: s.cards.answered_like(PROBE_QUESTION_KEY, PROBE_CHANNEL, exclude=PROBE),
    ),
    HotQuery(
        "same_item",
        "Send to all: the identical items waiting in a channel",
        lambda s: s.cards.same_item(
            PROBE_QUESTION_KEY, PROBE_CHANNEL, exclude="p-hot-other", resolved_since_of=PROBE
        ),
    ),
    HotQuery(
        "same_item_ids",
        "Send to all: whom a won answer's offer names",
        lambda s: s.cards.same_item_ids(PROBE_QUESTION_KEY, PROBE_CHANNEL, exclude=PROBE),
    ),
    HotQuery(
        "first_waiting",
        "a card's post: the first identical item waiting (it goes in its thread)",
        lambda s: s.cards.first_waiting(PROBE_QUESTION_KEY, PROBE_CHANNEL, _PROBE_CARD),
    ),
    HotQuery(
        "set_thread",
        "a card's post in another's thread",
        lambda s: s.cards.set_thread("p-hot-none", PROBE, PROBE_TS),
    ),
    HotQuery(
        "in_thread",
        "a card's edit: the identical items waiting in its thread",
        lambda s: s.cards.in_thread(PROBE),
    ),
    HotQuery(
        "record_card",
        "poll cycle: a new bundle",
        lambda s: s.cards.record_card(
            NewCard(_bundle("p-hot-new"), TaskInfo(task_id="t"), PROBE_CHANNEL)
        ),
    ),
    HotQuery("pending", "poll cycle: waiting cards", lambda s: s.cards.pending()),
    HotQuery(
        "pending_tasks",
        "/kandev-questions and Home: the tasks of waiting cards",
        lambda s: s.cards.pending_tasks(),
    ),
    HotQuery(
        "pending_places",
        "/kandev-questions and Home: where identical waiting cards are (one row each)",
        lambda s: s.cards.pending_places(),
    ),
    HotQuery(
        "pending_ids", "poll cycle: the ids of waiting cards", lambda s: s.cards.pending_ids()
    ),
    HotQuery(
        "pending_sessions",
        "first poll cycle: the waiting cards' sessions",
        lambda s: s.cards.pending_sessions(),
    ),
    HotQuery(
        "pending_of_kind",
        "approvals' sweep and hints: the waiting approval cards",
        lambda s: s.cards.pending_of_kind("perm:"),
    ),
    HotQuery(
        "unposted",
        "poll cycle (every 30 s): claims without a message",
        lambda s: s.cards.unposted(30),
    ),
    HotQuery(
        "submission_in_flight",
        "poll cycle: a card gone from Kandev's list; clicks",
        lambda s: s.submissions.submission_in_flight(PROBE, 30.0),
    ),
    HotQuery(
        "won_submission",
        "poll cycle: a card resolved elsewhere; clicks",
        lambda s: s.submissions.won_submission(PROBE),
    ),
    HotQuery(
        "transition",
        "poll cycle / click: a card resolved",
        lambda s: s.cards.transition("p-hot-none", _OUTCOME),
    ),
    HotQuery(
        "audit",
        "every action",
        lambda s: s.audit_log.audit(PROBE, "U0PROBE", "answer", "button", "won"),
    ),
    HotQuery("purge", "poll cycle (every 30 s): retention", lambda s: s.retention.purge()),
    # Slack interactions (kandev_slack/usecases/answering/admission.py,
    # kandev_slack/usecases/answering/answers.py)
    HotQuery(
        "by_any_message",
        "click: the card of a message",
        lambda s: s.cards.by_any_message(PROBE_CHANNEL, "1.000000"),
    ),
    HotQuery(
        "messages_of",
        "click / card edit: a bundle's other messages",
        lambda s: s.cards.messages_of(PROBE),
    ),
    HotQuery(
        "begin_submission",
        "click",
        lambda s: s.submissions.begin_submission(
            PROBE, "s-hot-new", "U0PROBE", SubmissionContent(action="answer")
        ),
    ),
    HotQuery(
        "get_submission",
        "click / recovery",
        lambda s: s.submissions.get_submission(PROBE_SUBMISSION),
    ),
    HotQuery(
        "finish_submission",
        "click / recovery",
        lambda s: s.submissions.finish_submission("s-hot-none", "won"),
    ),
    HotQuery(
        "drop_submission", "click / recovery", lambda s: s.submissions.drop_submission("s-hot-none")
    ),
    # the publisher's tick (kandev_slack/usecases/outbox/publisher.py)
    HotQuery(
        "outbox_put",
        "card posts and edits",
        lambda s: s.outbox.outbox_put(
            "update", "hot-probe-update", {"pending_id": PROBE}, PROBE_CHANNEL
        ),
    ),
    HotQuery(
        "outbox_take",
        "publisher tick (every second)",
        lambda s: s.outbox.outbox_take(None, limit=20, worker_id=PROBE_WORKER),
    ),
    HotQuery("outbox_done", "publisher", lambda s: s.outbox.outbox_done(-1)),
    HotQuery(
        "outbox_absorb",
        "group lines (a card's edits its current state covers)",
        lambda s: s.outbox.outbox_absorb(f"update:{PROBE}:pending:group:", -1, PROBE_WORKER),
    ),
    HotQuery(
        "outbox_next_due_s",
        "publisher idle: when the next item falls due",
        lambda s: s.outbox.outbox_next_due_s(),
    ),
    HotQuery(
        "outbox_next_due_s",
        "publisher idle: whether a take would find anything",
        lambda s: s.outbox.outbox_next_due_s(leased=True),
    ),
    HotQuery(
        "pace_turn",
        "publisher: every message posted (the channel's shared pace)",
        lambda s: s.outbox.pace_turn(PROBE_CHANNEL, follow=False, held=None, pace=Pace(1.0, 0.125)),
    ),
    HotQuery(
        "pace_block",
        "publisher: Slack answered 429",
        lambda s: s.outbox.pace_block(PROBE_CHANNEL, 1.0, tolerance_s=0.125),
    ),
    HotQuery("outbox_fail", "publisher", lambda s: s.outbox.outbox_fail(-1, "x")),
    HotQuery(
        "outbox_retry",
        "publisher",
        lambda s: s.outbox.outbox_retry(-1, 1.0, "x", worker_id=PROBE_WORKER),
    ),
    HotQuery("outbox_note", "publisher", lambda s: s.outbox.outbox_note(-1, "posting")),
    HotQuery("outbox_rearm", "publisher", lambda s: s.outbox.outbox_rearm("hot-probe-none")),
    HotQuery(
        "outbox_failed_count",
        "publisher (health)",
        lambda s: s.outbox.outbox_failed_count(within_s=3600),
    ),
    HotQuery(
        "mark_posted",
        "publisher: a card posted",
        lambda s: s.cards.mark_posted("p-hot-none", PROBE_CHANNEL, "2.0"),
    ),
    HotQuery(
        "message_get",
        "publisher: DM / escalation cards",
        lambda s: s.cards.message_get("hot-probe-none"),
    ),
    HotQuery(
        "message_opened",
        "publisher: DM cards",
        lambda s: s.cards.message_opened("hot-probe-none", "D0PROBE"),
    ),
    HotQuery(
        "message_posted",
        "publisher: DM / escalation cards",
        lambda s: s.cards.message_posted("hot-probe-none", "D0PROBE", "3.0"),
    ),
    # heartbeats (kandev_slack/usecases/leases.py) and shutdown (kandev_slack/app.py)
    HotQuery(
        "outbox_renew", "lease heartbeat", lambda s: s.outbox.outbox_renew(PROBE_WORKER, 30.0)
    ),
    HotQuery(
        "renew_submissions",
        "lease heartbeat",
        lambda s: s.submissions.renew_submissions([PROBE_SUBMISSION], 10.0),
    ),
    HotQuery(
        "hold_submission",
        "every answer, right before Kandev is called (its fence)",
        lambda s: s.submissions.hold_submission(PROBE_SUBMISSION, 0, 10.0),
    ),
    HotQuery("outbox_release", "shutdown", lambda s: s.outbox.outbox_release(PROBE_WORKER)),
    HotQuery(
        "release_submissions",
        "shutdown",
        lambda s: s.submissions.release_submissions([PROBE_SUBMISSION]),
    ),
    # crash recovery (kandev_slack/usecases/answering/recovery.py)
    HotQuery(
        "unfinished_submissions",
        "recovery scan",
        lambda s: s.submissions.unfinished_submissions(60.0),
    ),
    HotQuery(
        "take_over_submission",
        "recovery",
        lambda s: s.submissions.take_over_submission("s-hot-none", 60.0),
    ),
    # reminders / escalation and subscribers' DM cards
    # (kandev_slack/usecases/followups/reminders.py,
    # kandev_slack/usecases/followups/subscriptions.py)
    HotQuery("waiting_posted", "reminders tick", lambda s: s.followups.waiting_posted()),
    HotQuery(
        "advance_reminder", "reminders", lambda s: s.followups.advance_reminder(PROBE, 1, [_WRITE])
    ),
    HotQuery(
        "mark_escalated",
        "escalation",
        lambda s: s.followups.mark_escalated(PROBE, [_MESSAGE], []),
    ),
    HotQuery("unnotified_posted", "subscriptions tick", lambda s: s.followups.unnotified_posted()),
    HotQuery("mark_notified", "subscriptions", lambda s: s.followups.mark_notified(PROBE, [], [])),
    HotQuery(
        "mark_notified",
        "subscriptions, calm DMs",
        lambda s: s.followups.mark_notified(
            PROBE, [_DM], [], gathered=lambda gathering, joined: []
        ),
    ),
    HotQuery("gather_get", "calm DMs' posts", lambda s: s.cards.gather_get("gather:probe")),
    HotQuery(
        "gather_posted",
        "calm DMs' posts",
        lambda s: s.cards.gather_posted("gather:probe", "D0PROBE", PROBE_TS),
    ),
    HotQuery(
        "gather_burst",
        "calm DMs' counts",
        lambda s: s.cards.gather_burst(
            Gathering(
                key="gather:probe",
                user_id="U0PROBE",
                since=_A_DAY_BEFORE,
                last_at=_A_DAY_BEFORE,
                created_at=_A_DAY_BEFORE,
            )
        ),
    ),
    HotQuery("all_subscriptions", "subscriptions tick", lambda s: s.followups.all_subscriptions()),
    HotQuery(
        "subscriptions_of",
        "Home, /kandev-subscriptions",
        lambda s: s.followups.subscriptions_of("U0PROBE"),
    ),
    # Quiet hours (kandev_slack/usecases/followups/quiet.py)
    HotQuery(
        "quiet_people", "reminders / subscriptions tick", lambda s: s.followups.quiet_people()
    ),
    HotQuery("quiet_of", "/kandev-questions quiet", lambda s: s.followups.quiet_of("U0PROBE")),
    HotQuery(
        "quiet_set",
        "/kandev-questions quiet",
        lambda s: s.followups.quiet_set("U0PROBE", quiet_hours("19:00-08:00", "Europe/Berlin")),
    ),
    HotQuery(
        "quiet_clear", "/kandev-questions quiet off", lambda s: s.followups.quiet_clear("U0PROBE")
    ),
    HotQuery("held_due", "quiet tick", lambda s: s.followups.held_due()),
    HotQuery(
        "release_held",
        "quiet tick",
        lambda s: s.followups.release_held(
            "U0PROBE", lambda got: ("summary", f"summary:probe:{got[0].key}", {"target": "U0PROBE"})
        ),
    ),
    HotQuery("held_purge", "quiet tick (hourly)", lambda s: s.followups.held_purge(86400.0)),
    # the App Home tab (kandev_slack/usecases/views/home.py)
    HotQuery("home_opened", "Home opened", lambda s: s.viewers.home_opened("U0PROBE")),
    HotQuery("home_viewers", "Home refresh tick", lambda s: s.viewers.home_viewers(_A_DAY_BEFORE)),
    HotQuery("recent_resolved", "Home opened / refreshed", lambda s: s.cards.recent_resolved(20)),
    HotQuery("many", "Home: the resolved cards shown", lambda s: s.cards.many([PROBE, "other"])),
    # a reply in a card's thread (kandev_slack/usecases/answering/thread_replies.py)
    HotQuery(
        "offer_reply",
        "a reply in a card's thread",
        lambda s: s.thread_replies.offer_reply(_THREAD_REPLY),
    ),
    HotQuery(
        "thread_reply", "Send / Cancel on a reply", lambda s: s.thread_replies.thread_reply("r")
    ),
    HotQuery(
        "settle_reply",
        "Send / Cancel on a reply",
        lambda s: s.thread_replies.settle_reply("r", "U0PROBE", "sent"),
    ),
    HotQuery(
        "reply_of_message",
        "a reply in a card's thread edited or deleted",
        lambda s: s.thread_replies.reply_of_message(f"{PROBE_CHANNEL}:1.0"),
    ),
    HotQuery(
        "revise_reply",
        "a reply in a card's thread edited",
        lambda s: s.thread_replies.revise_reply("r", text="edited", option_id=None),
    ),
    HotQuery(
        "withdraw_reply",
        "a reply in a card's thread deleted",
        lambda s: s.thread_replies.withdraw_reply("r"),
    ),
    # "I'm on it" (kandev_slack/usecases/answering/claims.py)
    HotQuery("claim_now", "I'm on it / Release / claims tick", lambda s: s.claims.claim_now()),
    HotQuery("claimed_card", "I'm on it / Release", lambda s: s.claims.claimed_card(PROBE)),
    HotQuery("lapsed_claims", "claims tick", lambda s: s.claims.lapsed_claims()),
    HotQuery("next_lapse_s", "claims tick, settled", lambda s: s.claims.next_lapse_s()),
    HotQuery(
        "set_claim",
        "I'm on it / Release / a claim lapsing",
        lambda s: s.claims.set_claim(_probe_card(s), None, 0.0, [_WRITE]),
    ),
    # Snooze (kandev_slack/usecases/answering/snooze.py; the DM card's rendering in
    # kandev_slack/usecases/outbox/writes.py)
    HotQuery("snooze_now", "Snooze… / Unsnooze", lambda s: s.snoozes.snooze_now()),
    HotQuery("snooze_of", "Snooze… / Unsnooze", lambda s: s.snoozes.snooze_of("U0PROBE", PROBE)),
    HotQuery(
        "active_snooze",
        "a DM card rendered by the publisher",
        lambda s: s.snoozes.active_snooze("U0PROBE", PROBE),
    ),
    HotQuery(
        "snoozes_of",
        "App Home / the listing, per person",
        lambda s: s.snoozes.snoozes_of("U0PROBE"),
    ),
    HotQuery("due_snoozes", "snoozes tick", lambda s: s.snoozes.due_snoozes()),
    HotQuery("next_end_s", "snoozes tick, settled", lambda s: s.snoozes.next_end_s()),
    HotQuery(
        "put_snooze",
        "Snooze…",
        lambda s: s.snoozes.put_snooze(_probe_snooze(), _PROBE_SNOOZE_TOKEN, [_WRITE]),
    ),
    HotQuery(
        "end_snooze",
        "Unsnooze / a snooze ending",
        lambda s: s.snoozes.end_snooze("U0PROBE", PROBE, _PROBE_SNOOZE_TOKEN, [_WRITE]),
    ),
    # Digests (kandev_slack/usecases/followups/digests.py)
    HotQuery("digest_of", "/kandev-questions digest", lambda s: s.digests.digest_of("U0PROBE")),
    HotQuery("digest_settings", "digests tick", lambda s: s.digests.digest_settings()),
    HotQuery(
        "digest_sent", "digests tick", lambda s: s.digests.digest_sent("U0PROBE", "2030-01-01")
    ),
    HotQuery(
        "claim_digest",
        "digests tick, a digest due",
        lambda s: s.digests.claim_digest("U0PROBE", "2030-01-02", 1, _DIGEST),
    ),
    HotQuery(
        "set_digest",
        "/kandev-questions digest 09:00",
        lambda s: s.digests.set_digest("U0PROBE", "09:00", _A_DAY_BEFORE),
    ),
    HotQuery(
        "clear_digest", "/kandev-questions digest off", lambda s: s.digests.clear_digest("U0PROBE")
    ),
    HotQuery(
        "enqueue_digest",
        "/kandev-questions digest now",
        lambda s: s.digests.enqueue_digest(_DIGEST),
    ),
    # People's own Kandev accounts (kandev_slack/store/people/links.py)
    HotQuery(
        "get",
        "a click in a linked / required route: the clicker's link; Home; whoami",
        lambda s: _links(s).get("U0PROBE"),
    ),
    HotQuery(
        "by_kandev_user",
        "an approval resolved in Kandev: its actor's Slack person; a task's assignee",
        lambda s: _links(s).by_kandev_user("kandev-probe"),
    ),
    HotQuery(
        "all_links",
        "the people linked, each round of per-person reads; kandev-slack check",
        lambda s: _links(s).all_links(),
    ),
    HotQuery(
        "mark_broken",
        "Kandev refused a person's token (401)",
        lambda s: _links(s).mark_broken("U0PROBE", PROBE_TOKEN),
    ),
    HotQuery(
        "link",
        "Connect: a person's token accepted by Kandev",
        lambda s: _links(s).link("U0PROBE", "kandev-probe", "Probe", "probe@x", PROBE_TOKEN),
    ),
    HotQuery("unlink", "Disconnect", lambda s: _links(s).unlink("U0NOLINK")),
    HotQuery("counts", "metrics scrape: people linked, links broken", lambda s: s.links.counts()),
    HotQuery(
        "park_click",
        "a click by someone not connected in a required route",
        lambda s: _links(s).park_click("U0PROBE", PROBE, {"action": "answer"}),
    ),
    HotQuery(
        "take_parked_click",
        "Connect: the click parked before",
        lambda s: _links(s).take_parked_click("U0PROBE", 600.0),
    ),
    # metrics and health (kandev_slack/app.py)
    HotQuery("stats", "metrics scrape", lambda s: s.stats()),
    HotQuery("ping", "/healthz", lambda s: s.ping()),
    HotQuery("problem", "/healthz: the SQLite file checked, then ping", lambda s: s.problem()),
    HotQuery(
        "newer_than_this",
        "/healthz, at most every 30 s: a newer schema, cards of unknown kinds",
        lambda s: s.newer_than_this(),
    ),
)

#: Methods of the Database and its repositories that are not hot: the CLI, tests, or a call that
#: is never repeated.
COLD_METHODS = frozenset(
    {
        "atomic",  # no statement of its own: the transaction the calls inside it share
        "close",
        "count",
        "audit_entries",
        "by_message",
        "db_now",
        "forget_home_viewers",
        "message_add",
        "outbox_get",
        "outbox_insert",  # the statement of outbox_put, inside other transactions
        "outbox_pending_count",
        "outbox_purge",
        "reseal_all",  # once, at start-up (a key rotation completes)
        "schema_version",
        "submissions_for",
        "subscribe",
        "unsubscribe",
    }
)


_PROBE_SNOOZE_TOKEN = "t-hot-probe"


def _probe_snooze() -> Snooze:
    until = datetime(2030, 1, 1, tzinfo=UTC)
    return Snooze(
        user_id="U0PROBE", pending_id=PROBE, until=until, hours=1, token=_PROBE_SNOOZE_TOKEN
    )


def _links(store: Database) -> LinksRepository:
    """The store's links, through the probe's own vault (its statements are the store's)."""
    return LinksRepository(store.sql, PROBE_VAULT)


def _probe_card(store: Database) -> Card:
    card = store.claims.claimed_card(PROBE)
    assert card is not None, "the probe card is made by prepare_probe"
    return card


def _bundle(pending_id: str) -> Bundle:
    return Bundle(
        pending_id=pending_id,
        task_id="t-hot-probe",
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
        questions=[
            Question(
                question_id="q1",
                title="Database",
                prompt="Which database?",
                options=[Option(option_id="q1_opt1", label="PostgreSQL")],
            )
        ],
    )


def prepare_probe(store: Database) -> None:
    """The rows the hot calls act on: a waiting, posted card with an escalation message, an
    unfinished submission and a due outbox item (so each call runs every statement it has)."""
    store.cards.record_card(
        NewCard(
            _bundle(PROBE),
            TaskInfo(task_id="t-hot-probe"),
            PROBE_CHANNEL,
            question_key=PROBE_QUESTION_KEY,
        )
    )
    store.cards.mark_posted(PROBE, PROBE_CHANNEL, PROBE_TS)
    store.submissions.begin_submission(
        PROBE,
        PROBE_SUBMISSION,
        "U0PROBE",
        SubmissionContent(
            action="answer", answers=[Answer(question_id="q1", selected_options=["q1_opt1"])]
        ),
    )
    store.outbox.outbox_put("post", "hot-probe-post", {"pending_id": PROBE}, PROBE_CHANNEL)
    store.snoozes.put_snooze(_probe_snooze(), None, [])
    _links(store).link("U0PROBE", "kandev-probe", "Probe", "probe@x", PROBE_TOKEN)
    _links(store).park_click("U0PROBE", PROBE, {"action": "answer"})


@dataclass(frozen=True)
class Statement:
    sql: str
    params: Any


_SKIPPED = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|PRAGMA|SELECT 1\b|SELECT pg_)", re.IGNORECASE)


@contextmanager
def capturing(store: Database) -> Iterator[list[Statement]]:
    """Every statement the store sends while the block runs (transaction control, pre-pings
    and pragmas left out)."""
    seen: list[Statement] = []

    def record(_conn: Any, _cursor: Any, sql: str, params: Any, _context: Any, many: bool) -> None:
        if not many and not _SKIPPED.match(sql):
            seen.append(Statement(sql, params))

    engine = store.sql.engine  # noqa: SLF001 - the store's own engine is what sends the SQL
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def capture(
    store: Database, queries: Sequence[HotQuery] = HOT_QUERIES
) -> dict[str, list[Statement]]:
    """The statements of each hot query, run on ``store`` (see :func:`prepare_probe`); those
    of the calls sharing a name (one per repository) together."""
    out: dict[str, list[Statement]] = {}
    for query in queries:
        with capturing(store) as seen:
            query.call(store)
        out.setdefault(query.name, []).extend(seen)
    return out


def explain(conn: Connection, statement: Statement) -> list[str]:
    """The database's plan of one captured statement, one line per step."""
    if conn.dialect.name == "sqlite":
        rows = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement.sql}", statement.params)
        return [str(row[-1]) for row in rows]
    rows = conn.exec_driver_sql(f"EXPLAIN {statement.sql}", statement.params)
    return [str(row[0]) for row in rows]


_SQLITE_SCAN = re.compile(r"^SCAN (\w+)(?: AS \w+)?(?P<index> USING .*INDEX.*)?$")
_PG_SEQ = re.compile(r"Seq Scan on (\w+)")
_PG_INDEX = re.compile(r"Index (?:Only )?Scan(?: Backward)? using \w+ on (\w+)")
_SQL_LIMIT = re.compile(r"\bLIMIT\b", re.IGNORECASE)


def full_scans(plan: Sequence[str], dialect: str, sql: str = "") -> list[str]:
    """The large tables ``plan`` reads whole: a SQLite ``SCAN t`` or a PostgreSQL ``Seq Scan``,
    and a walk of a whole index (SQLite ``SCAN t USING INDEX``, a PostgreSQL index scan
    without an ``Index Cond``) unless a LIMIT stops it early."""
    found: list[str] = []
    steps = [line.strip().removeprefix("->").strip() for line in plan]
    if dialect == "sqlite":
        limited = bool(_SQL_LIMIT.search(sql))
        for step in steps:
            match = _SQLITE_SCAN.match(step)
            if match and match.group(1) in LARGE_TABLES and not (match["index"] and limited):
                found.append(match.group(1))
        return found
    limited = any(step.startswith("Limit") for step in steps)
    for n, step in enumerate(steps):
        seq = _PG_SEQ.search(step)
        if seq and seq.group(1) in LARGE_TABLES:
            found.append(seq.group(1))
            continue
        index = _PG_INDEX.search(step)
        if not index or index.group(1) not in LARGE_TABLES or limited:
            continue
        details = []
        for later, raw in zip(steps[n + 1 :], plan[n + 1 :], strict=True):
            if raw.strip().startswith("->"):
                break
            details.append(later)
        if not any(d.startswith("Index Cond") for d in details):
            found.append(index.group(1))
    return found


@dataclass(frozen=True)
class Plan:
    query: str
    sql: str
    lines: list[str]
    scans: list[str]


def plans(captured: Mapping[str, Sequence[Statement]], conn: Connection) -> list[Plan]:
    """The plan of every captured statement on ``conn``'s database, in order."""
    out: list[Plan] = []
    for name, statements in captured.items():
        for statement in statements:
            lines = explain(conn, statement)
            scans = full_scans(lines, conn.dialect.name, statement.sql)
            out.append(Plan(name, statement.sql, lines, scans))
    return out
