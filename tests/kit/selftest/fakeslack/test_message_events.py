"""The driver's message events in Slack's shapes: a reply with a file (``file_share``), a
``/me`` reply (``me_message``), an edit (``message_changed``), a deletion
(``message_deleted``) and a message to the app in its Messages tab (``message.im``)."""

from __future__ import annotations

from typing import Any

from kandev_slack.kits.fakeslack import ALICE, Ack, Delivery, FakeSlack, Kind, SlackDriver

CHANNEL = "C0QUESTION"


class _Recorder:
    """A transport that keeps what would have been delivered."""

    def __init__(self) -> None:
        self.sent: list[tuple[Kind, dict[str, Any]]] = []

    def deliver(
        self,
        kind: Kind,
        payload: dict[str, Any],
        *,
        accepts_response_payload: bool,
        delivery: Delivery,
    ) -> Ack:
        self.sent.append((kind, payload))
        return Ack(200, None, 0.0)


def _driver(fake: FakeSlack) -> tuple[SlackDriver, _Recorder]:
    recorder = _Recorder()
    return SlackDriver(fake, recorder), recorder


def _events(recorder: _Recorder) -> list[dict[str, Any]]:
    assert all(kind == "events_api" for kind, _ in recorder.sent)
    return [payload["event"] for _, payload in recorder.sent]


def test_a_file_and_a_me_reply_have_their_subtypes(fake_slack: FakeSlack) -> None:
    driver, recorder = _driver(fake_slack)
    driver.share_file_in_thread(CHANNEL, "100.000001", "see this", user=ALICE)
    driver.me_in_thread(CHANNEL, "100.000001", "shrugs", user=ALICE)
    shared, me = _events(recorder)
    assert (shared["subtype"], shared["text"], shared["thread_ts"]) == (
        "file_share",
        "see this",
        "100.000001",
    )
    [file] = shared["files"]
    assert file["id"].startswith("F") and file["name"] == "screenshot.png"
    assert file["user"] == ALICE.id and shared["upload"] is True
    assert me["subtype"] == "me_message" and me["user"] == ALICE.id


def test_an_edit_and_a_deletion_name_the_message_as_slack_does(fake_slack: FakeSlack) -> None:
    driver, recorder = _driver(fake_slack)
    _, callback = driver.reply_in_thread(CHANNEL, "100.000001", "2", user=ALICE)
    original = callback["event"]
    _, edited = driver.edit_message(callback, "1")
    driver.edit_message(edited, "PostgreSQL")
    driver.delete_message(callback)
    _, first, second, deleted = _events(recorder)

    assert first["subtype"] == "message_changed" and first["hidden"] is True
    assert first["channel"] == CHANNEL and first["ts"] != original["ts"]
    message = first["message"]
    assert (message["ts"], message["thread_ts"], message["user"], message["text"]) == (
        original["ts"],
        "100.000001",
        ALICE.id,
        "1",
    )
    assert message["edited"] == {"user": ALICE.id, "ts": first["ts"]}
    assert "channel" not in message and first["previous_message"]["text"] == "2"
    assert second["previous_message"]["text"] == "1" and second["message"]["text"] == "PostgreSQL"

    assert deleted["subtype"] == "message_deleted" and deleted["hidden"] is True
    assert deleted["deleted_ts"] == original["ts"] and deleted["channel"] == CHANNEL
    assert deleted["previous_message"]["text"] == "2"


def test_a_message_to_the_app_is_an_im_message_outside_any_thread(fake_slack: FakeSlack) -> None:
    driver, recorder = _driver(fake_slack)
    _, callback = driver.message_app("hello?", user=ALICE)
    [event] = _events(recorder)
    assert event == callback["event"]
    assert event["channel_type"] == "im" and event["channel"].startswith("D")
    assert event["user"] == ALICE.id and "thread_ts" not in event and "subtype" not in event


def test_a_person_s_reply_recorded_in_a_thread_and_its_event() -> None:
    """``post_user_message(thread_ts=…)`` keeps a person's reply in the thread (as Slack's
    ``conversations.replies`` would list it); ``reply_in_thread`` with its ts sends the
    ``message`` event Slack sends for that same reply."""
    fake = FakeSlack()
    parent = fake.post_user_message(CHANNEL, ALICE.id, "the card")
    reply = fake.post_user_message(CHANNEL, ALICE.id, "sqlite", thread_ts=parent.ts)
    driver, recorder = _driver(fake)

    driver.reply_in_thread(CHANNEL, parent.ts, "sqlite", user=ALICE, event={"ts": reply.ts})

    stored = fake.message(CHANNEL, reply.ts)
    assert stored.thread_ts == parent.ts and stored.user == ALICE.id
    assert fake.message(CHANNEL, parent.ts).thread_ts is None
    [event] = _events(recorder)
    assert event["ts"] == reply.ts and event["thread_ts"] == parent.ts
