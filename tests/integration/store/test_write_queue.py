"""The SQLite write queue: one writer at a time, re-entrant, a waiting ack's write first."""

from __future__ import annotations

import contextlib
import threading
import time

from kandev_slack.store.sql.write_queue import WriteQueue, is_urgent, soon, urgent


def _wait_until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.001)


def test_an_urgent_writer_goes_before_writers_that_waited_longer() -> None:
    queue = WriteQueue()
    order: list[str] = []

    def write(name: str, is_urgent_writer: bool) -> None:
        if is_urgent_writer:
            with urgent(), queue:
                order.append(name)
        else:
            with queue:
                order.append(name)

    with queue:  # an earlier click's bookkeeping holds the turn
        others = [threading.Thread(target=write, args=(f"other{n}", False)) for n in range(3)]
        for thread in others:
            thread.start()
        _wait_until(lambda: queue._others_waiting == 3)
        ack = threading.Thread(target=write, args=("ack", True))
        ack.start()
        _wait_until(lambda: queue._urgent_waiting == 1)
    for thread in [*others, ack]:
        thread.join(timeout=5)

    assert order[0] == "ack"
    assert sorted(order[1:]) == ["other0", "other1", "other2"]


def test_an_answer_on_its_way_goes_after_acks_and_before_the_others() -> None:
    queue = WriteQueue()
    order: list[str] = []

    def write(name: str, mark) -> None:
        with mark(), queue:
            order.append(name)

    with queue:  # an earlier click's bookkeeping holds the turn
        other = threading.Thread(target=write, args=("other", contextlib.nullcontext))
        other.start()
        _wait_until(lambda: queue._others_waiting == 1)
        sending = threading.Thread(target=write, args=("sending", soon))
        sending.start()
        _wait_until(lambda: queue._soon_waiting == 1)
        ack = threading.Thread(target=write, args=("ack", urgent))
        ack.start()
        _wait_until(lambda: queue._urgent_waiting == 1)
    for thread in (other, sending, ack):
        thread.join(timeout=5)

    assert order == ["ack", "sending", "other"]


def test_one_writer_at_a_time_and_a_write_inside_a_write_is_the_same_turn() -> None:
    queue = WriteQueue()
    inside = 0
    most = 0
    guard = threading.Lock()

    def write() -> None:
        nonlocal inside, most
        for n in range(50):
            with queue, queue:  # re-entrant
                with guard:
                    inside += 1
                    most = max(most, inside)
                if n % 10 == 0:
                    time.sleep(0.0005)
                with guard:
                    inside -= 1

    threads = [threading.Thread(target=write) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    assert most == 1 and inside == 0
    assert queue._owner is None and queue._urgent_waiting == queue._others_waiting == 0


def test_urgent_marks_only_its_own_thread_and_block() -> None:
    seen: list[bool] = []
    with urgent():
        seen.append(is_urgent())
        other = threading.Thread(target=lambda: seen.append(is_urgent()))
        other.start()
        other.join()
        with urgent():
            pass
        seen.append(is_urgent())
    seen.append(is_urgent())

    assert seen == [True, False, True, False]
