"""Guarantee 2: Kandev down mid-run and at start-up (a private Kandev, really stopped).

While Kandev is down the bot keeps acking Slack within 3 s, tells each clicker their answer
was *not* recorded (button: ephemeral; modal: a field error, the modal stays open) and reports
``/healthz`` 503 naming Kandev. Once Kandev is back, within one poll every card matches
Kandev again (including a bundle answered in Kandev's UI the moment it came back), health is
ok, new bundles are posted, and the answer nobody could record before is recorded exactly once.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import NamedTuple

import pytest

from kandev_slack.kits.fakeslack import ALICE, BOB
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    act,
    assert_sending,
    card_posts,
    distinct_question,
    input_blocks,
    open_modal,
    outcome_line,
    outcome_updates,
    response_of,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_form_result,
    wait_outcome,
)
from tests.e2e.reliability.deliveries import tool_answers
from tests.kit.harness import CHANNEL, KandevServer, Seeder

REJECT_MODAL = "kq_reject_modal"
NOT_RECORDED = "not* recorded"
#: One sync cycle while Kandev is down: the bounded retries of the list call (~1 s) + a poll.
DOWN_CYCLE_S = 1.0 + POLL_S
#: Kandev relaunches an agent whose process died with the server (~1.5 s) before it answers.
RELAUNCH_S = 2.0


class PrivateKandev(NamedTuple):
    server: KandevServer
    seed: Seeder


@pytest.fixture
def private_kandev(kandev_factory) -> Iterator[PrivateKandev]:
    """A Kandev of this test's own, which it may stop and start (its data is kept)."""
    server = kandev_factory()
    yield PrivateKandev(server, Seeder(server))
    with contextlib.suppress(Exception):
        server.start()  # so that close() can delete the seeded tasks and their agents
    server.close()


def _wait_health(bot, status: int, timeout: float, *, kandev_named: bool = False) -> dict:
    """/healthz once it answers ``status`` (and, with ``kandev_named``, once the Kandev
    component says why: another component, such as the approval sweep, may go degraded a
    moment before the sync's round notices the outage)."""
    deadline = time.monotonic() + timeout

    def done(code: int, body: dict) -> bool:
        named = any(r.lower().startswith("kandev") for r in body.get("reasons", []))
        return code == status and (named or not kandev_named)

    code, body = bot.health()
    while not done(code, body) and time.monotonic() < deadline:
        time.sleep(0.1)
        code, body = bot.health()
    assert code == status, (code, body)
    return body


def _kandev_reason(body: dict) -> str:
    """The Kandev component's own reason (other components, e.g. the approval sweep, may
    also name Kandev in theirs)."""
    reasons = [r for r in body["reasons"] if r.lower().startswith("kandev")]
    assert reasons, body
    return reasons[0]


def _not_recorded_count(fake, user: str) -> int:
    return sum(1 for e in fake.ephemerals(user=user) if NOT_RECORDED in e.all_text)


@pytest.mark.fault("Kandev down mid-run and at start-up", guarantee=2)
def test_kandev_outage_mid_run_and_at_start_up(
    bot_factory, private_kandev, fake_slack, slack_driver, reliability
):
    kandev, seed = private_kandev
    bot = start_bot(bot_factory, KANDEV_URL=kandev.base_url)
    # Distinct questions: an identical one would be posted in the first card's thread, whose
    # line is then edited as it is resolved (not what this test counts).
    waits = seed([distinct_question(1)], title="Answered once Kandev is back")
    elsewhere = seed([distinct_question(2)], title="Answered in Kandev as it comes back")
    card_w = wait_card(fake_slack, waits.pending_id)
    card_e = wait_card(fake_slack, elsewhere.pending_id)
    driver = slack_driver(bot.events_url)

    # ---- Kandev goes down mid-run ---------------------------------------------------------
    kandev.stop()
    ack = driver.click(CHANNEL, card_w.ts, text="MongoDB", user=ALICE)
    assert ack.status == 200 and ack.elapsed < 3.0, ack
    wait_ephemeral(fake_slack, ALICE.id, NOT_RECORDED)
    body = _wait_health(bot, 503, DOWN_CYCLE_S + MARGIN_S, kandev_named=True)
    assert "unreachable" in _kandev_reason(body)

    # ---- the bot restarts while Kandev is still down ----------------------------------------
    bot.restart()
    body = _wait_health(bot, 503, DOWN_CYCLE_S + MARGIN_S, kandev_named=True)
    assert "unreachable" in _kandev_reason(body)
    ack = driver.click(CHANNEL, card_w.ts, text="PostgreSQL", user=BOB)
    assert ack.status == 200 and ack.elapsed < 3.0, ack
    wait_ephemeral(fake_slack, BOB.id, NOT_RECORDED)
    # A modal submission: acked "Sending…", then the form comes back as filled, saying under
    # the reason that nothing reached Kandev.
    mark = fake_slack.mark()
    act(driver, CHANNEL, card_w.ts, "Reject…", user=BOB)
    view = open_modal(fake_slack, REJECT_MODAL, after=mark)
    reason_block = next(iter(input_blocks(view)))
    action_id = input_blocks(view)[reason_block]["element"]["action_id"]
    ack = driver.submit_view(view, {reason_block: {action_id: "not needed"}})
    assert ack.status == 200 and ack.elapsed < 3.0, ack
    assert_sending(ack)
    back = wait_form_result(fake_slack, view.id)
    assert back.callback_id == REJECT_MODAL and back.is_open
    assert "not* recorded" in back.all_text
    assert input_blocks(back)[reason_block]["element"]["initial_value"] == "not needed"
    assert outcome_line(fake_slack.message(CHANNEL, card_w.ts)) is None

    # ---- Kandev comes back; someone answers in its UI right away ----------------------------
    kandev.start()
    back = time.monotonic()
    assert kandev.answer(elsewhere.pending_id, {"db": "q1_opt1"}).status_code == 200
    wait_outcome(
        fake_slack, card_e.ts, "✅ Answered in Kandev: PostgreSQL", DOWN_CYCLE_S + MARGIN_S
    )
    _wait_health(bot, 200, DOWN_CYCLE_S + MARGIN_S)
    matched_after = time.monotonic() - back
    assert outcome_line(fake_slack.message(CHANNEL, card_w.ts)) is None  # still open, as in Kandev
    later = seed([distinct_question(3)], title="Asked after the outage")
    card_l = wait_card(fake_slack, later.pending_id, POLL_S + MARGIN_S)

    # The answer that could not be recorded goes through now, once.
    ack = driver.click(CHANNEL, card_w.ts, text="MongoDB", user=ALICE)
    assert ack.status == 200 and ack.elapsed < 3.0
    final_w = wait_final(kandev, waits.task_id, waits.pending_id, "answered", timeout=15)
    wait_outcome(fake_slack, card_w.ts, f"✅ Answered by <@{ALICE.id}> in Slack", 10)
    time.sleep(POLL_S)
    fake_slack.settle(quiet=1.0, timeout=15)

    answers = {
        waits.pending_id: tool_answers(kandev.agent_result(waits.task_id, timeout=10)),
        elsewhere.pending_id: tool_answers(kandev.agent_result(elsewhere.task_id, timeout=10)),
    }
    posts = [len(card_posts(fake_slack, b.pending_id)) for b in (waits, elsewhere, later)]
    edits = [len(outcome_updates(fake_slack, c.ts)) for c in (card_w, card_e)]
    duplicates = sum(max(n - 1, 0) for n in [*posts, *edits, *answers.values()])
    lost = sum(1 for n in answers.values() if n == 0)
    survived = response_of(final_w, "db")["selected_options"] == ["q1_opt2"]
    reliability.record(
        "Kandev stopped mid-run (click, health)", survived=survived, lost=lost, duplicates=0
    )
    reliability.record(
        "Kandev down at bot start-up (click, modal, health, recovery)",
        survived=survived,
        lost=0,
        duplicates=duplicates,
        detail=f"cards matched Kandev {matched_after:.1f}s after its return",
    )
    assert survived
    assert answers == {waits.pending_id: 1, elsewhere.pending_id: 1}
    assert posts == [1, 1, 1]
    assert edits == [1, 1]
    assert outcome_line(card_l) is None
    assert _not_recorded_count(fake_slack, ALICE.id) == 1
    assert _not_recorded_count(fake_slack, BOB.id) == 1
    assert matched_after <= DOWN_CYCLE_S + MARGIN_S + RELAUNCH_S
