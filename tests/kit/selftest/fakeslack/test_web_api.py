"""The fake Web API, exercised with slack_sdk's real WebClient."""

from __future__ import annotations

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from kandev_slack.kits.fakeslack import FakeSlack, SlackUser

CHANNEL = "C0QUESTION"
SECTION = [{"type": "section", "text": {"type": "mrkdwn", "text": "hello"}}]


@pytest.fixture
def client(fake_slack: FakeSlack) -> WebClient:
    return WebClient(token=fake_slack.workspace.bot_token, base_url=fake_slack.api_url)


def test_auth_test_describes_the_bot(client: WebClient, fake_slack: FakeSlack) -> None:
    ws = fake_slack.workspace
    result = client.auth_test()
    assert (result["user_id"], result["bot_id"], result["team_id"]) == (
        ws.bot_user_id,
        ws.bot_id,
        ws.team_id,
    )


def test_tokens_are_checked(fake_slack: FakeSlack) -> None:
    for token, error in (
        ("xoxb-wrong", "invalid_auth"),
        (fake_slack.workspace.app_token, "not_allowed_token_type"),
    ):
        with pytest.raises(SlackApiError) as exc:
            WebClient(token=token, base_url=fake_slack.api_url).auth_test()
        assert exc.value.response["error"] == error
    with pytest.raises(SlackApiError) as exc:
        WebClient(base_url=fake_slack.api_url).auth_test()
    assert exc.value.response["error"] == "not_authed"


def test_unknown_method_and_channel(client: WebClient) -> None:
    with pytest.raises(SlackApiError) as exc:
        client.api_call("chat.frobnicate")
    assert exc.value.response["error"] == "unknown_method"
    with pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel="C0NOPE", text="x")
    assert exc.value.response["error"] == "channel_not_found"


def test_post_update_delete_round_trip(client: WebClient, fake_slack: FakeSlack) -> None:
    metadata = {"event_type": "kandev_card", "event_payload": {"pending_id": "p1"}}
    posted = client.chat_postMessage(channel=CHANNEL, text="v1", blocks=SECTION, metadata=metadata)
    ts = posted["ts"]
    assert posted["channel"] == CHANNEL
    assert posted["message"]["metadata"] == metadata
    assert posted["message"]["blocks"][0]["block_id"]  # Slack fills in missing block ids
    second = client.chat_postMessage(channel=CHANNEL, text="other")
    assert float(second["ts"]) > float(ts)

    updated = client.chat_update(channel=CHANNEL, ts=ts, text="v2")
    assert updated["message"]["blocks"][0]["text"]["text"] == "hello"  # omitted blocks are kept
    message = fake_slack.message(CHANNEL, ts)
    assert (message.text, message.metadata, len(message.versions)) == ("v2", metadata, 1)
    assert message.versions[0]["text"] == "v1"

    client.chat_update(channel=CHANNEL, ts=ts, text="v3", blocks=[])
    assert fake_slack.message(CHANNEL, ts).blocks == []

    client.chat_delete(channel=CHANNEL, ts=ts)
    assert [m.ts for m in fake_slack.messages(CHANNEL)] == [second["ts"]]
    with pytest.raises(SlackApiError) as exc:
        client.chat_update(channel=CHANNEL, ts=ts, text="again")
    assert exc.value.response["error"] == "message_not_found"


def test_threads_names_and_dms(client: WebClient, fake_slack: FakeSlack) -> None:
    parent = client.chat_postMessage(channel="#agent-questions", text="parent")
    assert parent["channel"] == CHANNEL
    reply = client.chat_postMessage(channel=CHANNEL, text="reply", thread_ts=parent["ts"])
    replies = client.conversations_replies(channel=CHANNEL, ts=parent["ts"])
    assert [m["ts"] for m in replies["messages"]] == [parent["ts"], reply["ts"]]
    history = client.conversations_history(channel=CHANNEL)
    assert [m["ts"] for m in history["messages"]] == [parent["ts"]]
    dm = client.chat_postMessage(channel="U0ALICE001", text="psst")
    assert dm["channel"].startswith("D")


def test_form_and_json_bodies_are_both_accepted(client: WebClient, fake_slack: FakeSlack) -> None:
    import json

    form = client.api_call(
        "chat.postMessage",
        params={"channel": CHANNEL, "text": "form", "blocks": json.dumps(SECTION)},
    )
    as_json = client.api_call(
        "chat.postMessage", json={"channel": CHANNEL, "text": "json", "blocks": SECTION}
    )
    for result in (form, as_json):
        assert fake_slack.message(CHANNEL, result["ts"]).blocks[0]["text"]["text"] == "hello"
    recorded = fake_slack.calls("chat.postMessage")
    assert [c.params["blocks"][0]["type"] for c in recorded] == ["section", "section"]


def test_history_reconciles_by_metadata_with_pagination(
    client: WebClient, fake_slack: FakeSlack
) -> None:
    for i in range(5):
        client.chat_postMessage(
            channel=CHANNEL,
            text=f"card {i}",
            metadata={"event_type": "kandev_card", "event_payload": {"n": i}},
        )
    plain = client.conversations_history(channel=CHANNEL, limit=10)
    assert all("metadata" not in m for m in plain["messages"])
    seen: list[int] = []
    cursor = None
    while True:
        page = client.conversations_history(
            channel=CHANNEL, limit=2, include_all_metadata=True, cursor=cursor
        )
        seen += [m["metadata"]["event_payload"]["n"] for m in page["messages"]]
        cursor = page["response_metadata"]["next_cursor"]
        if not page["has_more"]:
            break
    assert seen == [4, 3, 2, 1, 0]


def test_ephemeral_and_permalink(client: WebClient, fake_slack: FakeSlack) -> None:
    ts = client.chat_postMessage(channel=CHANNEL, text="card")["ts"]
    result = client.chat_postEphemeral(channel=CHANNEL, user="U0ALICE001", text="only you")
    assert result["message_ts"]
    (ephemeral,) = fake_slack.ephemerals(user="U0ALICE001")
    assert (ephemeral.text, ephemeral.source) == ("only you", "chat.postEphemeral")
    link = client.chat_getPermalink(channel=CHANNEL, message_ts=ts)["permalink"]
    assert link == f"https://fake-team.slack.com/archives/{CHANNEL}/p{ts.replace('.', '')}"
    with pytest.raises(SlackApiError) as exc:
        client.chat_postEphemeral(channel=CHANNEL, user="U0NOBODY", text="x")
    assert exc.value.response["error"] == "user_not_in_channel"


def test_directory_methods(client: WebClient, fake_slack: FakeSlack) -> None:
    fake_slack.set_usergroup("S0ONCALL", ["U0ALICE001", "U0BOB00002"])
    assert client.usergroups_users_list(usergroup="S0ONCALL")["users"] == [
        "U0ALICE001",
        "U0BOB00002",
    ]
    with pytest.raises(SlackApiError) as exc:
        client.usergroups_users_list(usergroup="S0NONE")
    assert exc.value.response["error"] == "no_such_subteam"
    assert client.users_info(user="U0ALICE001")["user"]["name"] == "alice"
    assert client.conversations_info(channel=CHANNEL)["channel"]["name"] == "agent-questions"


def test_users_info_names_each_person_s_organisation_and_guests(
    client: WebClient, fake_slack: FakeSlack
) -> None:
    fake_slack.add_user(SlackUser(id="U0PARTNER1", name="pat", team_id="T0PARTNER1"))
    fake_slack.add_user(SlackUser(id="U0GUEST001", name="gus", is_restricted=True))
    alice = client.users_info(user="U0ALICE001")["user"]
    assert alice["team_id"] == fake_slack.workspace.team_id
    assert not alice["is_restricted"] and not alice["is_ultra_restricted"]
    partner = client.users_info(user="U0PARTNER1")["user"]
    assert partner["team_id"] == "T0PARTNER1" and partner["profile"]["team"] == "T0PARTNER1"
    guest = client.users_info(user="U0GUEST001")["user"]
    assert guest["team_id"] == fake_slack.workspace.team_id and guest["is_restricted"]
    assert client.auth_test()["team_id"] == fake_slack.workspace.team_id


def test_conversations_members_pages_and_hides_private_channels_without_the_bot(
    client: WebClient, fake_slack: FakeSlack
) -> None:
    everyone = [f"U0MEMBER{n:02d}" for n in range(5)]
    fake_slack.set_channel_members(CHANNEL, everyone)
    first = client.conversations_members(channel=CHANNEL, limit=2)
    assert first["members"] == everyone[:2]
    cursor = first["response_metadata"]["next_cursor"]
    rest: list[str] = []
    while cursor:
        page = client.conversations_members(channel=CHANNEL, limit=2, cursor=cursor)
        rest += page["members"]
        cursor = page["response_metadata"]["next_cursor"]
    assert rest == everyone[2:]
    # A channel whose members are not listed has every user and the bot.
    listed = client.conversations_members(channel="C0PLATFORM")["members"]
    assert {"U0ALICE001", "U0BOB00002", fake_slack.workspace.bot_user_id} <= set(listed)
    for channel, members in (("C0NOSUCH", None), ("C0SECRET", ["U0ALICE001"])):
        if members is not None:
            fake_slack.add_channel(channel, "secret", is_private=True)
            fake_slack.set_channel_members(channel, members)
        with pytest.raises(SlackApiError) as exc:
            client.conversations_members(channel=channel)
        assert exc.value.response["error"] == "channel_not_found"
    with pytest.raises(SlackApiError) as exc:
        client.conversations_members(channel=CHANNEL, cursor="not-a-cursor")
    assert exc.value.response["error"] == "invalid_cursor"


def test_views_round_trip(client: WebClient, fake_slack: FakeSlack) -> None:
    modal = {
        "type": "modal",
        "callback_id": "m",
        "title": {"type": "plain_text", "text": "Title"},
        "blocks": SECTION,
        "external_id": "ext-1",
    }
    opened = client.views_open(trigger_id=fake_slack.issue_trigger("U0ALICE001"), view=modal)
    view = opened["view"]
    assert view["id"].startswith("V") and view["hash"] and view["root_view_id"] == view["id"]
    changed = {**modal, "title": {"type": "plain_text", "text": "Changed"}}
    by_id = client.views_update(view_id=view["id"], view=changed, hash=view["hash"])
    with pytest.raises(SlackApiError) as exc:
        client.views_update(view_id=view["id"], view=changed, hash=view["hash"])
    assert exc.value.response["error"] == "hash_conflict"
    client.views_update(external_id="ext-1", view=changed, hash=by_id["view"]["hash"])
    pushed = client.views_push(trigger_id=fake_slack.issue_trigger("U0ALICE001"), view=SMALL)
    assert pushed["view"]["previous_view_id"] == view["id"]
    (first, second) = fake_slack.views_opened()
    assert first.definition["title"]["text"] == "Changed" and len(first.history) == 2
    assert [v.id for v in fake_slack.open_views("U0ALICE001")] == [first.id, second.id]

    home = {"type": "home", "blocks": SECTION}
    client.views_publish(user_id="U0ALICE001", view=home)
    published = fake_slack.home("U0ALICE001")
    assert published is not None and published.blocks[0]["text"]["text"] == "hello"


SMALL = {"type": "modal", "title": {"type": "plain_text", "text": "Two"}, "blocks": SECTION}


def test_an_update_sent_while_a_submission_awaits_its_ack_follows_the_ack(
    client: WebClient, fake_slack: FakeSlack
) -> None:
    """Slack applies a submission's ack (response_action update) before the app's next
    views.update of that view, even when that call reaches the fake before the driver has
    applied the ack; the update then lands on the view the ack made, by the same view_id."""
    import threading
    import time

    modal = {"type": "modal", "title": {"type": "plain_text", "text": "Form"}, "blocks": SECTION}
    view_id = client.views_open(trigger_id=fake_slack.issue_trigger("U0ALICE001"), view=modal)[
        "view"
    ]["id"]
    sending = {**modal, "title": {"type": "plain_text", "text": "Sending…"}}
    result = {**modal, "title": {"type": "plain_text", "text": "Sent"}}
    done: list[str] = []
    with fake_slack.view_flow.submitting(view_id):
        update = threading.Thread(
            target=lambda: done.append(
                client.views_update(view_id=view_id, view=result)["view"]["id"]
            )
        )
        update.start()
        time.sleep(0.3)  # the update is in first (it must wait for the ack)
        fake_slack.view_flow.apply_submission_answer(
            view_id, {"response_action": "update", "view": sending}
        )
    update.join(5)

    record = fake_slack.view(view_id)
    assert done == [view_id]
    assert [v["title"]["text"] for v in record.history] == ["Form", "Sending…"]
    assert record.definition["title"]["text"] == "Sent" and record.is_open


def test_an_update_of_a_submitted_view_that_closed_is_not_found(
    client: WebClient, fake_slack: FakeSlack
) -> None:
    modal = {"type": "modal", "title": {"type": "plain_text", "text": "Form"}, "blocks": SECTION}
    view_id = client.views_open(trigger_id=fake_slack.issue_trigger("U0ALICE001"), view=modal)[
        "view"
    ]["id"]
    with fake_slack.view_flow.submitting(view_id):
        fake_slack.view_flow.apply_submission_answer(view_id, None)  # a bare ack closes it
    with pytest.raises(SlackApiError) as exc:
        client.views_update(view_id=view_id, view=modal)
    assert exc.value.response["error"] == "not_found"


def test_wait_for_call_sees_calls_from_other_threads(
    client: WebClient, fake_slack: FakeSlack
) -> None:
    import threading

    mark = fake_slack.mark()
    threading.Timer(0.1, lambda: client.chat_postMessage(channel=CHANNEL, text="later")).start()
    call = fake_slack.wait_for_call(
        "chat.postMessage", lambda c: c.params["text"] == "later", timeout=3, after=mark
    )
    assert call.ok and call.response["channel"] == CHANNEL
    with pytest.raises(TimeoutError):
        fake_slack.wait_for_call("chat.delete", timeout=0.2)


def test_conversations_open_gives_the_dm_chat_post_message_uses(client: WebClient) -> None:
    opened = client.conversations_open(users="U0ALICE001")
    dm = client.chat_postMessage(channel="U0ALICE001", text="psst")
    assert opened["channel"]["id"] == dm["channel"]
    for users, error in (
        ("U0NOBODY", "user_not_found"),
        ("U0ALICE001,U0BOB00002", "not_supported"),
    ):
        with pytest.raises(SlackApiError) as caught:
            client.conversations_open(users=users)
        assert caught.value.response["error"] == error
