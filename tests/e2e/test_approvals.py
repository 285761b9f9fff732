"""Approvals end to end: an agent's tool-permission request on the real Kandev becomes a card
in its route's channel; a click resolves it and the agent gets that option; resolved in the
web UI first, withdrawn (agent stopped), a cancelled turn, redaction and who may answer."""

from __future__ import annotations

from typing import Any

from kandev_slack.cards import ids
from kandev_slack.cards.ids import ButtonValue
from kandev_slack.core.approval import approval_key
from kandev_slack.kits.fakeslack import ALICE, BOB
from kandev_slack.usecases.intake.approvals import MISSING_GRACE_S
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    assert_terminal_controls,
    buttons,
    click_stale,
    outcome_line,
    slash_reply,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_outcome,
)
from tests.kit.harness import CHANNEL, Permissions, SeededPermission, free_port, permission_spec
from tests.unit.listing.e2e import run_list, wait_home
from tests.unit.ops.metrics_doc import scrape, value

RM = permission_spec("Run rm -rf build", "execute", {"command": "rm -rf build", "cwd": "/repo/app"})
LEADS = "C0LEADS0001"
OPTIONS = [
    "Allow once",
    "Always allow",
    "Reject",
    "Always reject",
    "👀 I'm on it",
    "Open in Kandev",
]


def _texts(blocks: list[dict[str, Any]]) -> str:
    """Every text of a message's blocks, joined (what a person could read)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "text" and isinstance(value, str):
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(blocks)
    return "\n".join(found)


def _respond_in_web_ui(kandev: Permissions, seeded: SeededPermission, option_id: str) -> Any:
    payload = {**seeded.resolve_arguments(option_id)}
    return kandev.ws_request("permission.respond", payload)


def test_an_approval_is_posted_and_a_click_allows_it_once(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot = start_bot(app_factory)
    seeded = seed.permission([RM], title="Clean the build")
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    shown = _texts(card.blocks)
    assert "rm -rf build" in shown and "/repo/app" in shown
    assert "Clean the build" in shown and "Approval needed" in shown
    assert buttons(card) == OPTIONS
    always = next(
        e
        for b in card.blocks
        if b.get("block_id") == ids.BLOCK_ACTIONS
        for e in b["elements"]
        if e["text"]["text"] == "Always allow"
    )
    assert always["confirm"]["confirm"]["text"] == "Always allow"
    assert "Approval needed: run a command: rm -rf build" in card.text

    driver = slack_driver(bot.events_url)
    assert driver.click(CHANNEL, card.ts, text="Allow once", user=ALICE).status == 200
    done = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(done).startswith(f"✅ Allowed once by <@{ALICE.id}> in Slack")
    assert_terminal_controls(done)
    got = Permissions(seed.server).agent_outcomes(seeded.task_id)
    assert got[0]["outcome"] == {"outcome": "selected", "optionId": "allow_once"}

    # A second click (a stale client) is told it was already chosen; nothing more is sent.
    click_stale(driver, CHANNEL, card.ts, text="Reject", user=ALICE)
    told = wait_ephemeral(fake_slack, ALICE.id, "already chose")
    assert "Allowed once" in told.text
    assert len(Permissions(seed.server).agent_outcomes(seeded.task_id)) == 1


def test_chosen_in_the_web_ui_first_then_a_late_click(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot = start_bot(app_factory)
    seeded = seed.permission([RM], title="Web UI first")
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    kandev = Permissions(seed.server)
    reply = _respond_in_web_ui(kandev, seeded, "reject_once")
    assert reply["success"] is True, reply

    done = wait_outcome(fake_slack, card.ts, "⛔")
    assert outcome_line(done).startswith("⛔ Rejected in Kandev")
    assert_terminal_controls(done)
    click_stale(slack_driver(bot.events_url), CHANNEL, card.ts, text="Allow once", user=BOB)
    told = wait_ephemeral(fake_slack, BOB.id, "chose first")
    assert told.text == "Someone in Kandev chose first: Rejected. Your choice was not sent."
    got = kandev.agent_outcomes(seeded.task_id)
    assert [g["outcome"] for g in got] == [{"outcome": "selected", "optionId": "reject_once"}]


def test_a_request_withdrawn_by_stopping_the_agent_ends_its_card(
    app_factory, seed, fake_slack
) -> None:
    start_bot(app_factory)
    seeded = seed.permission([RM], title="Stopped agent")
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    Permissions(seed.server).stop_agent(seeded.session_id)
    # Kandev marks the request expired a moment after its list empties, or never (its agent
    # stopped first): then the card ends once MISSING_GRACE_S is over.
    done = wait_outcome(fake_slack, card.ts, "⏹", timeout=MISSING_GRACE_S + POLL_S + MARGIN_S)
    assert outcome_line(done).startswith("⏹ Withdrawn")
    assert_terminal_controls(done)


def test_a_cancelled_turn_is_never_resolved_from_slack(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot = start_bot(app_factory)
    seeded = seed.permission([RM], title="Cancelled turn")
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    kandev = Permissions(seed.server)
    kandev.cancel_turn(seeded.session_id)

    # The card says it cannot be answered here; a click from a stale client sends nothing.
    done = wait_outcome(fake_slack, card.ts, "⏹")
    assert outcome_line(done).startswith("⏹ Not answerable from Slack")
    click_stale(slack_driver(bot.events_url), CHANNEL, card.ts, text="Allow once", user=ALICE)
    told = wait_ephemeral(fake_slack, ALICE.id, "Nothing was sent")
    assert "turn was cancelled" in told.text
    assert [p["request_id"] for p in kandev.list(seeded.task_id)] == [seeded.request_id]


def test_a_url_secret_kandev_redacted_never_reaches_slack(app_factory, seed, fake_slack) -> None:
    start_bot(app_factory)
    fetch = permission_spec(
        "Fetch https://example.com/api?token=SECRET123",
        "fetch",
        {"url": "https://example.com/api?token=SECRET123"},
    )
    seeded = seed.permission([fetch], title="Fetch the API")
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    assert "https://example.com/api" in _texts(card.blocks)
    posted = [c.params for c in fake_slack.calls("chat.postMessage")]
    assert posted and not any("SECRET123" in repr(p) for p in posted)


def test_only_answerers_may_approve(app_factory, seed, fake_slack, slack_driver, tmp_path) -> None:
    config = tmp_path / "routing.toml"
    config.write_text(f'[defaults]\nchannel = "{CHANNEL}"\nanswerers = ["{ALICE.id}"]\n')
    bot = start_bot(app_factory, KANDEV_SLACK_CONFIG=str(config))
    seeded = seed.permission([RM], title="Only Alice approves")
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    driver = slack_driver(bot.events_url)

    assert driver.click(CHANNEL, card.ts, text="Allow once", user=BOB).status == 200
    # An approval's refusal speaks of approvals ("Act on a card in one glance", item 7).
    wait_ephemeral(
        fake_slack, BOB.id, "not on the list of people who may decide this agent's approvals"
    )
    kandev = Permissions(seed.server)
    assert [p["request_id"] for p in kandev.list(seeded.task_id)] == [seeded.request_id]

    assert driver.click(CHANNEL, card.ts, text="Always allow", user=ALICE).status == 200
    wait_outcome(fake_slack, card.ts, f"✅ Always allowed by <@{ALICE.id}> in Slack")
    got = kandev.agent_outcomes(seeded.task_id)
    assert got[0]["outcome"] == {"outcome": "selected", "optionId": "allow_always"}


def test_listed_and_on_home_and_approved_from_home(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot = start_bot(app_factory)
    seeded = seed.permission([RM], title="Approve from Home")
    key = approval_key(seeded.request_id)
    card = wait_card(fake_slack, key)
    driver = slack_driver(bot.events_url)

    listing = run_list(driver, "approvals", user=ALICE)
    assert "1 approval waits for a decision" in listing.all_text
    assert "Approve from Home" in listing.all_text and "rm -rf build" in listing.all_text
    questions_only = run_list(driver, "", user=ALICE)
    assert "Approve from Home" in questions_only.all_text  # shown above the questions

    driver.app_home_opened(ALICE)
    home = wait_home(fake_slack, ALICE.id, lambda v: "Approve from Home" in v.all_text)
    # No Allow beside the row's short command: "Review and decide…" opens the full view,
    # whose own "Allow once" goes through the same pipeline as the card's.
    assert "Allow once" not in buttons(home)
    driver.click_in_view(home, value=ButtonValue(pending_id=key).encode())
    view = fake_slack.wait_for_view(lambda v: v.callback_id == ids.CALLBACK_APPROVAL_VIEW, 10)
    assert "rm -rf build" in view.all_text
    driver.click_in_view(view, text="Allow once", user=ALICE)
    wait_outcome(fake_slack, card.ts, f"✅ Allowed once by <@{ALICE.id}> in Slack")
    got = Permissions(seed.server).agent_outcomes(seeded.task_id)
    assert got[0]["outcome"] == {"outcome": "selected", "optionId": "allow_once"}


def test_approved_over_socket_mode_with_a_metric_by_kind(
    bot_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(bot_factory, mode="socket", METRICS_PORT=str(free_port()))
    seeded = seed.permission([RM], title="Over the socket")
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    ack = slack_driver(transport="socket").click(CHANNEL, card.ts, text="Reject", user=BOB)
    assert ack.ok
    wait_outcome(fake_slack, card.ts, f"⛔ Rejected by <@{BOB.id}> in Slack")
    got = Permissions(seed.server).agent_outcomes(seeded.task_id)
    assert got[0]["outcome"] == {"outcome": "selected", "optionId": "reject_once"}
    served = scrape(f"http://127.0.0.1:{bot.env['METRICS_PORT']}/metrics")
    assert value(served, "kandev_slack_cards_posted_total", kind="approval") == 1
    won = value(
        served, "kandev_slack_answers_total", source="button", outcome="won", kind="approval"
    )
    assert won == 1


def test_a_kandev_restart_withdraws_the_request(app_factory, seed, fake_slack) -> None:
    start_bot(app_factory)
    seeded = seed.permission([RM], title="Kandev restarts")
    card = wait_card(fake_slack, approval_key(seeded.request_id))
    seed.server.restart()  # requests do not survive it; the task's flag stays (stale)
    done = wait_outcome(fake_slack, card.ts, "⏹", timeout=60)
    assert outcome_line(done).startswith("⏹ Withdrawn")


def test_reminders_escalation_and_a_subscriber_s_dm_card(
    app_factory, seed, fake_slack, slack_driver, tmp_path
) -> None:
    fake_slack.add_channel(LEADS, "leads")
    config = tmp_path / "routes.toml"
    config.write_text(
        f'[defaults]\nchannel = "{CHANNEL}"\nremind_after = "2s"\nremind_every = "30s"\n'
        f'escalate_after = "3s"\nescalate_to = "{LEADS}"\n',
        encoding="utf-8",
    )
    bot = start_bot(app_factory, KANDEV_SLACK_CONFIG=str(config))
    driver = slack_driver(bot.events_url)
    slash_reply(driver, "subscribe", "Subscribed", user=BOB)
    dm_channel = fake_slack.ctx.resolve_channel(BOB.id)
    seeded = seed.permission([RM], title="Waits for a person")
    card = wait_card(fake_slack, approval_key(seeded.request_id))

    fake_slack.wait_for(
        lambda: any(
            c.ok and c.params.get("thread_ts") == card.ts and "⏰" in str(c.params.get("text"))
            for c in fake_slack.calls("chat.postMessage")
        ),
        15,
        "a reminder in the approval's thread",
    )
    escalated = fake_slack.wait_for(
        lambda: next(iter(fake_slack.messages(LEADS)), None), 15, "the escalation copy"
    )
    assert "Allow once" in buttons(escalated)
    dm = fake_slack.wait_for(
        lambda: next(iter(fake_slack.messages(dm_channel)), None), 15, "Bob's DM card"
    )
    assert "rm -rf build" in repr(dm.blocks) and "Allow once" in buttons(dm)

    # Allowing it on the escalation copy resolves it; every copy shows the outcome.
    driver.click(LEADS, escalated.ts, text="Allow once", user=ALICE)
    wait_outcome(fake_slack, card.ts, f"✅ Allowed once by <@{ALICE.id}> in Slack")
    fake_slack.wait_for(
        lambda: outcome_line(fake_slack.message(LEADS, escalated.ts)) or None,
        15,
        "the escalation copy edited",
    )
    fake_slack.wait_for(
        lambda: outcome_line(fake_slack.message(dm_channel, dm.ts)) or None,
        15,
        "the DM card edited",
    )
    got = Permissions(seed.server).agent_outcomes(seeded.task_id)
    assert [g["outcome"]["optionId"] for g in got] == ["allow_once"]
