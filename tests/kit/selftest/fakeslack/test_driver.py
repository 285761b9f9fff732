"""SlackDriver against a real Bolt app, over signed HTTP and over Socket Mode."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from slack_sdk import WebClient

from kandev_slack.kits.fakeslack import Delivery, FakeSlack, SlackDriver, ViewSubmissionBlocked
from tests.kit.selftest.fakeslack.demo_app import (
    answer_modal,
    build_app,
    post_card,
    serve_http,
    socket_mode,
)

CHANNEL = "C0QUESTION"


@pytest.fixture(params=["http", "socket"])
def driver(
    request: pytest.FixtureRequest,
    fake_slack: FakeSlack,
    slack_driver: Callable[..., SlackDriver],
) -> Iterator[SlackDriver]:
    app = build_app(fake_slack)
    if request.param == "http":
        with serve_http(app) as url:
            yield slack_driver(url)
    else:
        with socket_mode(app, fake_slack):
            yield slack_driver(transport="socket")


def test_click_opens_a_modal_and_submit_updates_the_card(
    driver: SlackDriver, fake_slack: FakeSlack
) -> None:
    ts = post_card(fake_slack)
    ack = driver.click(CHANNEL, ts, text="Answer…")
    assert ack.ok and ack.elapsed < 3.0
    view = fake_slack.wait_for_view(lambda v: v.callback_id == "answer_modal")
    assert view.user == "U0ALICE001" and view.is_open

    with pytest.raises(ViewSubmissionBlocked):  # Slack's client refuses an empty required radio
        driver.submit_view(view, {"note": {"text": "hi"}})
    with pytest.raises(ViewSubmissionBlocked):  # …and text beyond max_length
        driver.submit_view(view, {"db": {"choice": "pg"}, "note": {"text": "x" * 2001}})

    refused = driver.submit_view(view, {"db": {"choice": "pg"}, "note": {"text": "bad idea"}})
    assert refused.json == {"response_action": "errors", "errors": {"note": "Please be nice"}}
    assert fake_slack.view(view.id).is_open

    accepted = driver.submit_view(view, {"db": {"choice": "mongo"}})
    assert accepted.ok and accepted.body is None
    assert not fake_slack.view(view.id).is_open
    fake_slack.wait_for(lambda: fake_slack.message(CHANNEL, ts).edited_ts, description="the edit")
    card = fake_slack.message(CHANNEL, ts)
    assert "✅ mongo" in card.all_text and card.versions[0]["text"] == "Which database?"


def test_a_pick_in_a_form_is_sent_with_dispatch_action_and_kept_across_an_update(
    driver: SlackDriver, fake_slack: FakeSlack
) -> None:
    ts = post_card(fake_slack)
    driver.click(CHANNEL, ts, text="Answer…")
    view = fake_slack.wait_for_view(lambda v: v.callback_id == "answer_modal")
    ack = driver.pick_in_form(view, block_id="db", option="mongo")
    assert ack is not None and ack.ok  # dispatch_action: Slack tells the app at once
    fake_slack.wait_for(
        lambda: "Picked mongo" in str(fake_slack.view(view.id).blocks), description="update"
    )
    # views.update kept the pick (same block_id and action_id): the submission carries it
    assert driver.submit_view(view, {"note": {"text": "fine"}}).ok
    fake_slack.wait_for(lambda: fake_slack.message(CHANNEL, ts).edited_ts, description="edit")
    assert "✅ mongo" in fake_slack.message(CHANNEL, ts).all_text


def test_a_pick_in_an_input_without_dispatch_action_is_sent_on_submission_only(
    driver: SlackDriver, fake_slack: FakeSlack
) -> None:
    token = fake_slack.workspace.bot_token
    client = WebClient(token=token, base_url=fake_slack.api_url)
    modal = answer_modal('{"channel": "C0QUESTION", "ts": "1.0"}')
    del modal["blocks"][0]["dispatch_action"]
    opened = client.views_open(trigger_id=fake_slack.issue_trigger("U0ALICE001"), view=modal)
    view_id = opened["view"]["id"]
    assert driver.pick_in_form(view_id, block_id="db", option="pg") is None
    with pytest.raises(LookupError):
        driver.pick_in_form(view_id, block_id="db", option="oracle")
    with pytest.raises(ValueError):  # a form's input is not picked like a Home select
        driver.select_in_view(view_id, action_id="choice", option="pg")
    # a views.update that drops the input drops the pick; one that keeps it keeps it
    client.views_update(view_id=view_id, view=modal)
    assert fake_slack.view(view_id).entered == {"db": {"choice": "pg"}}
    without = {**modal, "blocks": modal["blocks"][1:]}
    client.views_update(view_id=view_id, view=without)
    assert fake_slack.view(view_id).entered == {}


def test_click_payload_carries_a_response_url(driver: SlackDriver, fake_slack: FakeSlack) -> None:
    ts = post_card(fake_slack)
    driver.click(CHANNEL, ts, value="mongo", user="U0BOB00002")
    ephemeral = fake_slack.wait_for_ephemeral("U0BOB00002")
    assert ephemeral.text == "<@U0BOB00002> picked mongo"
    assert ephemeral.source == "response_url"


def test_a_click_on_the_card_as_a_stale_client_shows_it(
    driver: SlackDriver, fake_slack: FakeSlack
) -> None:
    ts = post_card(fake_slack)
    client = WebClient(token=fake_slack.workspace.bot_token, base_url=fake_slack.api_url)
    client.chat_update(channel=CHANNEL, ts=ts, text="Answered", blocks=[])
    with pytest.raises(LookupError):  # the current card has no button any more
        driver.click(CHANNEL, ts, value="mongo")
    driver.click(CHANNEL, ts, value="mongo", user="U0BOB00002", seen_version=0)
    assert fake_slack.wait_for_ephemeral("U0BOB00002").text == "<@U0BOB00002> picked mongo"


def test_an_overflow_option_is_chosen_by_its_label(
    driver: SlackDriver, fake_slack: FakeSlack
) -> None:
    ts = post_card(fake_slack)
    ack = driver.choose(CHANNEL, ts, text="Conversation", user="U0BOB00002")
    assert ack.ok
    assert fake_slack.wait_for_ephemeral("U0BOB00002").text == "overflow: talk"
    with pytest.raises(LookupError, match="Skip…"):  # names what the menus offer
        driver.choose(CHANNEL, ts, text="Reject…")


def test_unknown_button_is_reported_with_the_available_ones(
    driver: SlackDriver, fake_slack: FakeSlack
) -> None:
    ts = post_card(fake_slack)
    with pytest.raises(LookupError, match="open_answer"):
        driver.click(CHANNEL, ts, action_id="nope")


def test_slash_command_ack_is_shown_as_ephemeral(
    driver: SlackDriver, fake_slack: FakeSlack
) -> None:
    ack = driver.slash("/kq", "platform")
    # Bolt answers text/plain over HTTP and {"text": …} over Socket Mode; Slack shows both.
    assert ack.body in ("you asked for 'platform'", {"text": "you asked for 'platform'"})
    (shown,) = fake_slack.ephemerals("U0ALICE001")
    assert (shown.text, shown.source) == ("you asked for 'platform'", "command_ack")


def test_app_home_and_message_shortcut(driver: SlackDriver, fake_slack: FakeSlack) -> None:
    driver.app_home_opened()
    fake_slack.wait_for_call("views.publish")
    home = fake_slack.home("U0ALICE001")
    assert home is not None and "Waiting: 0" in home.all_text

    note = fake_slack.post_user_message(CHANNEL, "U0BOB00002", "a human message")
    driver.message_shortcut("reject_question", CHANNEL, note.ts)
    shown = fake_slack.wait_for_ephemeral("U0ALICE001")
    assert shown.text == f"shortcut on {note.ts}"


def test_a_choice_in_a_home_select_is_the_one_offering_it(
    driver: SlackDriver, fake_slack: FakeSlack
) -> None:
    driver.app_home_opened()
    home = fake_slack.wait_for(lambda: fake_slack.home("U0ALICE001"), 5, "the Home tab")
    ack = driver.select_in_view(home, action_id="later", option="item-2:4")
    assert ack.ok
    chosen = fake_slack.wait_for(
        lambda: (h := fake_slack.home("U0ALICE001")) and "Chose" in h.all_text and h, 5, "told"
    )
    assert "Chose item-2:4; the view's state holds ['item-2:4']" in chosen.all_text
    with pytest.raises(LookupError):
        driver.select_in_view(chosen, action_id="later", option="item-9:1")


def test_a_choice_in_an_ephemeral_select_is_the_one_offering_it(
    driver: SlackDriver, fake_slack: FakeSlack
) -> None:
    driver.slash("/kq", "later")
    (shown,) = fake_slack.ephemerals("U0ALICE001")
    ack = driver.select_ephemeral(shown, action_id="later", option="item-2:4")
    assert ack.ok
    told = fake_slack.wait_for(
        lambda: fake_slack.ephemerals("U0ALICE001")[1:], 5, "the answer to the choice"
    )
    assert told[0].text == "Chose item-2:4 in an ephemeral: True"
    with pytest.raises(LookupError):
        driver.select_ephemeral(shown, action_id="later", option="item-9:1")


def test_cancel_closes_the_modal_silently_without_notify_on_close(
    driver: SlackDriver, fake_slack: FakeSlack
) -> None:
    ts = post_card(fake_slack)
    driver.click(CHANNEL, ts, action_id="open_answer")
    view = fake_slack.wait_for_view()
    assert driver.close_view(view) is None
    assert fake_slack.open_views("U0ALICE001") == []


@pytest.fixture
def http_driver(fake_slack: FakeSlack, slack_driver: Callable[..., SlackDriver]):
    with serve_http(build_app(fake_slack)) as url:
        yield slack_driver(url)


@pytest.mark.parametrize("mode", ["stale", "forged", "missing"])
def test_bad_signatures_are_refused_by_bolt(
    mode: str, http_driver: SlackDriver, fake_slack: FakeSlack
) -> None:
    ts = post_card(fake_slack)
    ack = http_driver.click(CHANNEL, ts, value="mongo", delivery=Delivery(signature=mode))  # type: ignore[arg-type]
    assert ack.status == 401
    assert fake_slack.ephemerals() == []


def test_url_verification_echoes_the_challenge(http_driver: SlackDriver) -> None:
    ack = http_driver.url_verification("abc123")
    assert ack.ok and ack.json == {"challenge": "abc123"}


def test_events_retries_carry_slacks_headers(
    http_driver: SlackDriver, fake_slack: FakeSlack
) -> None:
    event = {"type": "app_home_opened", "user": "U0ALICE001", "tab": "home", "channel": "D1"}
    ack = http_driver.send_event(event, delivery=Delivery(retry_num=1, retry_reason="timeout"))
    assert ack.ok
    fake_slack.wait_for_call("views.publish")
