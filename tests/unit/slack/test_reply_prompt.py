"""The prompt of a reply in a card's thread, once Send went through the answer pipeline: the
result replaces the prompt, except when nothing was recorded (busy) — then the reply is given
back and the prompt keeps its buttons."""

from __future__ import annotations

from typing import Any

from kandev_slack.cards import ids, words
from kandev_slack.core.clarification import Option, Question
from kandev_slack.slack.presenters.tell import ReplyPrompt
from kandev_slack.store.cards.thread_replies import ThreadReply
from kandev_slack.surfaces import thread_reply
from kandev_slack.usecases.answering.interactions import Busy, Unrecorded
from kandev_slack.usecases.answering.verdicts import Verdict

REPLY = ThreadReply(
    id="r1",
    message_key="C1:100.2",
    pending_id="p1",
    channel="C1",
    thread_ts="100.1",
    user_id="U1",
    question_id="db",
    option_id="q1_opt2",
    text="SQLite",
)

QUESTION = Question(
    question_id="db",
    title="Database",
    prompt="Which?",
    options=[
        Option(option_id="q1_opt1", label="MySQL"),
        Option(option_id="q1_opt2", label="SQLite"),
    ],
)


class _Notifier:
    def __init__(self) -> None:
        self.told: list[dict[str, Any]] = []
        self.replaced: list[str] = []
        self.replaced_blocks: list[Any] = []

    def tell(self, user: str, text: str, **where: Any) -> bool:
        self.told.append({"user": user, "text": text, **where})
        return True

    def reply(self, url: str, text: str, blocks: Any, *, replace: bool) -> bool:
        self.replaced.append(text)
        self.replaced_blocks.append(blocks)
        return True


def make_prompt(reopened: bool) -> tuple[ReplyPrompt, _Notifier, list[str]]:
    notifier, calls = _Notifier(), []

    def reopen() -> bool:
        calls.append("reopen")
        return reopened

    def ack() -> None:
        calls.append("ack")

    prompt = ReplyPrompt(ack, "https://hooks/r", notifier, REPLY, reopen, QUESTION)  # type: ignore[arg-type]
    return prompt, notifier, calls


def test_busy_gives_the_reply_back_and_keeps_the_prompt() -> None:
    for result, said in (
        (Busy(), words.busy_message()),
        (Unrecorded(), words.unrecorded_message()),
    ):
        prompt, notifier, calls = make_prompt(reopened=True)
        prompt.now(result)
        assert calls == ["ack", "reopen"]
        assert notifier.replaced == []  # the prompt and its Send button stay
        [told] = notifier.told
        assert (told["user"], told["channel"], told["thread_ts"]) == ("U1", "C1", "100.1")
        assert told["text"] == f"{said} {thread_reply.reply_kept_message()}"


def test_a_reply_that_cannot_be_given_back_has_its_prompt_replaced() -> None:
    prompt, notifier, calls = make_prompt(reopened=False)  # cancelled meanwhile
    prompt.now(Busy())
    assert notifier.told == [] and notifier.replaced == [words.busy_message()]


def test_not_recorded_after_sending_gives_the_reply_back_with_its_send_button() -> None:
    """Kandev unreachable once the answer was recorded ("Sending…" shown): the prompt comes
    back with Send and Cancel under why, and the reply may be sent again."""
    prompt, notifier, calls = make_prompt(reopened=True)
    prompt.recorded()
    prompt.later(Verdict("not_recorded", cause="unreachable"))
    assert calls == ["ack", "reopen"]
    assert notifier.replaced[0].startswith("Sending")
    blocks = notifier.replaced_blocks[-1]
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert [(b["action_id"], b["value"]) for b in buttons] == [
        (ids.ACTION_REPLY_SEND, "r1"),
        (ids.ACTION_REPLY_CANCEL, "r1"),
    ]
    shown = notifier.replaced[-1]
    assert "not* recorded" in shown and thread_reply.reply_kept_message() in shown
    assert "Send “SQLite” as your answer to *Database*?" in shown


def test_not_recorded_on_a_reply_cancelled_meanwhile_just_says_so() -> None:
    prompt, notifier, calls = make_prompt(reopened=False)
    prompt.later(Verdict("not_recorded", cause="unreachable"))
    assert "not* recorded" in notifier.replaced[-1]
    assert all(b["type"] != "actions" for b in notifier.replaced_blocks[-1])


def test_a_reply_refused_until_connected_or_relinked_shows_the_connect_button() -> None:
    """A route that requires people's own Kandev accounts: the prompt is replaced by why,
    with the Connect button (issue 32)."""
    from kandev_slack.usecases.answering.admission import Refusal
    from kandev_slack.usecases.answering.interactions import Refused

    for told in (
        lambda p: p.now(Refused(Refusal("connect"))),
        lambda p: p.later(Verdict("relink")),
    ):
        prompt, notifier, _calls = make_prompt(reopened=False)
        told(prompt)
        buttons = [
            e for b in notifier.replaced_blocks[-1] if b["type"] == "actions" for e in b["elements"]
        ]
        assert [b["action_id"] for b in buttons] == [ids.ACTION_CONNECT]
