"""The prompt of a reply in a card's thread, once Send went through the answer pipeline: the
result replaces the prompt, except when nothing was recorded (busy) — then the reply is given
back and the prompt keeps its buttons."""

from __future__ import annotations

from typing import Any

from bot.cards import thread_reply, words
from bot.slack.tell import ReplyPrompt
from bot.store.thread_replies import ThreadReply
from bot.usecases.interaction_results import Busy, Unrecorded

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


class _Notifier:
    def __init__(self) -> None:
        self.told: list[dict[str, Any]] = []
        self.replaced: list[str] = []

    def tell(self, user: str, text: str, **where: Any) -> bool:
        self.told.append({"user": user, "text": text, **where})
        return True

    def reply(self, url: str, text: str, blocks: Any, *, replace: bool) -> None:
        self.replaced.append(text)


def _prompt(reopened: bool) -> tuple[ReplyPrompt, _Notifier, list[str]]:
    notifier, calls = _Notifier(), []

    def reopen() -> bool:
        calls.append("reopen")
        return reopened

    def ack() -> None:
        calls.append("ack")

    return ReplyPrompt(ack, "https://hooks/r", notifier, REPLY, reopen), notifier, calls  # type: ignore[arg-type]


def test_busy_gives_the_reply_back_and_keeps_the_prompt() -> None:
    for result, said in (
        (Busy(), words.busy_message()),
        (Unrecorded(), words.unrecorded_message()),
    ):
        prompt, notifier, calls = _prompt(reopened=True)
        prompt.now(result)
        assert calls == ["ack", "reopen"]
        assert notifier.replaced == []  # the prompt and its Send button stay
        [told] = notifier.told
        assert (told["user"], told["channel"], told["thread_ts"]) == ("U1", "C1", "100.1")
        assert told["text"] == f"{said} {thread_reply.reply_kept_message()}"


def test_a_reply_that_cannot_be_given_back_has_its_prompt_replaced() -> None:
    prompt, notifier, calls = _prompt(reopened=False)  # cancelled meanwhile
    prompt.now(Busy())
    assert notifier.told == [] and notifier.replaced == [words.busy_message()]
