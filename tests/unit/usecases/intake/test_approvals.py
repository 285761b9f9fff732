"""Approvals found, posted once and ended: a hinted task is listed and its new request
claimed and posted; the sweep finds flagged tasks; a request that left the list ends as the
transcript says (the winner's option, cancelled, withdrawn), never guessed; a moved
cancellation revision closes the card; an unroutable request is posted nowhere."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest

from kandev_slack.config.routing import Routing
from kandev_slack.core.approval import approval_key
from kandev_slack.core.domain import CardOutcome, CardState
from kandev_slack.core.signals import Signal
from kandev_slack.kandev.approvals.wire import PermissionRecord, PermissionRequest
from kandev_slack.kandev.errors import KandevProtocolError, KandevToolError
from kandev_slack.kandev.models import Task, Workspace
from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.usecases.intake import approvals as approvals_module
from kandev_slack.usecases.intake.approvals import SWEEP, SWEEP_DEADLINE_S, UNROUTABLE, Approvals
from kandev_slack.usecases.intake.sweep_watch import SweepWatch
from kandev_slack.usecases.intake.unroutable import Unroutables
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.usecases.people import KandevPeople
from kandev_slack.usecases.tasks import TaskDirectory
from tests.kit.factories import ALICE_ID, CHANNEL
from tests.kit.fakes import FakeKandev, FakePermissions

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


@pytest.fixture
def permissions(fake_kandev: FakeKandev) -> FakePermissions:
    return fake_kandev.permissions


def _approvals(
    permissions: FakePermissions,
    fake_kandev: FakeKandev,
    store: Database,
    routing: Routing,
    publisher: Publisher,
    health: Health,
) -> Approvals:
    for task_id in ("t-1", "t-2", "t-3"):
        fake_kandev.tasks[task_id] = Task(id=task_id, title=f"Task {task_id}", workspace_id="ws-1")
    return Approvals(
        permissions,
        lambda: fake_kandev.workspace_list,
        store.cards,
        store.submissions,
        store.audit_log,
        routing,
        TaskDirectory(fake_kandev),
        publisher,
        health,
        clock=lambda: NOW,
        wakeup=Signal("approvals"),
        unroutable=Unroutables(health, UNROUTABLE, "approval"),
        sweep_watch=SweepWatch(health, SWEEP, "approval sweep", SWEEP_DEADLINE_S),
    )


@pytest.fixture
def approvals(permissions, fake_kandev, store, routing, publisher, health) -> Approvals:
    from kandev_slack.kandev.models import Workspace

    fake_kandev.workspace_list.append(Workspace(id="ws-1", name="Platform"))
    return _approvals(permissions, fake_kandev, store, routing, publisher, health)


def test_a_hinted_task_s_request_is_posted_once(approvals, permissions, store) -> None:
    request = permissions.request("t-1")
    assert approvals.look_at("t-1").posted == [approval_key(request.request_id)]
    assert approvals.look_at("t-1").posted == []  # claimed: never a second card
    card = store.cards.get(approval_key(request.request_id))
    assert card is not None and card.kind.value == "approval"
    assert card.approval.cancellation_revision == 0 and card.channel == CHANNEL


def test_the_sweep_finds_flagged_tasks_and_tasks_with_waiting_cards(approvals, permissions) -> None:
    permissions.request("t-1")
    permissions.flagged["ws-1"] = ["t-1"]
    assert len(approvals.sweep().posted) == 1
    permissions.flagged["ws-1"] = []  # a stale flag cleared; the card's task is still looked at
    permissions.calls.clear()
    approvals.sweep()
    assert "list t-1" in permissions.calls


def test_resolved_elsewhere_ends_the_card_with_the_winner_s_option(
    approvals, permissions, store
) -> None:
    request = permissions.request("t-1")
    approvals.look_at("t-1")
    permissions.resolve_elsewhere(request, "reject_once", "reject_once")
    assert approvals.look_at("t-1").ended == [approval_key(request.request_id)]
    card = store.cards.get(approval_key(request.request_id))
    assert card.state is CardState.REJECTED and card.outcome.via == "kandev"
    assert card.outcome.answers[0].selected_options == ["reject_once"]


@pytest.mark.parametrize(
    ("actor", "by_user", "name"),
    [
        ("u-ben", None, "Ben"),  # Ben chose in the web UI; nobody in Slack linked him
        ("u-ana", ALICE_ID, "Ana"),  # Ana did, and she linked her Kandev account
        ("bot-user", None, ""),  # the bot's own account: nobody in particular
        ("", None, ""),  # Kandev's auth off: a placeholder, nobody in particular
    ],
)
def test_resolved_elsewhere_credits_the_kandev_account_kandev_records(
    permissions, fake_kandev, store, routing, publisher, health, actor, by_user, name
) -> None:
    fake_kandev.users = {"u-ben": "Ben", "u-ana": "Ana", "bot-user": "The bot"}
    fake_kandev.workspace_list.append(Workspace(id="ws-1", name="Platform"))
    linked = {"u-ana": ALICE_ID}  # who linked which Kandev account (Identities.slack_user_of)
    approvals = _approvals(permissions, fake_kandev, store, routing, publisher, health)
    approvals.people = KandevPeople(fake_kandev, linked.get)
    request = permissions.request("t-1")
    approvals.look_at("t-1")
    permissions.resolve_elsewhere(request, "allow_once", "allow_once", actor=actor)

    assert approvals.look_at("t-1").ended == [approval_key(request.request_id)]
    card = store.cards.get(approval_key(request.request_id))
    outcome = card.outcome
    assert (outcome.via, outcome.by_user, outcome.kandev_name) == ("kandev", by_user, name)
    assert outcome.kandev_user == (actor if name else "")
    [synced] = [e for e in store.audit_log.audit_entries(card.pending_id) if e.result == "synced"]
    assert (synced.action, synced.user, synced.kandev_user) == (
        "answered",
        by_user or "bot",
        actor if name else None,
    )


def test_a_web_ui_cancel_and_a_withdrawal_end_it_without_a_choice(
    approvals, permissions, store
) -> None:
    one, two = permissions.request("t-1", 1), permissions.request("t-2", 1)
    approvals.look_at("t-1"), approvals.look_at("t-2")
    permissions.resolve_elsewhere(one, "cancelled", "cancelled")
    permissions.live["t-2"].remove(two)
    permissions.records[two.request_id] = PermissionRecord(
        request_id=two.request_id, status="expired"
    )
    approvals.look_at("t-1"), approvals.look_at("t-2")
    assert store.cards.get(approval_key(one.request_id)).outcome.reason == "cancelled"
    ended = store.cards.get(approval_key(two.request_id))
    assert ended.state is CardState.ENDED and ended.outcome.reason == ""


def test_gone_without_a_word_in_the_transcript_waits_a_moment_first(
    approvals, permissions, store, monkeypatch
) -> None:
    request = permissions.request("t-1")
    approvals.look_at("t-1")
    permissions.live["t-1"].clear()  # Kandev restarted: the record says nothing
    assert approvals.look_at("t-1").ended == []
    monkeypatch.setattr(approvals_module, "MISSING_GRACE_S", 0.0)
    assert approvals.look_at("t-1").ended == [approval_key(request.request_id)]


def test_an_agent_starting_is_looked_at_again_not_ended(approvals, permissions, store) -> None:
    request = permissions.request("t-1")
    approvals.look_at("t-1")
    permissions.starting.add("t-1")
    assert approvals.look_at("t-1").ended == []
    assert store.cards.get(approval_key(request.request_id)).state is CardState.PENDING


def test_a_cancelled_turn_closes_the_card_on_the_next_sweep(approvals, permissions, store) -> None:
    request = permissions.request("t-1")
    approvals.look_at("t-1")
    permissions.revisions[request.session_id] = 1
    assert approvals.sweep().ended == [approval_key(request.request_id)]
    card = store.cards.get(approval_key(request.request_id))
    assert card.outcome.reason == "turn_cancelled"


def test_an_unroutable_request_is_posted_nowhere_and_shown_in_health(
    permissions, fake_kandev, store, publisher, health
) -> None:
    lost = _approvals(permissions, fake_kandev, store, Routing(), publisher, health)
    request = permissions.request("t-1")
    assert lost.look_at("t-1").posted == []
    assert store.cards.get(approval_key(request.request_id)) is None
    assert any(
        r.startswith(f"{UNROUTABLE}: 1 approval cannot be routed") for r in health.report().reasons
    )


def test_the_question_reconciler_never_sees_an_approval(approvals, permissions, store) -> None:
    permissions.request("t-1")
    approvals.look_at("t-1")
    assert store.cards.pending_ids() == []
    assert len(store.cards.pending_of_kind("perm:")) == 1


def test_hints_hand_over_to_their_own_loop_and_list_only_their_session(
    approvals, permissions, store
) -> None:
    request = permissions.request("t-1")
    approvals.look_at("t-1")
    permissions.calls.clear()
    approvals.on_permission("t-2", "s-t-2")
    approvals.on_resolved(request.session_id)
    # the hints' loop is woken, not the sweep's: a sweep in progress never delays them
    assert approvals.hints_wakeup.is_raised() and not approvals.wakeup.is_raised()
    approvals.serve_hints()
    # the hinted session alone, then the task of the resolved session's waiting card
    assert permissions.calls == ["list t-2 s-t-2", "list t-1"]


def test_two_replicas_looking_at_once_post_one_card(
    approvals, permissions, fake_kandev, store, routing, publisher, health
) -> None:
    other = _approvals(permissions, fake_kandev, store, routing, publisher, health)
    request = permissions.request("t-1")
    barrier = threading.Barrier(2)
    posted: list[list[str]] = []

    def look(replica: Approvals) -> None:
        barrier.wait()
        posted.append(replica.look_at("t-1").posted)

    threads = [threading.Thread(target=look, args=(r,)) for r in (approvals, other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(posted) == [[], [approval_key(request.request_id)]]
    assert store.outbox.outbox_pending_count() == 1


def test_a_raised_wakeup_is_taken_not_spun_on(approvals, permissions) -> None:
    approvals.poll_interval = 60.0
    cycles = []
    sweep = approvals.sweep
    approvals.sweep = lambda: cycles.append(1) or sweep()  # type: ignore[method-assign]
    approvals.on_connected()  # raises the wakeup once
    stop = threading.Event()
    loop = threading.Thread(target=approvals.run, args=(stop,))
    loop.start()
    time.sleep(0.5)
    stop.set()
    approvals.wakeup.raise_()
    loop.join(timeout=5)
    # a cycle for the start (and the reconnect), none per wait: a raised wakeup is taken
    assert len(cycles) <= 3, len(cycles)
    assert sum(c.startswith("tasks") for c in permissions.calls) >= 1


def test_a_request_whose_turn_ended_before_its_card_is_posted_ended(
    approvals, permissions, store
) -> None:
    # Cancelled while the bot was down: the revision seen at post time is already the new one,
    # but the turn that asked is over. Resolving it would wedge the session (contract §5).
    request = permissions.request("t-1")
    permissions.revisions[request.session_id] = 2
    permissions.turns_ended.add(request.session_id)
    key = approval_key(request.request_id)

    assert approvals.look_at("t-1").posted == [key]

    card = store.cards.get(key)
    assert card.state is CardState.ENDED and card.outcome.reason == "turn_cancelled"
    assert store.outbox.outbox_pending_count() == 1  # its one post, showing it ended
    assert approvals.look_at("t-1").posted == [] and approvals.sweep().ended == []


def test_the_sweep_ends_a_card_whose_turn_ended_without_a_cancel(
    approvals, permissions, store
) -> None:
    request = permissions.request("t-1")
    approvals.look_at("t-1")
    permissions.turns_ended.add(request.session_id)  # the agent gave up; still listed
    assert approvals.sweep().ended == [approval_key(request.request_id)]
    assert store.cards.get(approval_key(request.request_id)).outcome.reason == "turn_cancelled"


def _sweep_reasons(health: Health) -> list[str]:
    return [r for r in health.report().reasons if r.startswith(approvals_module.SWEEP)]


def test_a_sweep_that_fails_shows_in_health_until_one_completes(
    approvals, permissions, health
) -> None:
    permissions.failures["tasks ws-1"] = KandevProtocolError("page 3 repeats earlier tasks")
    assert approvals.sweep_and_report() is None
    assert _sweep_reasons(health) == ["approval_sweep: approval sweep failed (KandevProtocolError)"]
    assert not health.report().ok

    del permissions.failures["tasks ws-1"]
    assert approvals.sweep_and_report() is not None
    assert _sweep_reasons(health) == [] and health.report().ok


def test_a_task_kandev_refuses_is_skipped_and_the_sweep_says_so(
    approvals, permissions, store, health
) -> None:
    first, second = permissions.request("t-1"), permissions.request("t-2")
    permissions.flagged["ws-1"] = ["t-1", "t-2"]
    permissions.failures["list t-1"] = KandevToolError("VALIDATION_ERROR", "odd")

    report = approvals.sweep_and_report()

    assert report is not None and report.unread == ["t-1"]
    assert report.posted == [approval_key(second.request_id)]  # the others still looked at
    assert store.cards.get(approval_key(first.request_id)) is None
    assert _sweep_reasons(health) == ["approval_sweep: approval sweep could not read 1 task(s)"]


def test_a_sweep_running_past_its_deadline_shows_in_health(approvals, permissions, health) -> None:
    approvals.sweep_watch.deadline = 0.2
    permissions.candidates_gate = gate = threading.Event()
    sweeping = threading.Thread(target=approvals.sweep_and_report)
    sweeping.start()
    try:
        time.sleep(0.5)
        reasons = _sweep_reasons(health)
    finally:
        gate.set()
        sweeping.join(timeout=10)
    assert len(reasons) == 1 and reasons[0].startswith("approval_sweep: approval sweep running")
    # it did finish, later than its deadline: said until a sweep completes in time
    assert _sweep_reasons(health)[0].startswith("approval_sweep: approval sweep took")
    permissions.candidates_gate = None
    approvals.sweep_watch.deadline = 60.0
    approvals.sweep_and_report()
    assert _sweep_reasons(health) == []


def test_a_hint_is_served_while_a_sweep_is_stuck(approvals, permissions, store) -> None:
    permissions.candidates_gate = gate = threading.Event()  # the sweep waits on Kandev
    stop = threading.Event()
    loops = [
        threading.Thread(target=approvals.run, args=(stop,)),
        threading.Thread(target=approvals.run_hints, args=(stop,)),
    ]
    for loop in loops:
        loop.start()
    try:
        request = permissions.request("t-2")
        approvals.on_permission("t-2", request.session_id)
        deadline = time.monotonic() + 5
        while store.cards.get(approval_key(request.request_id)) is None:
            assert time.monotonic() < deadline, "the hint waited for the sweep"
            time.sleep(0.02)
        assert not gate.is_set() and "tasks ws-1" not in permissions.calls
    finally:
        stop.set()
        gate.set()
        approvals.wakeup.raise_()
        approvals.hints_wakeup.raise_()
        for loop in loops:
            loop.join(timeout=5)


def test_a_request_gone_with_its_turn_is_withdrawn_not_turn_cancelled(
    approvals, permissions, store
) -> None:
    # A Kandev restart: the request leaves the list and its turn ends; how it ended is the
    # transcript's to say (withdrawn), the turn is read only for requests still listed.
    request = permissions.request("t-1")
    approvals.look_at("t-1")
    permissions.live["t-1"].remove(request)
    permissions.turns_ended.add(request.session_id)
    permissions.records[request.request_id] = PermissionRecord(
        request_id=request.request_id, status="expired"
    )
    assert approvals.sweep().ended == [approval_key(request.request_id)]
    card = store.cards.get(approval_key(request.request_id))
    assert card.state is CardState.ENDED and card.outcome.reason != "turn_cancelled"


def test_an_answer_that_ended_the_turn_between_two_reads_is_not_called_a_cancel(
    approvals, permissions, store
) -> None:
    request = permissions.request("t-1")
    key = approval_key(request.request_id)
    approvals.look_at("t-1")

    def answered_in_kandev() -> None:  # right after the list was read: the agent goes on
        permissions.resolve_elsewhere(request, "allow_once", "allow_once")
        permissions.turns_ended.add(request.session_id)

    permissions.after_list.append(answered_in_kandev)
    assert approvals.look_at("t-1").ended == []  # its turn is over, but it left the list
    assert approvals.look_at("t-1").ended == [key]
    assert store.cards.get(key).state is CardState.ANSWERED


def test_a_hint_is_served_while_a_sweep_waits_on_how_another_request_ended(
    approvals, permissions, store
) -> None:
    """The sweep reads how t-1's request ended (Kandev slow on that read) while a hint says
    t-2 waits: t-2's card is posted within a second (before: the hint waited for the sweep's
    lock, held through Kandev's slow answer)."""
    gone = permissions.request("t-1")
    approvals.look_at("t-1")
    permissions.resolve_elsewhere(gone, "reject_once", "reject_once")
    permissions.record_gate = gate = threading.Event()
    sweeping = threading.Thread(target=approvals.sweep)
    sweeping.start()
    try:
        deadline = time.monotonic() + 5
        while "list t-1" not in permissions.calls[1:]:  # the sweep is reading t-1 again
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.1)  # …and is waiting on how its request ended
        request = permissions.request("t-2")
        started = time.monotonic()
        hinted = threading.Thread(target=approvals.look_at, args=("t-2",), daemon=True)
        hinted.start()
        hinted.join(timeout=1.0)
        assert store.cards.get(approval_key(request.request_id)) is not None, (
            "the hint waited for the sweep"
        )
        assert time.monotonic() - started < 1.0
    finally:
        gate.set()
        sweeping.join(timeout=5)
    assert store.cards.get(approval_key(gone.request_id)).state is CardState.REJECTED


# ---- what an interval costs: light while the hints are up, full otherwise -------------------


def _waiting_on(approvals: Approvals, permissions: FakePermissions, *tasks: str) -> list[str]:
    """A request waiting on each task, flagged, carded, and a full sweep done (its keys)."""
    requests = [permissions.request(t) for t in tasks]
    permissions.flagged["ws-1"] = list(tasks)
    assert len(approvals.sweep().posted) == len(tasks)
    permissions.calls.clear()
    return [approval_key(r.request_id) for r in requests]


def test_an_interval_in_which_nothing_changed_reads_only_the_task_list(
    approvals, permissions
) -> None:
    _waiting_on(approvals, permissions, "t-1", "t-2")
    assert approvals.light_sweep().tasks == 0
    assert permissions.calls == ["tasks ws-1"]
    # a full sweep looks at every flagged task and every waiting card, whatever changed
    approvals.sweep()
    assert permissions.calls[1:] == ["tasks ws-1", "list t-1", "list t-2"]


def test_a_light_interval_looks_only_at_what_changed(approvals, permissions, store) -> None:
    one, _ = _waiting_on(approvals, permissions, "t-1", "t-2")
    permissions.revisions["s-t-1"] = 1  # its turn was cancelled: its row moved
    permissions.touch("t-1")
    assert approvals.light_sweep().ended == [one]
    assert permissions.calls == ["tasks ws-1", "list t-1"]
    assert store.cards.get(one).outcome.reason == "turn_cancelled"
    # a request on a task not flagged before: looked at, posted
    permissions.calls.clear()
    request = permissions.request("t-3")
    permissions.flagged["ws-1"].append("t-3")
    assert approvals.light_sweep().posted == [approval_key(request.request_id)]
    assert permissions.calls == ["tasks ws-1", "list t-3"]


def test_a_task_gone_from_the_lists_is_looked_at(approvals, permissions, store) -> None:
    one, _ = _waiting_on(approvals, permissions, "t-1", "t-2")
    permissions.flagged["ws-1"] = ["t-2"]  # the task was deleted: its request with it
    permissions.live["t-1"].clear()
    permissions.records["r-t-1-1"] = PermissionRecord(request_id="r-t-1-1", status="expired")
    assert approvals.light_sweep().ended == [one]
    permissions.calls.clear()
    assert approvals.light_sweep().tasks == 0 and permissions.calls == ["tasks ws-1"]


def test_a_look_that_left_something_to_do_is_done_again_next_interval(
    approvals, permissions, store, monkeypatch
) -> None:
    (one,) = _waiting_on(approvals, permissions, "t-1")
    permissions.live["t-1"].clear()  # gone, and the transcript does not say how (yet)
    permissions.touch("t-1")
    assert approvals.light_sweep().ended == []
    assert approvals.light_sweep().tasks == 1  # the row did not move: looked at all the same
    monkeypatch.setattr(approvals_module, "MISSING_GRACE_S", 0.0)
    assert approvals.light_sweep().ended == [one]
    permissions.calls.clear()
    approvals.light_sweep()
    assert permissions.calls == ["tasks ws-1"]  # settled: left alone


def test_a_stale_flag_costs_nothing_after_the_full_sweep(approvals, permissions) -> None:
    permissions.flagged["ws-1"] = ["t-1"]  # Kandev restarted: flagged, nothing listed
    assert approvals.sweep().posted == []
    permissions.calls.clear()
    approvals.light_sweep()
    assert permissions.calls == ["tasks ws-1"]


def test_a_change_neither_the_rows_nor_the_hints_show_is_found_by_the_full_sweep(
    approvals, permissions, store
) -> None:
    (one,) = _waiting_on(approvals, permissions, "t-1")
    permissions.turns_ended.add("s-t-1")  # the agent gave up; the hint was lost
    assert approvals.light_sweep().ended == []
    assert approvals.sweep().ended == [one]
    assert store.cards.get(one).outcome.reason == "turn_cancelled"


def test_a_status_hint_looks_at_a_watched_task_and_ends_its_cancelled_turn(
    approvals, permissions, store
) -> None:
    one, _ = _waiting_on(approvals, permissions, "t-1", "t-2")
    permissions.revisions["s-t-1"] = 1
    approvals.on_status("t-9", "s-t-9")  # not watched, nothing waits there: none of ours
    approvals.on_status("t-1", "s-t-1", "permission")
    assert approvals.hints_wakeup.is_raised() and not approvals.wakeup.is_raised()
    assert approvals.serve_hints().ended == [one]
    assert permissions.calls == ["list t-1 s-t-1"]
    assert store.cards.get(one).outcome.reason == "turn_cancelled"


def test_a_status_hint_saying_permission_posts_the_new_request(approvals, permissions) -> None:
    # Kandev's auth on, the bot a reader but not the owner: no pending_action_changed
    request = permissions.request("t-1")
    approvals.on_status("t-1", "s-t-1", "permission")
    assert approvals.serve_hints().posted == [approval_key(request.request_id)]


def test_a_hint_that_came_before_a_look_began_is_answered_by_it(approvals, permissions) -> None:
    request = permissions.request("t-1")
    approvals.on_status("t-1", "s-t-1", "permission")  # a burst of hints for one change
    approvals.on_permission("t-1", "s-t-1")
    approvals.look_at("t-1")  # …and a sweep looked at the task since
    assert approvals.serve_hints().tasks == 0
    approvals.on_resolved(request.session_id)  # a later change is looked at
    assert approvals.serve_hints().tasks == 1
    assert permissions.calls == ["list t-1", "list t-1"]


def _intervals(approvals: Approvals, seconds: float) -> list[str]:
    """Run the loop for ``seconds``: the kind of each interval, in order."""
    kinds: list[str] = []
    full, light = approvals.sweep, approvals.light_sweep
    approvals.sweep = lambda: kinds.append("full") or full()  # type: ignore[method-assign]
    approvals.light_sweep = lambda: kinds.append("light") or light()  # type: ignore[method-assign]
    stop = threading.Event()
    loop = threading.Thread(target=approvals.run, args=(stop,))
    loop.start()
    time.sleep(seconds)
    stop.set()
    approvals.wakeup.raise_()
    loop.join(timeout=5)
    return kinds


def test_intervals_are_light_while_the_hints_are_up_with_a_full_sweep_now_and_then(
    approvals, permissions
) -> None:
    approvals.poll_interval, approvals.full_sweep_interval = 0.1, 0.45
    approvals.on_connected()
    kinds = _intervals(approvals, 1.2)
    assert kinds[0] == "full" and "light" in kinds
    assert kinds.count("full") >= 2 and kinds.count("light") > kinds.count("full")


def test_every_interval_is_a_full_sweep_without_hints(approvals, permissions) -> None:
    approvals.poll_interval = 0.1
    assert set(_intervals(approvals, 0.5)) == {"full"}  # KANDEV_HINTS=off: never connected
    approvals.on_connected()
    approvals.on_disconnected()
    assert set(_intervals(approvals, 0.5)) == {"full"}


def test_a_card_posted_on_a_hint_is_watched_for_the_hint_that_ends_it(
    approvals, permissions, store
) -> None:
    # Kandev's auth on, the bot not the owner: status hints only, and no interval in between
    request = permissions.request("t-1")
    approvals.on_status("t-1", "s-t-1", "permission")
    [key] = approvals.serve_hints().posted
    assert approvals.watching("t-1")
    permissions.resolve_elsewhere(request, "reject_once", "reject_once")
    approvals.on_status("t-1", "s-t-1")  # no pending action any more
    assert approvals.serve_hints().ended == [key]
    assert store.cards.get(key).state is CardState.REJECTED


def _hints_loop(approvals: Approvals) -> tuple[threading.Thread, threading.Event]:
    stop = threading.Event()
    loop = threading.Thread(target=approvals.run_hints, args=(stop,), daemon=True)
    loop.start()
    return loop, stop


def _withdrawn(approvals: Approvals, permissions: FakePermissions) -> tuple[PermissionRequest, str]:
    """A request posted, then gone from its task's list (agent.stop): it, and its card's key."""
    request = permissions.request("t-1")
    approvals.look_at("t-1")
    permissions.live["t-1"].remove(request)
    return request, approval_key(request.request_id)


def _until_ended(store: Database, key: str, within: float) -> float:
    started = time.monotonic()
    while store.cards.get(key).state is CardState.PENDING:
        assert time.monotonic() - started < within, f"{key} still waiting after {within} s"
        time.sleep(0.02)
    return time.monotonic() - started


def test_a_withdrawal_the_transcript_says_a_moment_late_ends_its_card_without_a_sweep(
    approvals, permissions, store
) -> None:
    # agent.stop empties the list at once; Kandev marks the message expired a moment later
    # (its agent's own event): the hints' loop looks again, no poll interval needed.
    request, key = _withdrawn(approvals, permissions)
    loop, stop = _hints_loop(approvals)
    try:
        approvals.on_resolved(request.session_id)
        deadline = time.monotonic() + 5
        while key not in approvals._missing_since:
            assert time.monotonic() < deadline, "the hint was never served"
            time.sleep(0.01)
        permissions.records[request.request_id] = PermissionRecord(
            request_id=request.request_id, status="expired"
        )
        _until_ended(store, key, within=approvals_module.RELOOK_S + 2.0)
    finally:
        stop.set()
        approvals.hints_wakeup.raise_()
        loop.join(timeout=5)
    assert store.cards.get(key).outcome.reason == ""
    assert approvals._missing_since == {}


def test_a_withdrawal_the_transcript_never_says_ends_its_card_after_the_grace(
    approvals, permissions, store, monkeypatch
) -> None:
    # agent.stop can kill the agent before it says the request was withdrawn: the record stays
    # silent, and the card ends once the grace is over — found by the hints' loop on its own.
    monkeypatch.setattr(approvals_module, "MISSING_GRACE_S", 1.0)
    _, key = _withdrawn(approvals, permissions)
    assert approvals.look_at("t-1").ended == []  # from a sweep: the hints' loop takes it on
    loop, stop = _hints_loop(approvals)
    try:
        took = _until_ended(store, key, within=1.0 + approvals_module.RELOOK_S + 2.0)
    finally:
        stop.set()
        approvals.hints_wakeup.raise_()
        loop.join(timeout=5)
    assert took >= 0.5  # not before the grace
    assert store.cards.get(key).state is CardState.ENDED


def test_a_card_ended_elsewhere_is_not_looked_at_again(approvals, permissions, store) -> None:
    _, key = _withdrawn(approvals, permissions)
    approvals.look_at("t-1")  # its end not known yet
    assert key in approvals._missing_since
    # ended by another path (the answer pipeline of a Slack click, another replica)
    assert store.cards.transition(key, CardOutcome(state=CardState.ANSWERED, at=NOW))
    approvals._next_relook = 0.0
    permissions.calls.clear()
    approvals.serve_hints()
    assert permissions.calls == [] and approvals._missing_since == {}
