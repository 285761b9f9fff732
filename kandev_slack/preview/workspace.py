"""Who and what the preview's Slack holds: its users (one not allowed to answer, so that
permissions show), its channels (one per route), and the routing file the bot is given.

Without a routing file of the team's own the preview writes one: every card goes to
``#agent-questions`` where Ana and Ben may answer and Carol may not; critical questions go to
``#on-call`` (Ben only); reminders and an escalation to ``#leads`` follow, unless turned off.
With the team's file (``KANDEV_SLACK_CONFIG``) its channels are shown, each user it names is
one to act as, and the preview's users belong to every user group it names."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kandev_slack.config.routing import USER_GROUP_ID, USER_ID, Routing
from kandev_slack.config.routing_file import load_routing
from kandev_slack.kits.fakeslack import Channel, FakeSlack, SlackUser

ANA = SlackUser(id="U0PVANA001", name="ana", real_name="Ana Lima", tz="Europe/Lisbon")
BEN = SlackUser(id="U0PVBEN002", name="ben", real_name="Ben Okafor", tz="America/New_York")
CAROL = SlackUser(id="U0PVCAROL3", name="carol", real_name="Carol Diaz", tz="Asia/Tokyo")
USERS = (ANA, BEN, CAROL)
QUESTIONS = Channel(id="C0PVQUESTN", name="agent-questions")
ON_CALL = Channel(id="C0PVONCALL", name="on-call")
LEADS = Channel(id="C0PVLEADS1", name="leads")

FOLLOW_UPS = """remind_after = "3m"
remind_every = "10m"
max_reminders = 2
escalate_after = "10m"
escalate_to = "{leads}"
"""


def routing_text(*, follow_ups: bool = True) -> str:
    """The preview's own routing file."""
    defaults = FOLLOW_UPS.format(leads=LEADS.id) if follow_ups else ""
    return (
        "# Written by `kandev-slack preview`: the preview's own channels and users.\n"
        "[defaults]\n"
        f'channel = "{QUESTIONS.id}"\n'
        f'answerers = ["{ANA.id}", "{BEN.id}"]\n'
        f"{defaults}\n"
        "[[route]]\n"
        'priority = ["critical"]\n'
        f'channel = "{ON_CALL.id}"\n'
        f'answerers = ["{BEN.id}"]\n'
    )


@dataclass
class PreviewWorkspace:
    """What the fake Slack is filled with and what the page shows."""

    routing_file: Path
    channels: list[Channel]
    users: list[SlackUser]
    usergroups: dict[str, list[str]] = field(default_factory=dict)
    #: What a user may do, shown beside their name in the user switcher.
    roles: dict[str, str] = field(default_factory=dict)

    def fill(self, fake: FakeSlack) -> None:
        for channel in self.channels:
            fake.add_channel(channel.id, channel.name)
        for user in self.users:
            fake.add_user(user)
        for group, members in self.usergroups.items():
            fake.set_usergroup(group, members)

    @property
    def names(self) -> dict[str, str]:
        """How mentions of the workspace's users, channels and groups are written."""
        found = {u.id: u.name for u in self.users}
        found.update({c.id: c.name for c in self.channels})
        found.update({g: g.lower() for g in self.usergroups})
        return found


def own_workspace(directory: Path, *, follow_ups: bool = True) -> PreviewWorkspace:
    """The preview's own channels and users, its routing file written into ``directory``."""
    path = directory / "routing.toml"
    path.write_text(routing_text(follow_ups=follow_ups))
    channels = [QUESTIONS, ON_CALL] + ([LEADS] if follow_ups else [])
    roles = {
        ANA.id: f"answers in #{QUESTIONS.name}",
        BEN.id: f"answers in #{QUESTIONS.name} and #{ON_CALL.name}",
        CAROL.id: "may not answer",
    }
    return PreviewWorkspace(path, channels, list(USERS), roles=roles)


def team_workspace(path: Path, default_channel: str | None) -> PreviewWorkspace:
    """The channels and people a team's routing file names (raises RoutingError)."""
    routing = load_routing(path, default_channel)
    ids = _named(routing)
    channels = [Channel(id=c, name=c.lower()) for c in _channels(routing)]
    own = {u.id for u in USERS}
    named_users = [
        SlackUser(id=u, name=u.lower()) for u in sorted(ids) if USER_ID.match(u) and u not in own
    ]
    groups = {g: [ANA.id, BEN.id] for g in sorted(ids) if USER_GROUP_ID.match(g)}
    return PreviewWorkspace(path, channels, [*USERS, *named_users], groups)


def _channels(routing: Routing) -> list[str]:
    targets = [routing.default_followups.escalate_to]
    targets += [rule.followups.escalate_to for rule in routing.rules]
    channels = routing.channels() + [t for t in targets if t and not USER_ID.match(t)]
    return list(dict.fromkeys(channels))


def _named(routing: Routing) -> set[str]:
    """Every user and user-group id the file names (answerers, mentions, escalation)."""
    followups = [routing.default_followups, *(rule.followups for rule in routing.rules)]
    found = set(routing.default_answerers)
    for rule in routing.rules:
        found |= rule.answerers
    for f in followups:
        found |= {*f.mention, *f.escalate_mention}
        if f.escalate_to and USER_ID.match(f.escalate_to):
            found.add(f.escalate_to)
    return found
