"""What an interaction ends with (bot/usecases/interactions.py): what a submitted form says,
and the typed results handed to its reply (bot/slack/tell.py maps each to what Slack shows)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.core.clarification import Answer
from bot.usecases.admission import Admitted, Refusal, Unusable
from bot.usecases.claims import ClaimResult
from bot.usecases.snooze import SnoozeResult
from bot.usecases.verdicts import Verdict

# ---- what a submitted form says ----------------------------------------------------------


@dataclass(frozen=True)
class Content:
    """What a submitted form says: the answers, or the rejection's reason."""

    answers: tuple[Answer, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class FieldErrors:
    """The form stays open with these messages (block_id -> safe mrkdwn, from the form's own
    reader in bot/cards/modals.py) under its fields; nothing was recorded."""

    errors: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ForeignInputs:
    """Inputs of another bundle than the one the form names (tampered with)."""

    detail: str


# ---- the results -------------------------------------------------------------------------


@dataclass(frozen=True)
class Busy:
    """The lane is full: nothing was recorded, the person may try again in a moment."""


@dataclass(frozen=True)
class Unrecorded:
    """The bot's database refused to record it (unreachable, or its file lost): nothing was
    recorded or sent; the person may try again once the bot is back to normal."""


@dataclass(frozen=True)
class Refused:
    """Not admitted (audited): ``refusal`` says why; ``unusable``: the payload could not even
    be read as a request."""

    refusal: Refusal
    unusable: Unusable | None = None


#: How an interaction ends: not admitted, busy, the form's field errors, admitted to open a
#: form or a view (:class:`~bot.usecases.admission.Admitted`), a submission's verdict, or a
#: claim's change ("I'm on it"), or a snooze's.
Result = Busy | Unrecorded | Refused | FieldErrors | Admitted | Verdict | ClaimResult | SnoozeResult
