"""The hand-over (``Bot.close``, on SIGTERM and when a test stops its bot) does not wait out
the publisher's idle wait: once the answers' card edits are drained, an idle publisher is woken
and stops at once."""

from __future__ import annotations

import threading
import time

from kandev_slack.commands.run import HANDOVER_S, Bot
from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.usecases.outbox.publisher import Publisher
from tests.kit.fakes import FakeKandev


class _Hints:
    def stop(self) -> None:
        pass


def test_an_idle_publisher_stops_as_soon_as_the_hand_over_reaches_it(
    store: Database, publisher: Publisher, fake_kandev: FakeKandev, health: Health
) -> None:
    edits_stop = threading.Event()
    # Idle, it waits for work up to a minute (a second in production): longer than the
    # hand-over's whole budget.
    worker = threading.Thread(target=publisher.run, args=(edits_stop, 60.0), daemon=True)
    worker.start()
    bot = Bot(
        settings=None,  # type: ignore[arg-type]
        mode="http",
        health=health,
        store=store,
        kandev=fake_kandev,  # type: ignore[arg-type]
        bolt=None,  # type: ignore[arg-type]
        hints=_Hints(),  # type: ignore[arg-type]
        workers=[],
        lanes=[],
        wakeups=[],
        edit_workers=[worker],
        edits_stop=edits_stop,
        wake_edits=publisher.wake,
    )
    started = time.monotonic()
    bot.close()
    took = time.monotonic() - started

    assert not worker.is_alive()  # else it was left running when the hand-over's time ran out
    assert took < HANDOVER_S / 2, took
