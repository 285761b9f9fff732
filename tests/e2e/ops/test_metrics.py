"""Metrics and JSON logs of the bot as a process, against the real Kandev and the fake Slack:
scrape, drive a flow (a card posted, an answer won, a refusal), scrape again, assert the
deltas; docs/operations.md's table matches what is served; every log line is one JSON object naming
the card, person, channel and replica it is about. In Socket Mode, METRICS_PORT serves
/metrics and /healthz."""

from __future__ import annotations

import json
import signal

import httpx

from kandev_slack.kits.fakeslack import ALICE, BOB
from tests.e2e.helpers import click_stale, db_question, start_bot, wait_card, wait_outcome
from tests.kit.harness import CHANNEL, free_port
from tests.unit.ops.metrics_doc import compare, scrape, value


def test_metrics_follow_a_flow_and_match_the_readme(
    bot_factory, seed, fake_slack, slack_driver
) -> None:
    bot = start_bot(bot_factory, LOG_FORMAT="json")
    metrics_url = f"http://127.0.0.1:{bot.port}/metrics"
    before = scrape(metrics_url)  # unsigned, like /healthz
    assert compare(before) == []

    bundle = seed([db_question()], title="Metrics flow")
    card = wait_card(fake_slack, bundle.pending_id)
    waiting = scrape(metrics_url)
    assert value(waiting, "kandev_slack_pending_cards") >= 1
    assert value(waiting, "kandev_slack_oldest_pending_age_seconds") > 0

    driver = slack_driver(bot.events_url)
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE).status == 200
    wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{ALICE.id}> in Slack")
    refused = click_stale(driver, CHANNEL, card.ts, text="PostgreSQL", user=BOB)
    assert refused.status == 200

    after = scrape(metrics_url)

    def delta(sample: str, **labels: str) -> float:
        return value(after, sample, **labels) - value(before, sample, **labels)

    assert delta("kandev_slack_cards_posted_total", kind="question") == 1
    assert delta("kandev_slack_time_to_card_seconds_count", kind="question") == 1
    assert delta("kandev_slack_answers_total", source="button", outcome="won", kind="question") == 1
    assert (
        delta("kandev_slack_answers_total", source="button", outcome="refused", kind="question")
        == 1
    )
    assert delta("kandev_slack_answer_seconds_count") == 1
    assert delta("kandev_slack_ack_seconds_count", kind="block_actions") == 2
    assert value(after, "kandev_slack_pending_cards") == value(before, "kandev_slack_pending_cards")
    assert value(after, "kandev_slack_outbox_failed") == 0
    assert value(after, "kandev_slack_health_problem", component="kandev") == 0
    assert compare(after) == []
    assert httpx.post(metrics_url, timeout=5).status_code != 200  # only GET/HEAD is served

    # Every line is a JSON object; the interaction's lines name the card, person and channel.
    lines = [
        json.loads(line)
        for line in bot.logs().splitlines()
        if line.strip() and not line.startswith("=====")
    ]
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    replicas = {line.get("replica") for line in lines}
    assert len(replicas - {None}) == 1, replicas
    answered = [line for line in lines if line["message"].startswith(f"answer from {ALICE.id}")]
    assert answered, lines[-20:]
    assert answered[0]["pending_id"] == bundle.pending_id
    assert (answered[0]["user"], answered[0]["channel"]) == (ALICE.id, CHANNEL)
    posted = [line for line in lines if line["message"].startswith("posted the card of")]
    assert posted[0]["pending_id"] == bundle.pending_id and posted[0]["channel"] == CHANNEL


def test_socket_mode_serves_metrics_and_health_on_metrics_port(
    bot_factory, seed, fake_slack, slack_driver
) -> None:
    port = free_port()
    bot = start_bot(bot_factory, mode="socket", METRICS_PORT=str(port))
    base = f"http://127.0.0.1:{port}"
    before = scrape(f"{base}/metrics")
    bundle = seed([db_question()], title="Metrics over the socket")
    card = wait_card(fake_slack, bundle.pending_id)
    ack = slack_driver(transport="socket").click(CHANNEL, card.ts, text="PostgreSQL", user=BOB)
    assert ack.ok
    wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{BOB.id}> in Slack")
    after = scrape(f"{base}/metrics")
    won = ("kandev_slack_answers_total",)
    assert (
        value(after, *won, source="button", outcome="won", kind="question")
        - value(before, *won, source="button", outcome="won", kind="question")
        == 1
    )
    assert value(after, "kandev_slack_ack_seconds_count", kind="block_actions") >= 1
    health = httpx.get(f"{base}/healthz", timeout=5)
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert httpx.get(f"{base}/slack/events", timeout=5).status_code == 404

    # Ctrl-C (SIGINT) hands over like SIGTERM: the socket is closed, the exit code is 0.
    assert bot.proc is not None
    bot.proc.send_signal(signal.SIGINT)
    assert bot.proc.wait(30) == 0, bot.logs()[-2000:]
    last_start = bot.logs().rsplit("===== start", 1)[-1]
    assert "Socket Mode connection closed" in last_start
    assert "stopped with nothing left in flight" in last_start
