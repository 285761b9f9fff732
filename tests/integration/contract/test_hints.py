"""Contract: Kandev's WebSocket pushes a hint for a new bundle and for its resolution."""

import queue
import threading

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.kandev.hints import KandevHints, NewPending, Resolved
from kandev_slack.kandev.models import Won
from tests.kit.harness import sample_questions

pytestmark = pytest.mark.kandev


def test_a_new_bundle_and_its_resolution_are_hinted(kandev, client, seed):
    new_pending: queue.Queue[NewPending] = queue.Queue()
    resolved: queue.Queue[Resolved] = queue.Queue()
    connected = threading.Event()
    hints = KandevHints(kandev.base_url, kandev.token, new_pending.put, resolved.put, connected.set)
    with hints:
        assert connected.wait(10), "no connection to /ws"
        bundle = seed(sample_questions(1))
        seen: list[str] = []
        while bundle.pending_id not in seen:
            seen.append(new_pending.get(timeout=15).pending_id)
        while not resolved.empty():
            resolved.get_nowait()
        answer = [Answer(question_id="q1", selected_options=["q1_opt1"])]
        assert isinstance(client.answer(bundle.pending_id, answer), Won)
        sessions: list[str] = []
        while bundle.session_id not in sessions:  # names the bundle's session
            sessions.append(resolved.get(timeout=15).session_id)
        # By the time the hint arrives, that session's conversation shows the answer (what
        # the reconciler reads for the hint, instead of the whole active list).
        final = client.final_state(bundle.task_id, bundle.pending_id, session_id=sessions[-1])
        assert final.status == "answered"
    assert not hints.connected
