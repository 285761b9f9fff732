"""Who the fake workspace is: team, app, bot, tokens, channels, users and user groups."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SlackUser:
    """A human in the fake workspace (what `users.info` and interaction payloads describe)."""

    id: str
    name: str
    real_name: str = ""
    tz: str = "Europe/Berlin"
    is_bot: bool = False
    #: The person's own team: None for the workspace's; another organisation's team id for a
    #: Slack Connect member of a shared channel (users.info and payloads then name it).
    team_id: str | None = None
    #: A guest: multi-channel (``is_restricted``) or single-channel (``is_ultra_restricted``).
    is_restricted: bool = False
    is_ultra_restricted: bool = False

    def payload_user(self, team_id: str) -> dict[str, str]:
        """The `user` object of interactive payloads (``team_id``: the workspace's)."""
        team = self.team_id or team_id
        return {"id": self.id, "username": self.name, "name": self.name, "team_id": team}


@dataclass(frozen=True)
class Channel:
    id: str
    name: str
    is_private: bool = False
    is_im: bool = False
    user: str | None = None  # for IM channels: the other member


ALICE = SlackUser(id="U0ALICE001", name="alice", real_name="Alice Liddell")
BOB = SlackUser(id="U0BOB00002", name="bob", real_name="Bob Builder")


@dataclass
class Workspace:
    """The identity the fake presents. Defaults are stable so tests can hard-code them."""

    team_id: str = "T0FAKETEAM"
    team_name: str = "Fake Team"
    team_domain: str = "fake-team"
    app_id: str = "A0FAKEAPP1"
    bot_id: str = "B0FAKEBOT1"
    bot_user_id: str = "U0FAKEBOT1"
    bot_name: str = "kandev"
    bot_token: str = "xoxb-0000000001-fake-bot-token"
    app_token: str = "xapp-1-A0FAKEAPP1-0000000001-fake-app-token"
    signing_secret: str = "fake-signing-secret-0123456789abcdef"
    verification_token: str = "fakeVerificationToken"
    channels: dict[str, Channel] = field(
        default_factory=lambda: {
            "C0QUESTION": Channel(id="C0QUESTION", name="agent-questions"),
            "C0PLATFORM": Channel(id="C0PLATFORM", name="platform"),
        }
    )
    users: dict[str, SlackUser] = field(default_factory=lambda: {u.id: u for u in (ALICE, BOB)})
    usergroups: dict[str, list[str]] = field(default_factory=dict)
    #: Members of a channel (conversations.members); a channel not listed has every user (and
    #: the bot). A private channel whose list leaves the bot out is hidden from it, as in Slack
    #: (``channel_not_found``).
    channel_members: dict[str, list[str]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"https://{self.team_domain}.slack.com/"

    def team_payload(self) -> dict[str, str]:
        return {"id": self.team_id, "domain": self.team_domain}
