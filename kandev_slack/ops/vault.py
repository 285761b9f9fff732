"""The people's own Kandev tokens, encrypted at rest with ``KANDEV_SLACK_SECRET_KEY``.

A :class:`Vault` is ``cryptography``'s MultiFernet over the keys of that setting: a
comma-separated list of Fernet keys, newest first (``kandev-slack secret-key`` prints a new
one). It seals under the newest key and opens with any of them, so a key rotates without losing
a link: put the new key first, keep the old ones after it, restart; each start re-seals what an
older key sealed (``LinksRepository.reseal_all``), after which the old key may go.

Nothing here ever shows key material or a token: an error names the setting and which of its
keys is bad (1st, 2nd…), never its text.

``cryptography`` (~7 MB of memory with its Rust and OpenSSL bindings) is imported when a vault
is made, so a bot without ``KANDEV_SLACK_SECRET_KEY`` never loads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

#: The setting the keys come from, named by every error.
SECRET_KEY_SETTING = "KANDEV_SLACK_SECRET_KEY"
#: What to run for a key, said wherever one is missing or bad.
NEW_KEY_HELP = "`kandev-slack secret-key` prints a new one"


class VaultError(Exception):
    """The keys are missing or malformed, or no key opens a sealed token (never carries key
    material nor a token)."""


class Vault:
    """Seals and opens tokens with the keys of ``KANDEV_SLACK_SECRET_KEY`` (newest first)."""

    def __init__(self, keys: list[Fernet]) -> None:
        from cryptography.fernet import InvalidToken, MultiFernet

        if not keys:
            raise VaultError(f"{SECRET_KEY_SETTING} holds no key; {NEW_KEY_HELP}")
        self._invalid = InvalidToken
        self._newest = keys[0]
        self._keys = MultiFernet(keys)
        self._count = len(keys)

    @classmethod
    def from_keys(cls, text: str) -> Vault:
        """The vault of a comma-separated list of Fernet keys, newest first (whitespace around
        each is ignored). Raises :class:`VaultError` naming every bad key by its place."""
        from cryptography.fernet import Fernet

        if not text.strip():
            raise VaultError(f"{SECRET_KEY_SETTING} is empty; {NEW_KEY_HELP}")
        parts = [part.strip() for part in text.split(",")]
        keys: list[Fernet] = []
        problems: list[str] = []
        for place, part in enumerate(parts, start=1):
            if not part:
                problems.append(f"its {ordinal(place)} key is empty (a comma too many?)")
                continue
            try:
                keys.append(Fernet(part))
            except (ValueError, TypeError):  # binascii.Error is a ValueError
                problems.append(
                    f"its {ordinal(place)} key is not a Fernet key (44 characters of url-safe "
                    "base64)"
                )
        if problems:
            raise VaultError(f"{SECRET_KEY_SETTING}: {'; '.join(problems)}; {NEW_KEY_HELP}")
        return cls(keys)

    @staticmethod
    def new_key() -> str:
        """A new random key (what ``kandev-slack secret-key`` prints)."""
        from cryptography.fernet import Fernet

        return Fernet.generate_key().decode("ascii")

    def seal(self, token: str) -> str:
        """``token`` encrypted and authenticated under the newest key (ASCII text)."""
        return self._keys.encrypt(token.encode("utf-8")).decode("ascii")

    def open(self, sealed: str) -> str:
        """The token ``sealed`` holds. Raises :class:`VaultError` when no key opens it (sealed
        under a key no longer listed, or altered)."""
        try:
            return self._keys.decrypt(_ascii(sealed)).decode("utf-8")
        except (self._invalid, UnicodeDecodeError):
            raise VaultError(_UNOPENED) from None

    def reseal(self, sealed: str) -> str:
        """``sealed`` encrypted anew under the newest key (MultiFernet.rotate); raises
        :class:`VaultError` when no key opens it."""
        try:
            return self._keys.rotate(_ascii(sealed)).decode("ascii")
        except self._invalid:
            raise VaultError(_UNOPENED) from None

    def sealed_with_newest(self, sealed: str) -> bool:
        """Whether the newest key opens ``sealed`` (then :meth:`reseal` has nothing to do)."""
        try:
            self._newest.decrypt(_ascii(sealed))
        except self._invalid:
            return False
        return True

    def __repr__(self) -> str:
        return f"Vault({self._count} key{'s' if self._count != 1 else ''})"


_UNOPENED = (
    f"no key of {SECRET_KEY_SETTING} opens this token (sealed under a key no longer listed, "
    "or altered)"
)


def _ascii(sealed: str) -> bytes:
    """A sealed token's bytes; text that is not ASCII cannot be one (Fernet refuses it)."""
    return sealed.encode("ascii", errors="replace")


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th … 11th, 12th, 13th … 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else _SUFFIXES.get(n % 10, "th")
    return f"{n}{suffix}"


_SUFFIXES = {1: "st", 2: "nd", 3: "rd"}
