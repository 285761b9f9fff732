"""Contract: how a bundle ended, read back from the task conversation."""

import time
from datetime import UTC, datetime, timedelta

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.models import Lost, Won
from tests.kit.harness import Seeder, sample_questions
from tests.kit.polling import eventually

pytestmark = pytest.mark.kandev


def final(client, bundle, status: str):
    return eventually(
        lambda: (s := client.final_state(bundle.task_id, bundle.pending_id)).status == status and s
    )


def test_pending_then_answered_with_the_answers(kandev, client, seed):
    bundle = seed(sample_questions(3))
    assert client.final_state(bundle.task_id, bundle.pending_id).status == "pending"
    answers = [
        Answer(question_id="q1", selected_options=["q1_opt2"]),
        Answer(question_id="q2", custom_text="my own words"),
        Answer(question_id="q3", selected_options=["q3_opt1"], custom_text="and why"),
    ]
    assert isinstance(client.answer(bundle.pending_id, list(reversed(answers))), Won)
    state = final(client, bundle, "answered")
    assert state.answers == answers  # in question order
    same = client.final_state(bundle.task_id, bundle.pending_id, session_id=bundle.session_id)
    assert same == state


def test_rejected(kandev, client, seed):
    bundle = seed(sample_questions(2))
    assert isinstance(client.reject(bundle.pending_id, "no", transport="mcp"), Won)
    state = final(client, bundle, "rejected")
    assert state.answers == []


def test_cancelled(kandev, client, seed):
    bundle = seed(sample_questions(1))
    kandev.cancel(bundle.pending_id)
    assert final(client, bundle, "cancelled").answers == []


def test_unknown_bundle_or_task(kandev, client, seed):
    bundle = seed(sample_questions(1))
    assert client.final_state(bundle.task_id, "00000000-0000-0000-0000-000000000000").status == (
        "unknown"
    )
    assert client.final_state("00000000-0000-0000-0000-000000000000", bundle.pending_id).status == (
        "unknown"
    )


@pytest.mark.parametrize("action", ["answer", "reject"])
def test_the_conversation_tells_when_kandev_recorded_the_resolution(client, seed, action):
    """A decided message's ``updated_at`` is the respond reply's ``responded_at``: reading back
    what Kandev recorded can tell whose a resolution like ours was, as a respond reply can."""
    bundle = seed(sample_questions(2))
    if action == "answer":
        answers = [
            Answer(question_id="q1", selected_options=["q1_opt1"]),
            Answer(question_id="q2", selected_options=["q2_opt2"]),
        ]
        won = client.answer(bundle.pending_id, answers)
    else:
        won = client.reject(bundle.pending_id, "not now")
    assert isinstance(won, Won) and won.resolution.responded_at is not None
    state = final(client, bundle, "answered" if action == "answer" else "rejected")
    assert state.responded_at == won.resolution.responded_at


def test_a_resend_after_someone_elses_earlier_rejection_is_not_ours(client, seed):
    """Kandev does not keep a rejection's reason, so any rejection looks like ours: a re-send
    made after the first send is decided by ``responded_at`` (here: long before it)."""
    bundle = seed(sample_questions(1))
    assert isinstance(client.reject(bundle.pending_id, "made in Kandev"), Won)
    sent = datetime.now(UTC) + timedelta(seconds=5)  # as if ours were first sent 5 s later

    resent = client.reject(bundle.pending_id, "mine", resend=True, first_sent=sent)
    assert isinstance(resent, Lost) and not resent.uncertain, resent
    read = client.recorded(bundle.task_id, bundle.pending_id, reason="mine", first_sent=sent)
    assert isinstance(read, Lost) and not read.uncertain, read
    ours = client.reject(
        bundle.pending_id, "mine", resend=True, first_sent=sent - timedelta(seconds=60)
    )
    assert isinstance(ours, Won), ours  # first sent before Kandev recorded it: ours


def _wait_reason(client: KandevClient, workspace_id: str, pending_id: str) -> str | None:
    """The history's reason once it holds the bundle (a few seconds after the new turn)."""
    deadline = time.monotonic() + 20.0
    while True:
        reason = client.ended_reason(workspace_id, pending_id)
        if reason or time.monotonic() > deadline:
            return reason
        time.sleep(0.2)


def test_a_superseded_bundle_is_superseded_in_the_inbox_history_and_pending_in_the_transcript(
    kandev_inbox, inbox_seed: Seeder
) -> None:
    bundle = inbox_seed()
    with KandevClient(kandev_inbox.base_url, kandev_inbox.token, timeout=30.0) as client:
        assert client.ended_reason(bundle.workspace_id, bundle.pending_id) == ""  # waiting
        inbox_seed.supersede(bundle)
        assert _wait_reason(client, bundle.workspace_id, bundle.pending_id) == "superseded"
        final = client.final_state(bundle.task_id, bundle.pending_id, session_id=bundle.session_id)
        assert final.status == "pending"  # for ever: never read as waiting


def test_without_the_inbox_there_is_no_history(client: KandevClient, seed) -> None:
    bundle = seed()
    assert client.ended_reason(bundle.workspace_id, bundle.pending_id) is None
