"""Interactions built once and delivered several times (Slack retries and redeliveries), and
what the faults tests read back: answer calls, card edits, the bot's submissions."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kandev_slack.kits.fakeslack import (
    Ack,
    Delivery,
    FakeSlack,
    SlackDriver,
    SlackUser,
    Transport,
    build_state_values,
    payloads,
)
from kandev_slack.store import Database, Submission
from tests.e2e.helpers import card_updates

JsonDict = dict[str, Any]

#: A Slack retry of an HTTP request it thinks timed out.
RETRY = Delivery(retry_num=1, retry_reason="http_timeout")
RETRY_2 = Delivery(retry_num=2, retry_reason="http_timeout")


def submission_payload(
    driver: SlackDriver, view_id: str, values: dict[str, dict[str, Any]], *, user: SlackUser
) -> JsonDict:
    """The view_submission payload of submitting the open modal ``view_id`` with ``values``."""
    record = driver.fake.view(view_id)
    person = driver.user(user)
    state = build_state_values(record.blocks, values, enforce_client_rules=True)
    return payloads.view_submission(
        driver.ws, person, record.to_slack(state), driver.fake.issue_trigger(person.id)
    )


def deliver_all(
    sends: Sequence[tuple[Transport, str, JsonDict, Delivery]], *, accepts: bool = False
) -> list[Ack]:
    """Deliver every (transport, kind, payload, delivery) at the same time; their acks."""

    def one(send: tuple[Transport, str, JsonDict, Delivery]) -> Ack:
        transport, kind, payload, delivery = send
        return transport.deliver(
            kind,  # type: ignore[arg-type]
            payload,
            accepts_response_payload=accepts,
            delivery=delivery,
        )

    with ThreadPoolExecutor(max_workers=len(sends)) as pool:
        return list(pool.map(one, sends))


def submissions(db_url: str, pending_id: str) -> list[Submission]:
    """What the bot recorded as on its way to Kandev for this bundle (one row per distinct
    submission)."""
    with Database(db_url) as store:
        return store.submissions.submissions_for(pending_id)


def extra_edits(fake: FakeSlack, ts: str, state_changes: int = 1) -> int:
    """chat.update calls on the card beyond one per state change."""
    return max(len(card_updates(fake, ts)) - state_changes, 0)


def tool_answers(result: JsonDict | None) -> int:
    """How many answers the mock agent received (its blocked tool call returning, or a prompt
    Kandev delivers when the agent was relaunched)."""
    if result is None:
        return 0
    return (1 if result.get("tool") else 0) + len(result.get("prompts") or [])
