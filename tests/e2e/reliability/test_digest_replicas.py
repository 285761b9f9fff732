"""Two replicas on one PostgreSQL database, both looking for digests due: a person's digest
and a route's channel digest are each sent once at their time (a row per target and local
date claimed atomically with the post's outbox row)."""

from __future__ import annotations

import dataclasses
import time as clock
from datetime import time
from pathlib import Path

import pytest

from kandev_slack.kits.fakeslack import ALICE
from tests.e2e.helpers import MARGIN_S, db_question, start_bot, wait_card
from tests.e2e.test_digest import LEAD_S, digests_in, say, shift_to, wait_digest
from tests.kit.harness import CHANNEL


@pytest.mark.postgres
def test_two_replicas_send_each_digest_once(
    pg_url, bot_factory, seed, fake_slack, slack_driver, tmp_path: Path
):
    fake_slack.add_user(dataclasses.replace(ALICE, tz="Europe/Berlin"))
    config = tmp_path / "routes.toml"
    config.write_text(
        f'[defaults]\nchannel = "{CHANNEL}"\ndigest = "09:00"\ndigest_tz = "Europe/Berlin"\n',
        encoding="utf-8",
    )
    bundle = seed([db_question()], title="Digested on two replicas")
    shift = shift_to(time(9, 0), "Europe/Berlin", lead_s=LEAD_S + 12)  # processes start slower
    env = {
        "KANDEV_SLACK_CONFIG": str(config),
        "DIGEST_CHECK_S": "0.2",
        "DIGEST_CLOCK_SHIFT_S": shift,
    }
    bots = [start_bot(bot_factory, db_url=pg_url, **env) for _ in range(2)]
    driver = slack_driver(bots[0].events_url)
    wait_card(fake_slack, bundle.pending_id)
    assert "set for *09:00*" in say(driver, "digest 09:00")
    dm = fake_slack.ctx.resolve_channel(ALICE.id)
    timeout = LEAD_S + 12 + 10 + MARGIN_S
    mine = wait_digest(fake_slack, dm, timeout)
    assert "Digested on two replicas" in mine.text
    wait_digest(fake_slack, CHANNEL, timeout)
    clock.sleep(2.0)  # both replicas keep looking
    fake_slack.settle(quiet=1.0, timeout=10)
    assert len(digests_in(fake_slack, dm)) == 1
    assert len(digests_in(fake_slack, CHANNEL)) == 1
