"""The publisher's fence: a worker that lost an item's lease while it was held up (a freeze, a
slow lookup) makes no Slack call for it and leaves it to its new holder."""

from __future__ import annotations

import threading
import time

from sqlalchemy import update

from kandev_slack.store import Database
from kandev_slack.store.schema import outbox
from kandev_slack.usecases.outbox.publisher import Publisher
from tests.kit.factories import CHANNEL, record_card
from tests.kit.fakes import FakeSlackGateway


def test_a_post_whose_lease_was_taken_over_meanwhile_is_not_sent(
    store: Database, gateway: FakeSlackGateway, publisher: Publisher
) -> None:
    record_card(store, "p1", channel=CHANNEL)
    card = store.cards.get("p1")
    assert card is not None
    publisher.enqueue_post(card)
    [item] = store.outbox.outbox_take(None, 1, "earlier", lease_s=0)
    store.outbox.outbox_note(item.id, "posting")  # an earlier attempt may have reached Slack
    gateway.slow("conversations.history", 1.0)  # the worker is held up looking for it…
    worker = threading.Thread(target=publisher.work_once)
    worker.start()
    deadline = time.monotonic() + 10
    while not gateway.called("conversations.history"):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with store.sql.write() as conn:  # …while its lease ran out and another replica took it
        conn.execute(
            update(outbox)
            .where(outbox.c.id == item.id)
            .values(lease_owner="other", lease_until=store.sql.at(30))
        )
    worker.join(timeout=10)

    assert not worker.is_alive()
    assert gateway.called("chat.postMessage") == []
    taken = store.outbox.outbox_get(item.id)
    assert taken is not None and taken.lease_owner == "other" and taken.status.value == "pending"
    posted = store.cards.get("p1")
    assert posted is not None and posted.ts is None
