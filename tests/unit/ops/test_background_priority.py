"""Follow-up work runs at a lower CPU priority than the threads serving Slack
(kandev_slack/ops/runtime.py): on a busy machine the operating system runs an ack's thread
before a card edit's. Linux gives each thread its own nice value."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from kandev_slack.app import _worker
from kandev_slack.ops import runtime
from kandev_slack.slack.transport.lanes import Lane

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value")


def _nice_of_a_thread(prepare) -> tuple[int, int]:
    """(the calling thread's nice, a new thread's after ``prepare()``)."""
    seen: list[int] = []

    def run() -> None:
        prepare()
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(10)
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id()), seen[0]


@linux_only
def test_a_background_thread_is_niced_and_only_it() -> None:
    mine, theirs = _nice_of_a_thread(lambda: runtime.background_thread(3))
    assert theirs == min(mine + 3, 19)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine  # unchanged


@linux_only
def test_a_lane_of_follow_up_work_runs_its_jobs_niced() -> None:
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    followups = Lane("test-followups", workers=1, waiting=1, initializer=runtime.background_thread)
    answering = Lane("test-answering", workers=1, waiting=1)
    try:

        def nice() -> int:
            return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

        lowered = followups.reserve()
        kept = answering.reserve()
        assert lowered is not None and kept is not None
        assert lowered.run(nice).result(10) == min(mine + runtime.BACKGROUND_NICENESS, 19)
        assert kept.run(nice).result(10) == mine
    finally:
        followups.shutdown()
        answering.shutdown()


def test_where_a_thread_cannot_be_niced_nothing_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_args: object) -> None:
        raise OSError("not permitted")

    monkeypatch.setattr(runtime.os, "setpriority", refused)
    assert runtime.background_thread() is False


@linux_only
def test_the_bots_follow_up_workers_are_niced_and_its_intake_is_not() -> None:
    """The card edits' publisher and the other follow-up loops run lowered; the loops that
    bring new questions in (time to card) keep the priority of the threads serving Slack."""
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen: dict[str, int] = {}

    def note(name: str) -> None:
        seen[name] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    for name in ("publisher", "digests", "sync", "sync-hints", "leases"):
        thread = _worker(name, note, name)
        thread.start()
        thread.join(10)

    lowered = min(mine + runtime.BACKGROUND_NICENESS, 19)
    assert seen == {
        "publisher": lowered,
        "digests": lowered,
        "sync": mine,
        "sync-hints": mine,
        "leases": mine,
    }
