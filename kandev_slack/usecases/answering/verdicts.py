"""What one person's attempt to resolve a bundle from Slack is, and how it ended: the
:class:`Verdict` kinds with the data the words need (kandev_slack/slack/presenters/said.py words
them; no
use-case says anything itself)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import KW_ONLY, dataclass, field
from typing import Literal, get_args

from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Action, Card, CardOutcome
from kandev_slack.core.pending import Found
from kandev_slack.store import Submission
from kandev_slack.store.records import SubmissionContent

VerdictKind = Literal[
    "won",
    "lost",
    "undecided",  # a resolution like this one won, maybe someone else's: credited "in Kandev"
    "already_answered",
    "ended",
    "invalid",
    "unavailable",
    "not_recorded",  # nothing reached Kandev's record: the card stays open for another try
    "unconfirmed",  # may have been recorded: left unfinished, crash recovery settles it
    "unknown_bundle",
    "forbidden",  # crash recovery: the person may no longer answer
    "duplicate",
    # The person's own Kandev account (kandev_slack/usecases/identity.py); the card unchanged:
    "not_visible",  # their account cannot see the task (the bot can: it still waits)
    "relink",  # Kandev refused their token: their link is broken, nothing was sent
    # Crash recovery: their account can no longer send it (nothing re-sent):
    "viewer",  # their role in the workspace may not answer any more
    "connect",  # it was sent with their account, and they have none linked now
]

#: Why nothing reached Kandev's record: it could not be reached, refused the bot's token, or
#: turned the call down before doing anything.
NotRecordedCause = Literal["unreachable", "auth", "refused"]


@dataclass(frozen=True)
class Attempt:
    """One person's attempt to answer or reject a bundle from Slack."""

    pending_id: str
    user_id: str
    action: Action
    source: str  # for the audit: slack:button, slack:modal:<via>, recovery
    answers: tuple[Answer, ...] = ()
    reason: str = ""
    via: str = "card"  # where it was clicked (admission's Via), for the metrics
    view_id: str = ""  # the modal showing "Sending…" (not part of the key)
    #: The Kandev account it is sent with: the person's own (their Kandev user id), or ""
    #: for the bot's (not part of the key; crash recovery re-sends with the same).
    kandev_user: str = ""

    @classmethod
    def of(cls, sub: Submission, *, source: str) -> Attempt:
        """The attempt a stored submission recorded."""
        content = sub.content
        return cls(
            pending_id=sub.pending_id,
            user_id=sub.user,
            action=content.action,
            source=source,
            answers=tuple(content.answers),
            reason=content.reason,
            view_id=content.view_id,
            kandev_user=content.kandev_user,
        )

    def content(self) -> SubmissionContent:
        action = self.action
        if (
            action == "view"
            or action == "claim"
            or action == "release"
            or action == "snooze"
            or action == "unsnooze"
        ):
            raise ValueError(f"a {action} is not a submission")  # nothing goes to Kandev
        return SubmissionContent(
            action=action,
            answers=list(self.answers),
            reason=self.reason,
            view_id=self.view_id,
            kandev_user=self.kandev_user,
        )

    def key(self) -> str:
        """Identifies this submission: the same person sending the same thing twice."""
        body = {
            "p": self.pending_id,
            "u": self.user_id,
            "a": self.action,
            "answers": sorted(
                (a.question_id, sorted(a.selected_options), a.custom_text.strip())
                for a in self.answers
            ),
            "r": self.reason.strip(),
        }
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Problem:
    """Why a submission is invalid: ``detail`` (Kandev's message), what the bot ``found`` wrong
    before sending (a kind: the presenter words it), or a text ``length`` over Kandev's limit.
    ``legacy``: a submission finished by an older version kept what the person was told,
    worded; repeated as it is."""

    detail: str = ""
    length: int | None = None
    legacy: str = ""
    found: Found | None = None

    def encode(self) -> str:
        """Kept with the finished submission, to repeat it to a resubmission."""
        return json.dumps({"detail": self.detail, "length": self.length, "found": self.found})

    @classmethod
    def decode(cls, stored: str) -> Problem:
        try:
            data = json.loads(stored)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return cls(legacy=stored)
        found = data.get("found")
        return cls(
            detail=str(data.get("detail") or ""),
            length=data.get("length"),
            found=found if found in get_args(Found) else None,
        )


@dataclass(frozen=True)
class Verdict:
    """What happened, with what the words for the person need
    (kandev_slack/slack/presenters/tell.py says it;
    nothing to say for ``won``: the card says it all).

    ``outcome``: who resolved it with what (``lost``, ``undecided``, ``already_answered``);
    ``cause`` and ``retry_after``: why nothing was recorded (``not_recorded``); ``problem``:
    what Kandev (or the bot) found wrong (``invalid``); ``checking``: a ``duplicate`` whose
    first is still unconfirmed; ``gave_up``: crash recovery stopped re-sending it."""

    kind: VerdictKind
    card: Card | None = field(default=None, compare=False)
    _: KW_ONLY
    action: Action = "answer"
    outcome: CardOutcome | None = None
    cause: NotRecordedCause | None = None
    retry_after: float | None = None
    problem: Problem | None = None
    checking: bool = False
    gave_up: bool = False


def repeat_of(verdict: Verdict) -> str:
    """What a finished submission keeps to repeat to a resubmission: an invalid one's problem
    (as data, never worded)."""
    if verdict.kind == "invalid" and verdict.problem is not None:
        return verdict.problem.encode()
    return ""
