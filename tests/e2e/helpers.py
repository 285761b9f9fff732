"""Shared helpers for the card end-to-end tests: find a bundle's card, read its outcome line,
count its posts, wait for Kandev to record a resolution."""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from typing import Any

from kandev_slack.cards import ids
from kandev_slack.kits.fakeslack import (
    Ack,
    CallRecord,
    Ephemeral,
    FakeSlack,
    PostedMessage,
    SlackDriver,
    SlackUser,
    ViewRecord,
    build_state_values,
    find_element,
    iter_elements,
    overflow_option,
    payloads,
)
from tests.kit.harness import (
    CHANNEL,
    BotProcess,
    InProcessBot,
    KandevServer,
    QuestionSpec,
    question,
)

#: The poll interval the card tests run the bot with (seconds, KANDEV_POLL_INTERVAL).
POLL_S = 1.5
#: Slack of time on top of a promised bound, for a loaded 2-core machine.
MARGIN_S = 2.5
OPEN_IN_KANDEV = "Open in Kandev"
#: ``<!date^…|fallback>`` tokens follow the outcome line after " · ".
_DATE_SUFFIX = re.compile(r"\s*·\s*<!date\^[^>]*>\s*$")


#: A waiting question card's quiet "More" overflow, in order (its only control beside the
#: answers; "Open in Kandev" is a link in its grey line).
QUIET_ROW = ["👀 I'm on it", "Skip…", "Reject…", "Conversation"]


def db_question(qid: str = "db") -> QuestionSpec:
    return question(
        qid,
        "Database",
        "Which database should we use?",
        ("PostgreSQL", "Relational, strong consistency"),
        ("MongoDB", "Document store"),
    )


def distinct_question(n: int, qid: str = "db") -> QuestionSpec:
    """A question no other ``n`` asks (its title and prompt name ``n``): an identical one
    waiting in the same channel is posted in the first card's thread (issue 33), so a test
    of something else that wants one channel card per bundle asks distinct ones."""
    return question(
        qid,
        f"Database #{n}",
        f"Which database should service #{n} use?",
        ("PostgreSQL", "Relational, strong consistency"),
        ("MongoDB", "Document store"),
    )


def card_posts(fake: FakeSlack, pending_id: str) -> list[CallRecord]:
    """Every successful chat.postMessage that carried ``pending_id`` in its metadata."""
    return [
        call
        for call in fake.calls("chat.postMessage")
        if call.ok
        and ((call.params.get("metadata") or {}).get("event_payload") or {}).get("pending_id")
        == pending_id
    ]


def wait_card(
    fake: FakeSlack, pending_id: str, timeout: float = POLL_S + MARGIN_S, channel: str = CHANNEL
) -> PostedMessage:
    """The card of ``pending_id`` in ``channel`` (current state) once it is posted."""
    call = fake.wait_for(
        lambda: next(iter(card_posts(fake, pending_id)), None),
        timeout,
        f"the card of {pending_id}",
    )
    assert call.params.get("channel") == channel, call.params.get("channel")
    return fake.message(channel, str(call.response["ts"]))


def card_updates(fake: FakeSlack, ts: str) -> list[CallRecord]:
    return [c for c in fake.calls("chat.update") if c.ok and c.params.get("ts") == ts]


def outcome_updates(fake: FakeSlack, ts: str) -> list[CallRecord]:
    """The card's edits from the first that shows how it ended on: one when it was edited to
    its outcome once and never again. Edits while it waited (a claim, the line of identical
    questions asked by other agents) are not among them."""
    updates = card_updates(fake, ts)
    ended = [i for i, c in enumerate(updates) if outcome_line(c.params.get("blocks") or [])]
    return updates[ended[0] :] if ended else []


def outcome_line(message: PostedMessage | list[dict[str, Any]]) -> str | None:
    """The card's outcome line without its bold marks and trailing date token (None while
    pending); from a message or from the blocks of a recorded chat.update."""
    blocks = message if isinstance(message, list) else message.blocks
    for block in blocks:
        if block.get("block_id") == ids.BLOCK_OUTCOME:
            text = _DATE_SUFFIX.sub("", (block.get("text") or {}).get("text", ""))
            return text[1:-1] if text.startswith("*") and text.endswith("*") else text
    return None


def buttons(message: PostedMessage | ViewRecord) -> list[str]:
    """The visible labels of every button, in order."""
    return [ref.label for ref in iter_elements(message.blocks) if ref.type == "button"]


def more_options(message: PostedMessage | ViewRecord) -> list[str]:
    """The labels of the options of every overflow ("More") of the message, in order."""
    return [
        str(option["text"]["text"])
        for ref in iter_elements(message.blocks)
        if ref.type == "overflow"
        for option in ref.element.get("options", [])
    ]


def act(
    driver: SlackDriver, channel: str, ts: str, label: str, *, user: SlackUser | str, **kw: Any
) -> Ack:
    """What a person does to use the control labelled ``label`` on a card: click the button,
    or open the "More" overflow and pick the option (Take over, Reject…, Conversation…)."""
    message = driver.fake.message(channel, ts)
    if label in buttons(message):
        return driver.click(channel, ts, text=label, user=user, **kw)
    return driver.choose(channel, ts, text=label, user=user, **kw)


def skip(driver: SlackDriver, channel: str, ts: str, *, user: SlackUser | str) -> Ack:
    """Skip from a card: "Skip…" in its overflow, then "Skip it" on the confirm it asks."""
    person = driver.user(user)
    asked = len(driver.fake.ephemerals(user=person.id))
    assert driver.choose(channel, ts, text="Skip…", user=person).status == 200
    confirm = driver.fake.wait_for(
        lambda: next(
            (
                e
                for e in driver.fake.ephemerals(user=person.id)[asked:]
                if "Skip it" in str(e.blocks)
            ),
            None,
        ),
        description="the confirm of Skip…",
    )
    return driver.click_ephemeral(confirm, text="Skip it")


def wait_outcome(
    fake: FakeSlack, ts: str, prefix: str, timeout: float = POLL_S + MARGIN_S
) -> PostedMessage:
    """The card at ``ts`` once its outcome line starts with ``prefix``."""

    def edited() -> PostedMessage | None:
        message = fake.message(CHANNEL, ts)
        line = outcome_line(message)
        return message if line is not None and line.startswith(prefix) else None

    try:
        return fake.wait_for(edited, timeout, f"outcome {prefix!r} on card {ts}")
    except TimeoutError as exc:
        raise AssertionError(
            f"card {ts} never showed {prefix!r}; outcome line: "
            f"{outcome_line(fake.message(CHANNEL, ts))!r}"
        ) from exc


def assert_terminal_controls(message: PostedMessage) -> None:
    """A resolved card keeps only the "Open in Kandev" link button."""
    assert buttons(message) == [OPEN_IN_KANDEV], buttons(message)
    link = next(ref for ref in iter_elements(message.blocks) if ref.type == "button")
    assert link.element.get("url", "").startswith("https://kandev.example.test/t/")


def wait_final(
    server: KandevServer, task_id: str, pending_id: str, status: str, timeout: float = 10.0
) -> dict[str, Any]:
    """Kandev's record of the bundle once every question reads ``status``."""
    deadline = time.monotonic() + timeout
    while True:
        final = server.final_status(task_id, pending_id)
        if final["status"] == status or time.monotonic() > deadline:
            return final
        time.sleep(0.1)


def response_of(final: dict[str, Any], question_id: str) -> dict[str, Any]:
    """The recorded answer of one question: {question_id, selected_options, custom_text}."""
    return final["questions"][question_id]["response"] or {}


def wait_ephemeral(fake: FakeSlack, user: str, contains: str, timeout: float = 10.0) -> Ephemeral:
    return fake.wait_for_ephemeral(user, lambda e: contains in e.all_text, timeout=timeout)


def slash_reply(
    driver: SlackDriver,
    text: str,
    contains: str,
    *,
    user: SlackUser,
    channel: str | None = None,
    timeout: float = 10.0,
) -> Ephemeral:
    """Run ``/kandev-questions text`` (in the person's DM unless ``channel``); the reply they
    see once it reads ``contains``. The reply is the ack's body when it was ready within the
    command's budget (10 ms), else it follows the empty ack as an ephemeral message: both are
    what the product does (a loaded machine takes the second way), and both show the same."""
    fake = driver.fake
    seen = len(fake.ephemerals(user=user.id))
    ack = driver.slash("/kandev-questions", text, user=user, channel=channel or user.id)
    assert ack.status == 200, ack
    return fake.wait_for(
        lambda: next(
            (e for e in fake.ephemerals(user=user.id)[seen:] if contains in e.all_text), None
        ),
        timeout,
        f"the reply to /kandev-questions {text} for {user.id} saying {contains!r}",
    )


def open_modal(fake: FakeSlack, callback_id: str, after: int, timeout: float = 10.0) -> ViewRecord:
    """The first modal with ``callback_id`` opened after the call index ``after``."""
    call = fake.wait_for_call(
        "views.open",
        lambda c: (c.params.get("view") or {}).get("callback_id") == callback_id and c.ok,
        timeout=timeout,
        after=after,
    )
    view_id = call.response["view"]["id"]
    return fake.view(view_id)


#: The titles of the view a submitted form turns into while Kandev is asked.
SENDING = ("Sending…", "Rejecting…")


def _title(definition: dict[str, Any]) -> str:
    return str((definition.get("title") or {}).get("text", ""))


def assert_sending(ack: Ack) -> None:
    """A submitted form acked as "Sending…": recorded, how it ended follows in the modal."""
    shown = ack.json or {}
    assert ack.status == 200 and shown.get("response_action") == "update", ack.body
    assert _title(shown["view"]) in SENDING, ack.body


def wait_form_result(fake: FakeSlack, view_id: str, timeout: float = 10.0) -> ViewRecord:
    """The submitted modal once ``views.update`` replaced its "Sending…" with how it ended
    (sent, not sent and why, or the form again with Kandev's refusal under a field)."""

    def ended() -> ViewRecord | None:
        view = fake.view(view_id)
        done = view.history and _title(view.history[-1]) in SENDING
        return view if done and _title(view.definition) not in SENDING else None

    return fake.wait_for(ended, timeout, f"the result in modal {view_id}")


def wait_in_form(fake: FakeSlack, view_id: str, contains: str, timeout: float = 10.0) -> ViewRecord:
    """The submitted modal once it shows ``contains`` (by its ack or a later views.update)."""
    return fake.wait_for(
        lambda: (view := fake.view(view_id)).is_open and contains in view.all_text and view,
        timeout,
        f"{contains!r} in modal {view_id}",
    )


def input_blocks(view: ViewRecord) -> dict[str, dict[str, Any]]:
    """The view's input blocks by block_id."""
    return {b["block_id"]: b for b in view.blocks if b.get("type") == "input"}


def choice_and_text_blocks(view: ViewRecord) -> list[tuple[str, str]]:
    """Per question, in order: (choice block_id, free-text block_id). In the answer form a
    question's free-text field is only shown once its "Other…" is picked (see pick_other)."""
    choice_prefix, text_prefix = ids.MODAL_INPUT_PREFIXES
    choices = [b for b in input_blocks(view) if b.startswith(choice_prefix)]
    texts = [b for b in input_blocks(view) if b.startswith(text_prefix)]
    if not choices:  # the Other answer form of a question without options
        return [(choice_prefix + t.removeprefix(text_prefix), t) for t in texts]
    pairs = [(c, text_prefix + c.removeprefix(choice_prefix)) for c in choices]
    assert set(texts) <= {t for _c, t in pairs}, (choices, texts)
    return pairs


def pick_other(
    driver: SlackDriver, fake_slack: FakeSlack, view: ViewRecord, choice_block: str
) -> ViewRecord:
    """Pick "Other…" in an answer form's question; the form as updated with that question's
    free-text field."""
    driver.pick_in_form(view, block_id=choice_block, option=ids.OTHER_VALUE)
    choice_prefix, text_prefix = ids.MODAL_INPUT_PREFIXES
    text_block = text_prefix + choice_block.removeprefix(choice_prefix)

    def shown() -> ViewRecord | None:
        current = fake_slack.view(view.id)
        return current if text_block in input_blocks(current) else None

    return fake_slack.wait_for(shown, timeout=10.0, description=f"the field {text_block}")


def click_payload(
    driver: SlackDriver,
    channel: str,
    ts: str,
    *,
    text: str,
    user: SlackUser | str,
    message: PostedMessage | None = None,
) -> dict[str, Any]:
    """The block_actions payload of one click on the button labelled ``text`` of the card at
    (channel, ts), as shown in ``message`` (default: its current version)."""
    fake = driver.fake
    shown = message or fake.message(channel, ts)
    person = driver.user(user)
    try:
        ref, chosen = find_element(shown.blocks, text=text, types=frozenset({"button"})), None
    except LookupError:  # an option of the card's "More" overflow
        ref, chosen = overflow_option(shown.blocks, text)
    return payloads.block_actions(
        driver.ws,
        person,
        container={
            "type": "message",
            "message_ts": ts,
            "channel_id": channel,
            "is_ephemeral": False,
        },
        actions=[payloads.action_item(ref, chosen)],
        trigger_id=fake.issue_trigger(person.id),
        response_url=fake.issue_response_url(channel, person.id, ts),
        channel=driver.ws.channels[channel],
        message=shown.to_slack(include_metadata=False),
        state_values=build_state_values(shown.blocks, None, enforce_client_rules=False),
    )


def click_stale(
    driver: SlackDriver, channel: str, ts: str, *, text: str, user: SlackUser | str
) -> Ack:
    """Click a button of the card's *first* version, as a person whose Slack client still shows
    the card as it was posted (the buttons are gone from the current version)."""
    current = driver.fake.message(channel, ts)
    first = current.versions[0] if current.versions else current.to_slack()
    stale = dataclasses.replace(current, text=first["text"], blocks=first["blocks"])
    payload = click_payload(driver, channel, ts, text=text, user=user, message=stale)
    return driver.transport.deliver(
        "interactive", payload, accepts_response_payload=False, delivery=driver.delivery
    )


def start_bot(
    bot_factory: Callable[..., BotProcess] | Callable[..., InProcessBot], **env: str
) -> BotProcess | InProcessBot:
    """The bot (HTTP mode unless ``mode=`` says otherwise) polling every ``POLL_S`` seconds:
    ``bot_factory`` (a process) or ``app_factory`` (in this process, HTTP mode)."""
    env.setdefault("KANDEV_POLL_INTERVAL", str(POLL_S))
    return bot_factory(**env)
