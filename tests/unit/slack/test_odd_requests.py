"""Requests Slack can send that no feature asks for still get their answer (never a 404)."""

from __future__ import annotations

from slack_bolt import App

from kandev_slack.kits.fakeslack import ALICE, payloads
from tests.unit.slack.slack_bodies import WS, dispatch


def test_view_closed_is_acked_not_404(bolt: App) -> None:
    view = {"id": "V0CLOSED", "type": "modal", "callback_id": "kq_answer", "blocks": []}
    for cleared in (False, True):
        status, acked = dispatch(bolt, payloads.view_closed(WS, ALICE, view, cleared))
        assert (status, acked) == (200, "")
