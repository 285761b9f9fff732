"""A thread reply's Send refused by the identity step (a person acting with their own Kandev
account, kandev_slack/usecases/identity.py): when Kandev could not be asked what their account
may do, nothing was sent and the same reply may simply be sent again in a moment — the reply is
given back and its prompt keeps its buttons; a refusal that will not pass by itself (their role,
what their account sees) ends the prompt."""

from __future__ import annotations

from kandev_slack.slack.presenters import said as saying
from kandev_slack.surfaces import thread_reply
from kandev_slack.usecases.answering.admission import Refusal
from kandev_slack.usecases.answering.interactions import Refused
from tests.unit.slack.test_reply_prompt import make_prompt


def test_kandev_not_answering_about_their_account_gives_the_reply_back() -> None:
    prompt, notifier, calls = make_prompt(reopened=True)

    prompt.now(Refused(Refusal("unreachable")))

    assert calls == ["ack", "reopen"]
    assert notifier.replaced == []  # the prompt and its Send button stay
    [told] = notifier.told
    assert (told["user"], told["channel"], told["thread_ts"]) == ("U1", "C1", "100.1")
    said = saying.refusal(Refusal("unreachable"))
    assert told["text"] == f"{said} {thread_reply.reply_kept_message()}"


def test_a_refusal_that_will_not_pass_by_itself_ends_the_prompt() -> None:
    for kind in ("viewer", "not_visible", "forbidden"):
        prompt, notifier, calls = make_prompt(reopened=True)
        prompt.now(Refused(Refusal(kind)))  # type: ignore[arg-type]
        assert calls == ["ack"], kind
        assert notifier.replaced == [saying.refusal(Refusal(kind))]  # type: ignore[arg-type]
        assert notifier.told == []
