"""The bot's settings for acting as people (issue 32), with people already linked: what the
Connect modal leaves in the store, written before the bot starts (a bot process cannot be
reached into)."""

from __future__ import annotations

from pathlib import Path

from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database
from tests.kit.harness import CHANNEL, Person


def linked_settings(tmp_path: Path, routes: str, links: dict[str, Person]) -> dict[str, str]:
    """The bot's settings — a routing file (``[defaults]`` in ``CHANNEL``, ``identity =
    "linked"``, then ``routes``), a secret key, its database — with ``links`` (Slack user →
    Kandev person) already in its store. Pass them to ``start_bot``."""
    key = Vault.new_key()
    url = f"sqlite:///{tmp_path / 'linked.db'}"
    with Database(url, vault=Vault.from_keys(key)) as store:
        for slack_user, person in links.items():
            store.links.link(
                slack_user, person.user_id, person.display_name, person.email, person.token
            )
    config = tmp_path / "routes.toml"
    config.write_text(
        f'[defaults]\nchannel = "{CHANNEL}"\nidentity = "linked"\n{routes}', encoding="utf-8"
    )
    return {"db_url": url, "KANDEV_SLACK_CONFIG": str(config), "KANDEV_SLACK_SECRET_KEY": key}
