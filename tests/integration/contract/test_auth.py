"""Contract: an auth-enabled Kandev refuses us without the PAT and serves us with it."""

import threading

import pytest

from kandev_slack.core.clarification import Answer
from kandev_slack.kandev.client import KandevClient
from kandev_slack.kandev.errors import KandevAuthError
from kandev_slack.kandev.hints import KandevHints
from kandev_slack.kandev.models import Won
from tests.kit.harness import sample_questions
from tests.kit.polling import eventually

pytestmark = pytest.mark.kandev


@pytest.mark.parametrize("token", [None, "kandev_pat_00000000_notavalidtokenatall"])
def test_without_a_valid_token_every_call_is_an_auth_error(kandev_auth, token):
    with KandevClient(kandev_auth.base_url, token, timeout=30.0) as client:
        with pytest.raises(KandevAuthError, match="KANDEV_TOKEN missing or invalid"):
            client.list_pending()
        with pytest.raises(KandevAuthError):
            client.answer("00000000-0000-0000-0000-000000000000", [])
        with pytest.raises(KandevAuthError):
            client.reject("00000000-0000-0000-0000-000000000000", transport="mcp")
        with pytest.raises(KandevAuthError):
            client.task("00000000-0000-0000-0000-000000000000")
        result = client.probe()
    assert result.reachable and result.ready and result.auth_ok is False and not result.ok
    assert result.token_sent is (token is not None)


def test_with_the_token_everything_works(kandev_auth, seed_auth):
    bundle = seed_auth(sample_questions(1), title="Behind auth")
    with KandevClient(kandev_auth.base_url, kandev_auth.token, timeout=30.0) as client:
        result = client.probe()
        assert result.ok and result.token_sent, result
        assert bundle.pending_id in {b.pending_id for b in client.list_pending()}
        assert client.task(bundle.task_id).title == "Behind auth"
        assert client.workspaces()
        answer = [Answer(question_id="q1", selected_options=["q1_opt1"])]
        assert isinstance(client.answer(bundle.pending_id, answer, transport="mcp"), Won)
        state = eventually(
            lambda: client.final_state(bundle.task_id, bundle.pending_id).status == "answered"
        )
        assert state


def test_hints_need_the_token(kandev_auth):
    refused = threading.Event()
    accepted = threading.Event()
    without = KandevHints(
        kandev_auth.base_url, None, lambda p: None, lambda: None, refused.set, backoff_initial=0.1
    )
    with_token = KandevHints(
        kandev_auth.base_url, kandev_auth.token, lambda p: None, lambda: None, accepted.set
    )
    with without, with_token:
        assert accepted.wait(10)
        assert not refused.wait(1.0)
        assert not without.connected
