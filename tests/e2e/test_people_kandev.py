"""The bot on a Kandev with several people (``kandev_people``, issue 32): its token is the
harness admin's, so it posts the questions of every workspace its account can read (its own,
Eve's where it is a viewer) and never those of Dan's private workspace."""

from __future__ import annotations

import pytest

from kandev_slack.kits.fakeslack import FakeSlack
from tests.e2e.helpers import card_posts, distinct_question, start_bot, wait_card
from tests.kit.harness import Cast, Seeder


@pytest.mark.parametrize("factory", ["people_app_factory", "people_bot_factory"])
def test_the_bot_posts_what_its_account_reads_and_nothing_of_a_private_workspace(
    factory: str,
    request: pytest.FixtureRequest,
    kandev_people: Cast,
    people_seed: Seeder,
    fake_slack: FakeSlack,
) -> None:
    """In this process (``people_app_factory``) and as a process (``people_bot_factory``)."""
    cast = kandev_people
    start_bot(request.getfixturevalue(factory))
    private = people_seed.by(cast.dan)([distinct_question(1)], workspace_id=cast.dan_ws)
    own = people_seed([distinct_question(2)], title="The bot's own workspace")
    viewed = people_seed.by(cast.eve)([distinct_question(3)], workspace_id=cast.eve_ws)

    wait_card(fake_slack, own.pending_id)
    wait_card(fake_slack, viewed.pending_id)

    # Dan's bundle was waiting before the other two, so the reads that found them would have
    # found it too had the bot's account been able to see it.
    assert card_posts(fake_slack, private.pending_id) == []
