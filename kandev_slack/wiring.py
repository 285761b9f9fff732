"""The parts :func:`kandev_slack.app.build` assembles: every use-case and worker made once from the
settings, each given only the repositories it uses, and what the Slack listeners delegate to.
(The composition root is kandev_slack/app.py; this is its half that knows the use-cases.)"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from kandev_slack.config.routing import Routing
from kandev_slack.config.settings import Settings
from kandev_slack.core.signals import Inbox, Signal
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.hints import NewPending, Resolved
from kandev_slack.ops.health import Health
from kandev_slack.ops.urgency import Turns, Urgency
from kandev_slack.slack.parsing.forms import read_form
from kandev_slack.slack.presenters.accounts import Accounts
from kandev_slack.slack.presenters.tell import RecoveryAnnouncer, Teller
from kandev_slack.slack.services import Services
from kandev_slack.slack.transport.lanes import (
    ANSWERING_WAITING,
    ANSWERING_WORKERS,
    FOLLOWUP_WAITING,
    FOLLOWUP_WORKERS,
    READING_WAITING,
    READING_WORKERS,
    Lane,
)
from kandev_slack.slack_api.gateway import SlackGateway
from kandev_slack.slack_api.notify import Notifier
from kandev_slack.store import Database
from kandev_slack.surfaces import quiet as quiet_views
from kandev_slack.surfaces.connect import with_account_blocks
from kandev_slack.surfaces.digest import digest_renderer
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.answering.admission import Admission
from kandev_slack.usecases.answering.answers import AnswerService
from kandev_slack.usecases.answering.claims import Claims
from kandev_slack.usecases.answering.groups import Groups
from kandev_slack.usecases.answering.interactions import Interactions
from kandev_slack.usecases.answering.linking import Linking
from kandev_slack.usecases.answering.recovery import Recovery
from kandev_slack.usecases.answering.snooze import Snoozes, SnoozeWorker
from kandev_slack.usecases.answering.thread_replies import ThreadReplies
from kandev_slack.usecases.audit import Audit
from kandev_slack.usecases.followups.digests import Digests, DigestWorker
from kandev_slack.usecases.followups.housekeeping import Housekeeping, Purge
from kandev_slack.usecases.followups.quiet import QuietReleaser, QuietService
from kandev_slack.usecases.followups.reminders import FollowUpWorker
from kandev_slack.usecases.followups.subscriptions import SubscriptionNotifier, SubscriptionService
from kandev_slack.usecases.groups import GroupLines
from kandev_slack.usecases.identity import Identities
from kandev_slack.usecases.intake.approvals import SWEEP, SWEEP_DEADLINE_S, UNROUTABLE, Approvals
from kandev_slack.usecases.intake.discovery import UNROUTABLE as DISCOVERY_UNROUTABLE
from kandev_slack.usecases.intake.discovery import Discovery
from kandev_slack.usecases.intake.reconciler import Reconciler, ReconcilerSubmissions, SessionIndex
from kandev_slack.usecases.intake.sweep_watch import SweepWatch
from kandev_slack.usecases.intake.sync import ReadAgain, SyncCards, SyncEngine
from kandev_slack.usecases.intake.unroutable import Unroutables
from kandev_slack.usecases.leases import InFlight
from kandev_slack.usecases.outbox.forgotten import ForgottenCards
from kandev_slack.usecases.outbox.messages import SnoozeLookup
from kandev_slack.usecases.outbox.pacing import POST_SPACING_S, Pacer
from kandev_slack.usecases.outbox.publisher import (
    GIVE_UP_AFTER,
    GROUP_LINE_DELAY_S,
    Enqueue,
    Publisher,
    Yielding,
)
from kandev_slack.usecases.outbox.writes import Notices, PublisherCards, PublisherOutbox, Writes
from kandev_slack.usecases.past_answers import PastAnswers
from kandev_slack.usecases.people import KandevPeople
from kandev_slack.usecases.tasks import TaskDirectory
from kandev_slack.usecases.views.conversation import ConversationService
from kandev_slack.usecases.views.home import AccountSection, HomeService
from kandev_slack.usecases.views.listing import LISTING_TURN_WAIT_S, ListingService
from kandev_slack.usecases.views.seeing import Seeing
from kandev_slack.usecases.views.waiting import Permalinks, SharedReads, WaitingQueue
from kandev_slack.usecases.views.whole_text import WholeText

#: How often crash recovery looks for answers a dead (or stopping) replica left unfinished: a
#: cheap indexed query, so a hand-over is taken within about a second.
RECOVERY_INTERVAL_S = 1.0


@dataclass
class UseCases:
    """The use cases that run as workers, what the listeners delegate to, and the signals and
    inbox that connect them."""

    publisher: Publisher
    sync: SyncEngine
    approvals: Approvals
    recovery: Recovery
    home: HomeService
    followups: FollowUpWorker
    dm_cards: SubscriptionNotifier
    snooze_ends: SnoozeWorker
    #: Releases what waited for quiet hours, one summary per person or channel.
    quiet_ends: QuietReleaser
    digests: DigestWorker
    services: Services
    #: Answers on their way to Kandev (their leases are renewed while they are).
    in_flight: InFlight
    new_bundles: Inbox[NewPending]
    sync_wakeup: Signal
    hinted: Signal
    card_changes: Signal
    #: The urgent work in flight (acks, answers not yet sent) follow-up work waits for.
    urgency: Urgency


def _person_client(bot: KandevClient) -> Callable[[str], KandevClient]:
    """Makes the Kandev client of one person's own token (kandev_slack/usecases/identity.py
    keeps them): the bot's Kandev, bounded retries like the bot's."""

    def made(token: str) -> KandevClient:
        return KandevClient(bot.base_url, token, retry_attempts=3, retry_max_wait=2.0)

    return made


def use_cases(
    settings: Settings, health: Health, store: Database, kandev: KandevClient, slack: SlackGateway
) -> UseCases:
    routing = settings.routing
    public_url = settings.kandev_public_url
    signals = _Signals()
    card_changes = signals.card_changes
    urgency = Urgency()
    publisher = _publisher(store, slack, public_url, health, card_changes, urgency)
    tasks = TaskDirectory(kandev)
    answerers = Answerers(routing, slack)
    permalinks = Permalinks(slack)
    identities = Identities(
        bot=kandev,
        links=store.links,
        answerers=answerers,
        client_for=_person_client(kandev),
    )
    # What each linked person's own Kandev account lets their views show, and their Kandev
    # inbox kept in step with their Slack snoozes (issue 32).
    seeing = Seeing(identities, hidden_ttl_s=settings.inbox_hidden_ttl_s)
    # Every use-case gets only the repositories it uses, never the whole database.
    queue = WaitingQueue(
        kandev, store.cards, routing, tasks, permalinks, answerers, SharedReads(), seeing=seeing
    )
    past = PastAnswers(store.cards, routing)
    notifier = Notifier(slack)
    in_flight = InFlight()
    # Kandev accounts as Slack people: who resolved an approval, who a task is assigned to.
    people = KandevPeople(kandev, identities.slack_user_of)
    answers = AnswerService(
        kandev,
        store.cards,
        store.submissions,
        store.audit_log,
        publisher,
        in_flight,
        identities,
        people=people,
    )
    sync = _sync(settings, store, kandev, tasks, publisher, health, signals, past)
    recovery = _recovery(store, kandev, answers, answerers, notifier, in_flight)
    claims = Claims(store.claims, store.cards, store.audit_log, answerers.claim_for, publisher.wake)
    snoozes = _snoozes(settings, store, publisher, seeing)
    digests = _digests(settings, store, queue, slack, publisher, snoozes)
    linking = Linking(identities, queue, store.audit_log)
    home = HomeService(
        queue,
        store.cards,
        store.followups,
        store.viewers,
        slack,
        card_changes,
        kandev_url=public_url,
        snoozes=snoozes,
        account_section=account_section(linking),
    )
    return UseCases(
        publisher=publisher,
        sync=sync,
        approvals=_approvals(settings, store, kandev, tasks, publisher, health, people),
        recovery=recovery,
        home=home,
        followups=FollowUpWorker(
            store.followups,
            answerers,
            publisher,
            health,
            lapse=claims.lapse_due,
            next_lapse=claims.next_lapse_s,
            people=people,
            changes=store.sql.writes,
        ),
        dm_cards=SubscriptionNotifier(
            store.followups,
            answerers,
            publisher,
            health,
            seeing=seeing,
            people=people,
            changes=store.sql.writes,  # a card posted: only a change makes DM cards due
        ),
        snooze_ends=SnoozeWorker(
            snoozes, health, follow_s=settings.inbox_follow_s, changes=store.sql.writes
        ),
        quiet_ends=QuietReleaser(
            store.followups, answerers, publisher, health, interval_s=settings.quiet_check_s
        ),
        digests=DigestWorker(digests, health, interval_s=settings.digest_check_s),
        services=_listener_services(
            settings,
            store,
            kandev,
            queue,
            answers,
            home,
            notifier,
            past,
            claims,
            snoozes,
            slack,
            digests,
            linking,
            urgency,
        ),
        in_flight=in_flight,
        new_bundles=signals.new_bundles,
        sync_wakeup=signals.sync_wakeup,
        hinted=signals.hinted,
        card_changes=card_changes,
        urgency=urgency,
    )


def account_section(linking: Linking) -> AccountSection | None:
    """App Home's section about the person's own Kandev account (None: no route uses
    people's accounts, so Home says nothing of them). (The tests build it here too.)"""
    if not linking.in_use:
        return None

    def section(user_id: str, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return with_account_blocks(blocks, linking.state(user_id))

    return section


def _publisher(
    store: Database,
    slack: SlackGateway,
    kandev_url: str,
    health: Health,
    changes: Signal,
    urgency: Urgency,
) -> Publisher:
    """The one writer of Slack messages (the outbox's worker), after the urgent work."""
    return build_publisher(
        store.outbox,
        store.cards,
        store.audit_log,
        slack,
        kandev_url=kandev_url,
        health=health,
        changes=changes,
        started_at=datetime.now(UTC),
        snoozes=store.snoozes,
        notices=quiet_views,
        urgency=urgency,
        store_writes=store.sql.writes,
    )


def build_publisher(
    outbox: PublisherOutbox,
    cards: PublisherCards,
    audit_log: Audit,
    slack: SlackGateway,
    *,
    kandev_url: str,
    health: Health,
    changes: Signal | None = None,
    post_spacing_s: float = POST_SPACING_S,
    give_up_after: int = GIVE_UP_AFTER,
    started_at: datetime | None = None,
    snoozes: SnoozeLookup | None = None,
    notices: Notices | None = None,
    urgency: Yielding | None = None,
    group_line_delay_s: float = GROUP_LINE_DELAY_S,
    store_writes: Callable[[], int] | None = None,
) -> Publisher:
    """The outbox's worker and its parts: the queue use-cases enqueue on (and the writes
    enqueue their follow-up edits on), the writes, the pace. ``started_at``: this process's
    start (bundles older than it may have a card a lost database forgot; None: never looked
    for); ``snoozes``: who snoozed which DM card; ``notices``: how the writes of no one card
    read (a quiet-hours summary, a gathering DM); ``urgency``: what each write waits for first
    (kandev_slack/ops/urgency.py); ``group_line_delay_s``: how much later than the change a
    card's group line is due; ``store_writes``: the store's count of this process's changing
    writes (idle, the worker looks again when it moves). (The tests build it here too.)"""
    groups = GroupLines(cards)
    queue = Enqueue(
        outbox, cards, groups, Signal("outbox"), changes, group_line_delay_s=group_line_delay_s
    )
    forgotten = ForgottenCards(slack.cards_in, audit_log, started_at)
    writes = Writes(
        cards, outbox, audit_log, slack, kandev_url, queue, forgotten, groups, snoozes, notices
    )
    return Publisher(
        outbox,
        cards,
        audit_log,
        queue,
        writes,
        Pacer(outbox, health, post_spacing_s),
        health=health,
        post_spacing_s=post_spacing_s,
        give_up_after=give_up_after,
        urgency=urgency,
        store_writes=store_writes,
    )


def _snoozes(settings: Settings, store: Database, publisher: Publisher, seeing: Seeing) -> Snoozes:
    """Who snoozed what: their DM cards collapsed and restored through the publisher, a
    linked person's Kandev inbox in step."""
    return Snoozes(
        store.snoozes,
        store.cards,
        store.audit_log,
        publisher.wake,
        publisher.changed,
        hour_s=settings.snooze_hour_s,
        seeing=seeing,
    )


def _digests(
    settings: Settings,
    store: Database,
    queue: WaitingQueue,
    slack: SlackGateway,
    publisher: Publisher,
    snoozes: Snoozes,
) -> Digests:
    """Each person's and each route's digest, posted through the outbox."""
    shift = timedelta(seconds=settings.digest_clock_shift_s)
    return Digests(
        store.digests,
        queue,
        settings.routing,
        slack,
        publisher.wake,
        digest_renderer(settings.kandev_public_url),
        clock=lambda: datetime.now(UTC) + shift,
        snoozed=snoozes.snoozed_ids,
    )


def _approvals(
    settings: Settings,
    store: Database,
    kandev: KandevClient,
    tasks: TaskDirectory,
    publisher: Publisher,
    health: Health,
    people: KandevPeople,
) -> Approvals:
    """Tool-permission requests found, posted once and ended (own worker)."""
    return Approvals(
        kandev.permissions,
        kandev.workspaces,
        store.cards,
        store.submissions,
        store.audit_log,
        settings.routing,
        tasks,
        publisher,
        health,
        clock=lambda: datetime.now(UTC),
        wakeup=Signal("approvals"),
        unroutable=Unroutables(health, UNROUTABLE, "approval"),
        sweep_watch=SweepWatch(health, SWEEP, "approval sweep", SWEEP_DEADLINE_S),
        poll_interval=settings.kandev_poll_interval,
        full_sweep_interval=settings.kandev_full_sweep_interval,
        people=people,
    )


def _recovery(
    store: Database,
    kandev: KandevClient,
    answers: AnswerService,
    answerers: Answerers,
    notifier: Notifier,
    in_flight: InFlight,
) -> Recovery:
    """Answers left in flight by a crashed process, re-sent or settled (own worker)."""
    return Recovery(
        kandev,
        store.cards,
        store.submissions,
        store.audit_log,
        answers,
        answerers,
        RecoveryAnnouncer(notifier),
        in_flight,
        interval_s=RECOVERY_INTERVAL_S,
        changes=store.sql.writes,
    )


class _Signals:
    """The wake-ups and inboxes that connect the workers. Push hints: a reconnect reads the
    whole list; a new bundle only that bundle (from its session's conversation), a resolved
    session only its conversation, on a loop of their own
    (kandev_slack/usecases/intake/sync.py)."""

    def __init__(self) -> None:
        self.card_changes = Signal("card changed")
        self.sync_wakeup = Signal("look at Kandev")
        self.hinted = Signal("new bundles hinted")
        self.new_bundles: Inbox[NewPending] = Inbox("new bundles", wakes=self.hinted)
        self.resolved_sessions: Inbox[Resolved] = Inbox("resolved sessions", wakes=self.hinted)


def _sync(
    settings: Settings,
    store: Database,
    kandev: KandevClient,
    tasks: TaskDirectory,
    publisher: Publisher,
    health: Health,
    signals: _Signals,
    past: PastAnswers,
) -> SyncEngine:
    """Discovery, the reconciler and the housekeeping, on their loops."""
    return build_sync(
        kandev,
        store.cards,
        store.submissions,
        store.audit_log,
        store.retention,
        settings.routing,
        tasks,
        publisher,
        health,
        signals.sync_wakeup,
        poll_interval=settings.kandev_poll_interval,
        new_bundles=signals.new_bundles,
        resolved_sessions=signals.resolved_sessions,
        past=past,
    )


def build_sync(
    kandev: KandevClient,
    cards: SyncCards,
    submissions: ReconcilerSubmissions,
    audit_log: Audit,
    retention: Purge,
    routing: Routing,
    tasks: TaskDirectory,
    publisher: Publisher,
    health: Health,
    wakeup: Signal,
    *,
    poll_interval: float = 5.0,
    new_bundles: Inbox[NewPending] | None = None,
    resolved_sessions: Inbox[Resolved] | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    past: PastAnswers | None = None,
) -> SyncEngine:
    """The loops that read Kandev and the use-cases they hand what they read to: discovery
    (its ``look_again`` reads again through ``new_bundles``, else ``wakeup``), the reconciler
    (sharing discovery's index of sessions) and the housekeeping (``retention`` its purge).
    ``past``: earlier answers shown on a new card (default: from ``cards``). (The tests build
    it here too.)"""
    sessions = SessionIndex()
    discovery = Discovery(
        kandev,
        cards,
        audit_log,
        routing,
        tasks,
        publisher,
        health,
        past=past if past is not None else PastAnswers(cards, routing),
        clock=clock,
        look_again=ReadAgain(wakeup, new_bundles).look_again,
        sessions=sessions,
        unroutables=Unroutables(health, DISCOVERY_UNROUTABLE, "question"),
    )
    reconciler = Reconciler(
        kandev,
        cards,
        submissions,
        audit_log,
        publisher,
        clock=clock,
        sessions=sessions,
        health=health,
    )
    return SyncEngine(
        kandev,
        discovery,
        reconciler,
        Housekeeping(cards, retention, publisher),
        health,
        wakeup,
        poll_interval=poll_interval,
        new_bundles=new_bundles,
        resolved_sessions=resolved_sessions,
        clock=clock,
    )


def _listener_services(
    settings: Settings,
    store: Database,
    kandev: KandevClient,
    queue: WaitingQueue,
    answers: AnswerService,
    home: HomeService,
    notifier: Notifier,
    past: PastAnswers,
    claims: Claims,
    snoozes: Snoozes,
    slack: SlackGateway,
    digests: Digests,
    linking: Linking,
    urgency: Urgency,
) -> Services:
    """What the Slack listeners delegate to, with the lanes behind interactions."""
    public_url = settings.kandev_public_url
    admission = Admission(store.cards, store.audit_log, queue, queue.answerers, answers.identities)
    answering = Lane("answering", workers=ANSWERING_WORKERS, waiting=ANSWERING_WAITING)
    reading = Lane("reading", workers=READING_WORKERS, waiting=READING_WAITING)
    groups = Groups(store.cards, store.audit_log)
    followups = Lane("followups", workers=FOLLOWUP_WORKERS, waiting=FOLLOWUP_WAITING)
    interactions = Interactions(
        admission,
        answers,
        answering,
        reading,
        read_form,
        claims,
        snoozes,
        groups,
        urgency=urgency,
        followups=followups,
    )
    teller = Teller(notifier, home)
    accounts = Accounts(linking, notifier, teller, home, interactions, reading, public_url)
    return Services(
        admission=admission,
        answers=answers,
        listing=ListingService(
            queue,
            kandev,
            kandev_url=public_url,
            page_size=settings.kandev_list_page_size,
            snoozed=snoozes.snoozed_ids,
            accounts=linking.in_use,
            computing=Turns(LISTING_TURN_WAIT_S, "listing").turn,
        ),
        home=home,
        notifier=notifier,
        kandev_public_url=public_url,
        answering=answering,
        reading=reading,
        followups=followups,
        conversation=ConversationService(kandev, past, settings.routing, queue.permalinks),
        subscriptions=SubscriptionService(store.followups, kandev),
        quiet=QuietService(store.followups, slack),
        claims=claims,
        thread_replies=ThreadReplies(
            admission, store.thread_replies, queue.answerers, store.audit_log
        ),
        snoozes=snoozes,
        groups=groups,
        interactions=interactions,
        teller=teller,
        whole=WholeText(store.outbox),
        digests=digests,
        accounts=accounts,
    )
