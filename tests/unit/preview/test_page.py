"""What one preview user sees of the fake Slack: threads under their message, only their own
ephemerals, their direct messages once the bot wrote, the top modal with its field errors,
and a version that changes with anything shown."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient

from kandev_slack.kits.fakeslack import FakeSlack
from kandev_slack.preview.page import NOTICE_S, Memory, Snapshot, state_version
from kandev_slack.preview.workspace import ANA, BEN, QUESTIONS, PreviewWorkspace, own_workspace


@pytest.fixture
def slack(tmp_path) -> Iterator[tuple[FakeSlack, WebClient, PreviewWorkspace]]:
    workspace = own_workspace(tmp_path)
    fake = FakeSlack()
    workspace.fill(fake)
    with fake:
        yield fake, WebClient(token=fake.workspace.bot_token, base_url=fake.api_url), workspace


def plain(text: str) -> dict[str, str]:
    return {"type": "plain_text", "text": text}


def snapshot(fake: FakeSlack, workspace: PreviewWorkspace, user=ANA, memory=None) -> Snapshot:
    return Snapshot(fake, user, workspace.channels, workspace.names, memory or Memory())


def test_a_reply_is_shown_in_its_messages_thread_and_an_ephemeral_to_its_user_only(slack):
    fake, web, workspace = slack
    card = web.chat_postMessage(channel=QUESTIONS.id, text="The card <@U0PVANA001>")["ts"]
    web.chat_postMessage(channel=QUESTIONS.id, text="Reminder: *waiting*", thread_ts=card)
    web.chat_postEphemeral(channel=QUESTIONS.id, user=BEN.id, text="Only for Ben")

    for_ana = snapshot(fake, workspace).render()
    pane = for_ana["panes"][QUESTIONS.id]
    card_html, thread = pane.split('<div class="thread">')
    assert '<span class="mention">@ana</span>' in card_html
    assert "1 reply" in thread and "Reminder: <b>waiting</b>" in thread
    assert "Only for Ben" not in pane
    assert "Only for Ben" in snapshot(fake, workspace, BEN).render()["panes"][QUESTIONS.id]
    assert [c["id"] for c in for_ana["sidebar"]] == [c.id for c in workspace.channels]


def test_the_direct_messages_show_once_the_bot_wrote(slack):
    fake, web, workspace = slack
    assert len(snapshot(fake, workspace).render()["sidebar"]) == len(workspace.channels)
    web.chat_postMessage(channel=ANA.id, text="A card for you")
    shown = snapshot(fake, workspace).render()
    assert shown["sidebar"][-1] == {"id": "D0PVANA001", "name": "Kandev (app)", "direct": True}
    assert "A card for you" in shown["panes"]["D0PVANA001"]


def test_the_top_modal_is_shown_with_the_errors_of_its_last_submission(slack):
    fake, web, workspace = slack
    field = {"type": "plain_text_input", "action_id": "text"}
    question = {"type": "input", "block_id": "q1", "label": plain("Database"), "element": field}
    view = {
        "type": "modal",
        "title": plain("Answer"),
        "submit": plain("Send"),
        "blocks": [question],
    }
    opened = web.views_open(trigger_id=fake.issue_trigger(ANA.id), view=view)["view"]
    memory = Memory(errors={f"{opened['id']}:{opened['hash']}": {"q1": "Say *something*"}})

    modal = snapshot(fake, workspace, memory=memory).render()["modal"]

    assert f'data-view-id="{opened["id"]}"' in modal
    assert '<div class="field-error" role="alert">Say <b>something</b></div>' in modal
    assert '<button type="submit" class="btn btn-primary">Send</button>' in modal
    assert snapshot(fake, workspace, BEN).render()["modal"] == ""


def test_the_version_changes_with_what_is_shown(slack):
    fake, web, _workspace = slack
    before = state_version(fake, 0)
    assert state_version(fake, 0) == before
    ts = web.chat_postMessage(channel=QUESTIONS.id, text="one")["ts"]
    posted = state_version(fake, 0)
    web.chat_update(channel=QUESTIONS.id, ts=ts, text="two")
    assert len({before, posted, state_version(fake, 0), state_version(fake, 1)}) == 4


def test_a_notice_goes_away_and_a_reloaded_page_shows_none(slack):
    fake, _web, workspace = slack
    memory = Memory()
    memory.notice("The app answered HTTP 500", at=100.0)
    shown = snapshot(fake, workspace, memory=memory)

    assert shown.render(now=101.0)["notices"] == ["The app answered HTTP 500"]
    assert shown.render(now=101.0, fresh=True)["notices"] == [], "a reload shows old notices"
    assert shown.render(now=100.0 + NOTICE_S + 0.1)["notices"] == [], "the notice stays"


def test_the_page_says_whose_time_zone_its_times_are_in(slack):
    fake, _web, workspace = slack
    assert "Ana Lima’s time zone (Europe/Lisbon)" in snapshot(fake, workspace).render()["time_zone"]
    for_ben = snapshot(fake, workspace, BEN).render()["time_zone"]
    assert "Ben Okafor’s time zone (America/New_York)" in for_ben


SPEC = "KANDEV-MOCK-SPEC 3f2a9c1e eyJxdWVzdGlvbnMiOlt7ImlkIjoiZGIifV0sImNvbnRleHQiOiIifQ=="


def test_the_scripted_agents_script_is_never_shown(slack):
    fake, web, workspace = slack
    description = {"type": "section", "text": {"type": "mrkdwn", "text": f"Orders\n\n{SPEC}"}}
    cut = {"type": "context", "elements": [{"type": "mrkdwn", "text": SPEC[:40] + "…"}]}
    view = {"type": "modal", "title": plain("Conversation"), "blocks": [description, cut]}
    web.views_open(trigger_id=fake.issue_trigger(ANA.id), view=view)
    web.chat_postMessage(channel=QUESTIONS.id, text=f"Task: {SPEC}")

    shown = snapshot(fake, workspace).render()

    assert "Orders" in shown["modal"] and "Task:" in shown["panes"][QUESTIONS.id]
    for html in (shown["modal"], shown["panes"][QUESTIONS.id]):
        assert "KANDEV-MOCK-SPEC" not in html and "eyJxdWVzdGlvbnMi" not in html


def test_a_message_offers_a_reply_in_its_thread_and_a_reply_does_not(slack):
    fake, web, workspace = slack
    card = web.chat_postMessage(channel=QUESTIONS.id, text="The card")["ts"]
    web.chat_postMessage(channel=QUESTIONS.id, text="Reminder", thread_ts=card)
    pane = snapshot(fake, workspace).render()["panes"][QUESTIONS.id]
    card_html, thread = pane.split('<div class="thread">')
    assert 'data-act="reply"' in card_html and 'data-act="reply"' not in thread


def test_what_the_agent_said_next_is_shown_under_its_card_as_the_previews_own(slack):
    fake, web, workspace = slack
    card = web.chat_postMessage(channel=QUESTIONS.id, text="Answered by Ana")["ts"]
    went_on = {(QUESTIONS.id, card): "Thanks, *continuing* <now>."}
    pane = Snapshot(
        fake, ANA, workspace.channels, workspace.names, Memory(), went_on=went_on
    ).render()["panes"][QUESTIONS.id]
    assert "Then, in Kandev, the agent went on: <q>Thanks, *continuing* &lt;now&gt;.</q>" in pane
    assert "Slack shows no such line" in pane
