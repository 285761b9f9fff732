"""A command beyond what an approval's full view holds goes to the card's thread, whole, in
consecutive code-block replies through the outbox: once, however often it is asked for."""

from __future__ import annotations

from datetime import timedelta

from kandev_slack.core.approval import Approval, ToolAction, ToolOption
from kandev_slack.core.domain import NewCard, TaskInfo
from kandev_slack.kinds.approval.cards.view import fits_view
from kandev_slack.store import Database
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.usecases.views.whole_text import WholeText
from tests.kit.factories import CHANNEL, NOW
from tests.kit.fakes import FakeSlackGateway


def approval(command: str) -> Approval:
    return Approval(
        task_id="t-1",
        session_id="s-1",
        request_id="r-1",
        pending_id="p-1",
        created_at=NOW - timedelta(seconds=5),
        action=ToolAction(type="command", command=command, cwd="/srv"),
        options=(ToolOption(option_id="reject_once", name="Reject", kind="reject_once"),),
    )


def posted(store: Database, publisher: Publisher, item: Approval):
    assert store.cards.record_card(NewCard(item, TaskInfo(task_id="t-1", title="Deploy"), CHANNEL))
    card = store.cards.get(item.item_id)
    assert card is not None
    publisher.enqueue_post(card)
    while publisher.work_once():
        pass
    card = store.cards.get(item.item_id)
    assert card is not None and card.ts
    return card


def replies(gateway: FakeSlackGateway) -> list[dict]:
    return gateway.called("chat.postMessage:reply")


def test_a_command_beyond_the_full_view_is_posted_whole_in_the_thread_once(
    store: Database, publisher: Publisher, gateway: FakeSlackGateway
) -> None:
    command = "".join(f"echo line {n} && <&> `x` 👍\n" for n in range(2000))
    item = approval(command)
    assert not fits_view(item)
    card = posted(store, publisher, item)
    whole = WholeText(store.outbox)

    assert whole.in_thread(card) and whole.in_thread(card)  # asked twice: enqueued once
    while publisher.work_once():
        pass
    sent = replies(gateway)
    assert len(sent) > 1 and all(r["thread_ts"] == card.ts for r in sent)
    keys = [f"whole:{card.pending_id}:{n + 1}" for n in range(len(sent))]
    assert [r["key"] for r in sent] == keys
    shown = "".join(r["text"].split("\n```\n", 1)[1][: -len("\n```")] for r in sent)
    unescaped = shown.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    assert unescaped.replace("\u200b", "") == command
    assert all(len(r["text"]) <= 4000 for r in sent)


def test_a_command_the_full_view_holds_is_not_posted(
    store: Database, publisher: Publisher, gateway: FakeSlackGateway
) -> None:
    card = posted(store, publisher, approval("rm -rf build"))
    assert not WholeText(store.outbox).in_thread(card)
    while publisher.work_once():
        pass
    assert replies(gateway) == []
