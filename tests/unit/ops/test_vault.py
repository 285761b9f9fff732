"""The vault of KANDEV_SLACK_SECRET_KEY: keys newest first, whitespace tolerated; a bad key
named by its place and never shown; a token sealed, opened, resealed under the newest key."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from kandev_slack.ops.vault import Vault, VaultError, ordinal

TOKEN = "kandev_pat_0a1b2c3d_" + "x" * 43


def test_a_new_key_is_a_fernet_key_each_time_another() -> None:
    first, second = Vault.new_key(), Vault.new_key()
    assert first != second
    assert len(first) == 44 and "\n" not in first
    Fernet(first)  # a valid key


def test_a_token_seals_and_opens_and_is_never_in_the_sealed_text() -> None:
    vault = Vault.from_keys(Vault.new_key())
    sealed = vault.seal(TOKEN)
    assert vault.open(sealed) == TOKEN
    assert TOKEN not in sealed and "0a1b2c3d" not in sealed and sealed.isascii()
    assert vault.seal(TOKEN) != sealed  # a fresh IV each time: equal tokens do not show
    assert repr(vault) == "Vault(1 key)"


def test_keys_are_comma_separated_newest_first_with_whitespace_tolerated() -> None:
    old, new = Vault.new_key(), Vault.new_key()
    sealed_old = Vault.from_keys(old).seal(TOKEN)
    vault = Vault.from_keys(f"  {new} ,\n\t{old}\n")
    assert repr(vault) == "Vault(2 keys)"
    assert vault.open(sealed_old) == TOKEN  # an older key still opens
    assert not vault.sealed_with_newest(sealed_old)
    resealed = vault.reseal(sealed_old)
    assert vault.sealed_with_newest(resealed)
    assert Vault.from_keys(new).open(resealed) == TOKEN  # the newest key alone opens it now
    assert Vault.from_keys(new).open(vault.seal("t")) == "t"  # sealed under the newest
    with pytest.raises(VaultError):
        Vault.from_keys(old).open(resealed)


def test_no_key_opens_a_foreign_or_altered_token() -> None:
    vault = Vault.from_keys(Vault.new_key())
    foreign = Vault.from_keys(Vault.new_key()).seal(TOKEN)
    sealed = vault.seal(TOKEN)
    altered = sealed[:-6] + ("A" if sealed[-6] != "A" else "B") + sealed[-5:]
    for bad in (foreign, altered, "", "not a token", "é" * 10):
        with pytest.raises(VaultError, match="no key of KANDEV_SLACK_SECRET_KEY opens"):
            vault.open(bad)
    with pytest.raises(VaultError, match="no key of KANDEV_SLACK_SECRET_KEY opens"):
        vault.reseal(foreign)
    assert not vault.sealed_with_newest(foreign)


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ("", "KANDEV_SLACK_SECRET_KEY is empty; `kandev-slack secret-key` prints a new one"),
        ("   \n", "KANDEV_SLACK_SECRET_KEY is empty"),
        ("{good},", "its 2nd key is empty (a comma too many?)"),
        (",{good}", "its 1st key is empty"),
        ("{good}, {good}, short", "its 3rd key is not a Fernet key (44 characters of url-safe"),
        ("{bad}", "its 1st key is not a Fernet key"),
        ("{good},{good2}," + "{good}," * 8 + "{bad}", "its 11th key is not a Fernet key"),
        ("clé-" + "x" * 40, "its 1st key is not a Fernet key"),
    ],
)
def test_a_bad_key_is_named_by_its_place_never_shown(keys: str, expected: str) -> None:
    good, good2 = Vault.new_key(), Vault.new_key()
    bad = good[:-2] + "!!"  # the right length, not base64
    text = keys.format(good=good, good2=good2, bad=bad)
    with pytest.raises(VaultError) as caught:
        Vault.from_keys(text)
    message = str(caught.value)
    assert expected in message
    assert message.startswith("KANDEV_SLACK_SECRET_KEY")
    for shown in (good, good2, bad, good[:12], bad[:12], "short", "clé"):
        assert shown not in message


def test_every_bad_key_is_named_at_once() -> None:
    with pytest.raises(VaultError) as caught:
        Vault.from_keys("a,,b")
    assert str(caught.value) == (
        "KANDEV_SLACK_SECRET_KEY: its 1st key is not a Fernet key (44 characters of url-safe "
        "base64); its 2nd key is empty (a comma too many?); its 3rd key is not a Fernet key "
        "(44 characters of url-safe base64); `kandev-slack secret-key` prints a new one"
    )


def test_ordinals() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st",
        "111th", "112th",
    ]  # fmt: skip
