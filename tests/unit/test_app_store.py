"""The composition root opens the store with the vault of KANDEV_SLACK_SECRET_KEY and, once at
start-up, seals every token anew under its newest key (a key rotation completes)."""

from __future__ import annotations

from pathlib import Path

from kandev_slack.app import _open_store
from kandev_slack.config.settings import load_settings
from kandev_slack.ops.vault import Vault
from kandev_slack.store import Database

TOKEN = "kandev_pat_0a1b2c3d_" + "t" * 43


def settings_for(tmp_path: Path, keys: str | None):
    env = {
        "SLACK_BOT_TOKEN": "xoxb-1-2-bot",
        "SLACK_SIGNING_SECRET": "signing",
        "KANDEV_SLACK_CHANNEL": "C0AGENTS",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.db'}",
    }
    if keys is not None:
        env["KANDEV_SLACK_SECRET_KEY"] = keys
    return load_settings(env)


def test_a_start_with_a_new_key_first_reseals_every_token(tmp_path: Path) -> None:
    old, new = Vault.new_key(), Vault.new_key()
    with _open_store(settings_for(tmp_path, old)) as store:
        store.links.link("U0ANA00001", "kd-ana", "Ana", "ana@example.com", TOKEN)
    with _open_store(settings_for(tmp_path, f"{new},{old}")) as store:
        link = store.links.get("U0ANA00001")
        assert link is not None and link.token == TOKEN
    # the old key may go now: nothing was left sealed under it
    with Database(f"sqlite:///{tmp_path / 'bot.db'}", vault=Vault.from_keys(new)) as store:
        link = store.links.get("U0ANA00001")
        assert link is not None and link.token == TOKEN and not link.broken


def test_without_a_key_the_store_opens_and_links_read_broken(tmp_path: Path) -> None:
    with _open_store(settings_for(tmp_path, Vault.new_key())) as store:
        store.links.link("U0ANA00001", "kd-ana", "Ana", "ana@example.com", TOKEN)
    with _open_store(settings_for(tmp_path, None)) as store:
        link = store.links.get("U0ANA00001")
        assert link is not None and link.broken and link.token == ""
