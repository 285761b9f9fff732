"""The metrics table of docs/operations.md names every series /metrics serves, with its type
and labels (every labelled series recorded once here, so each one's label names are compared)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kandev_slack.ops import metrics
from tests.unit.ops.metrics_doc import compare, documented, served, value


def test_the_readme_documents_every_served_metric_with_its_type_and_labels() -> None:
    metrics.answer("slack:button", "card", "won")
    metrics.acked("block_actions", 0.01)
    metrics.gc_paused(2, 0.004)
    metrics.slack_api_error("chat.postMessage", "channel_not_found")
    metrics.kandev_error("unreachable")
    metrics.kandev_request("mcp list_pending_questions_kandev")
    metrics.card_posted(datetime.now(UTC) - timedelta(seconds=2))
    metrics.answered_in(0.05)
    metrics.approval_sweep("light", 0.002)
    metrics.yielded("group_line", 0.02)
    metrics.followup_not_made("offer")
    metrics.watch_state(
        lambda: metrics.State(
            pending_cards=3,
            oldest_pending_created_at=datetime.now(UTC) - timedelta(minutes=5),
            outbox_pending=1,
            outbox_failed=0,
            health_problems=("kandev",),
            last_sync_age_s=1.5,
            linked_people=4,
            broken_links=1,
        )
    )
    now = served(metrics.exposition().decode())
    assert compare(now) == []
    assert len(documented()) == 21
    assert value(now, "kandev_slack_linked_people") == 4
    assert value(now, "kandev_slack_broken_links") == 1
    assert value(now, "kandev_slack_pending_cards") == 3
    assert value(now, "kandev_slack_oldest_pending_age_seconds") >= 300
    assert value(now, "kandev_slack_health_problem", component="kandev") == 1
    assert value(now, "kandev_slack_health_problem", component="database") == 0


def test_labels_come_from_small_fixed_sets() -> None:
    assert metrics.source_label("slack:button", "card") == "button"
    assert metrics.source_label("slack:button", "list") == "list"
    assert metrics.source_label("slack:button", "home") == "home"
    assert metrics.source_label("slack:modal:card", "card") == "modal"
    assert metrics.source_label("slack:modal:list", "list") == "list"
    assert metrics.source_label("slack:modal:shortcut", "shortcut") == "shortcut"
    assert metrics.source_label("slack:shortcut", "") == "shortcut"
    assert metrics.source_label("slack:modal", "") == "modal"  # a form too broken to read
    assert metrics.source_label("recovery", "") == "recovery"
    kinds = ("won", "lost", "already_answered", "ended", "invalid", "unavailable", "unknown_bundle")
    kinds += ("not_recorded", "unconfirmed", "forbidden", "duplicate", "tampered", "closed")
    assert {metrics.outcome_label(k) for k in kinds} <= set(metrics.OUTCOMES)
    assert metrics.outcome_label("resolved_already") == "refused"
    before = value(
        served(metrics.exposition().decode()),
        "kandev_slack_slack_api_errors_total",
        method="response_url",
        error="http_404",
    )
    metrics.slack_api_error("response_url", "http_404: <html>some body text</html>")
    after = served(metrics.exposition().decode())
    assert (
        value(after, "kandev_slack_slack_api_errors_total", method="response_url", error="http_404")
        == before + 1
    )
