"""Snooze through kandev_slack/slack/listeners/actions.py on a real Bolt App: a "Snooze…" choice on
the
App Home (a static_select's block_actions) is parsed, acked, admitted and made; a forged
option value is refused as tampered, audited and told; Unsnooze undoes it."""

from __future__ import annotations

import json
from typing import Any

from slack_bolt import App

from kandev_slack.cards import ids
from kandev_slack.kits.fakeslack import ALICE, iter_elements, payloads
from kandev_slack.slack.services import Services
from kandev_slack.store import Database
from tests.kit.factories import ALICE_ID, make_bundle, numbered_bundle
from tests.kit.fakes import FakeSlackGateway
from tests.unit.slack.slack_bodies import (
    TRIGGER_ID,
    VIEW_ID,
    WS,
    dispatch,
    eventually,
    home_click,
)


def home_choice(view: dict, value: str) -> dict[str, Any]:
    """Alice chooses the "Snooze…" option ``value`` on her App Home (as Slack sends it);
    a value no option has is a forged one."""
    ref = next(r for r in iter_elements(view["blocks"]) if r.action_id == ids.ACTION_SNOOZE)
    offered = [o["value"] for o in ref.element["options"]]
    action = payloads.action_item(ref, offered[1])
    action["selected_option"] = {**action["selected_option"], "value": value}
    return payloads.block_actions(
        WS,
        ALICE,
        container={"type": "view", "view_id": VIEW_ID},
        actions=[action],
        trigger_id=TRIGGER_ID,
        response_url=None,
        view={**view, "id": VIEW_ID},
    )


def published(gateway: FakeSlackGateway) -> str:
    """The last Home published ("" before any)."""
    calls = gateway.called("views.publish")
    return str(calls[-1]["view"]["blocks"]) if calls else ""


def test_a_snooze_chosen_on_home_is_made_and_unsnooze_undoes_it(
    bolt: App, posted, services: Services, gateway: FakeSlackGateway, store: Database
) -> None:
    card = posted(make_bundle())
    view = services.home.build(ALICE_ID)
    value = json.dumps({"p": card.pending_id, "h": 4}, separators=(",", ":"))

    assert dispatch(bolt, home_choice(view, value)) == (200, "")
    eventually(lambda: "💤 Snoozed for 4 h" in published(gateway))
    snooze = store.snoozes.active_snooze(ALICE_ID, card.pending_id)
    assert snooze is not None and snooze.hours == 4
    assert "💤 Snoozed (1)" in published(gateway)  # told on her Home, which lists it as snoozed

    snoozed_view = services.home.build(ALICE_ID)
    assert dispatch(bolt, home_click(snoozed_view, text="Unsnooze")) == (200, "")
    eventually(lambda: "⏰ Unsnoozed" in published(gateway))
    assert store.snoozes.snooze_of(ALICE_ID, card.pending_id) is None
    done = [(e.action, e.result) for e in store.audit_log.audit_entries(card.pending_id)]
    assert ("snooze", "ok") in done and ("unsnooze", "ok") in done


def test_a_forged_snooze_value_is_refused_audited_and_told(
    bolt: App, posted, services: Services, gateway: FakeSlackGateway, store: Database
) -> None:
    card = posted(make_bundle())
    view = services.home.build(ALICE_ID)
    forged = json.dumps({"p": card.pending_id, "h": 48}, separators=(",", ":"))

    assert dispatch(bolt, home_choice(view, forged)) == (200, "")
    # Told on her Home (no channel, no response_url), and audited.
    eventually(lambda: gateway.called("views.publish"))
    (entry,) = [e for e in store.audit_log.audit_entries() if e.action == "snooze"]
    assert (entry.user, entry.source, entry.result) == (ALICE_ID, "slack:select", "tampered")
    assert store.snoozes.snooze_of(ALICE_ID, card.pending_id) is None


def test_a_group_rows_snooze_snoozes_each_of_its_items_once(
    bolt: App, posted, services: Services, gateway: FakeSlackGateway, store: Database
) -> None:
    """Three identical questions are one row on Home: its "Snooze…" names the row's first item
    and "group"; each of the three is snoozed (one write each), and choosing again (a double
    click, a redelivery) changes nothing."""
    cards = [posted(numbered_bundle(n)) for n in (1, 2, 3)]
    view = services.home.build(ALICE_ID)
    (ref,) = [r for r in iter_elements(view["blocks"]) if r.action_id == ids.ACTION_SNOOZE]
    values = [json.loads(o["value"]) for o in ref.element["options"]]
    assert values[0] == {"p": cards[0].pending_id, "h": 1, "g": True}

    for _ in range(2):
        chosen = json.dumps({"p": cards[0].pending_id, "h": 1, "g": True}, separators=(",", ":"))
        assert dispatch(bolt, home_choice(view, chosen)) == (200, "")
        eventually(lambda: "💤 Snoozed (3)" in published(gateway))
    for card in cards:
        snooze = store.snoozes.active_snooze(ALICE_ID, card.pending_id)
        assert snooze is not None and snooze.hours == 1
        done = [e for e in store.audit_log.audit_entries(card.pending_id) if e.action == "snooze"]
        assert [e.result for e in done] == ["ok"]
