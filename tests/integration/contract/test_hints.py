"""Contract: Kandev's WebSocket pushes a hint for a new bundle and for its resolution."""

import queue
import threading

import pytest

from bot.core.clarification import Answer
from bot.kandev import KandevHints, Won
from bot.kandev.hints import NewPending
from tests.kit.harness import sample_questions

pytestmark = pytest.mark.kandev


def test_a_new_bundle_and_its_resolution_are_hinted(kandev, client, seed):
    new_pending: queue.Queue[NewPending] = queue.Queue()
    resolved = threading.Event()
    connected = threading.Event()
    hints = KandevHints(kandev.base_url, kandev.token, new_pending.put, resolved.set, connected.set)
    with hints:
        assert connected.wait(10), "no connection to /ws"
        bundle = seed(sample_questions(1))
        seen: list[str] = []
        while bundle.pending_id not in seen:
            seen.append(new_pending.get(timeout=15).pending_id)
        resolved.clear()
        answer = [Answer(question_id="q1", selected_options=["q1_opt1"])]
        assert isinstance(client.answer(bundle.pending_id, answer), Won)
        assert resolved.wait(15), "no pending_action_changed → null after the answer"
    assert not hints.connected
