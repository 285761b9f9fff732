"""Everything the bot says to one person: ephemeral messages, modal field errors, notes.

Pure. A card's own outcome line lives in kandev_slack/cards/wording.py; the messages here that
report an
outcome build on it, so the card and the person are told the same thing.

A feature with words of its own keeps them beside its rendering: approvals (approval.py), thread
replies (thread_reply.py), claims (claims.py), snoozes (snooze.py), identical questions (groups.py).
"""

from __future__ import annotations

import math
from typing import Literal

from kandev_slack.cards.ids import COMMAND
from kandev_slack.cards.limits import KANDEV_MAX_TEXT as MAX_TEXT
from kandev_slack.cards.text import escape_url, fit_escaped, one_line
from kandev_slack.cards.wording import (
    MAX_KANDEV_MESSAGE,
    Action,
    answers_summary,
    outcome_line,
    who_resolved,
)
from kandev_slack.core.clarification import SKIPPED_REASON, Bundle
from kandev_slack.core.domain import CardOutcome, CardState
from kandev_slack.core.pending import Found


def _what(action: Action) -> str:
    return {"reject": "rejection", "approve": "choice"}.get(action, "answer")


def _item(action: Action) -> str:
    """What the person acted on: a question, or an approval's request."""
    return "request" if action == "approve" else "question"


# ---- outcomes ------------------------------------------------------------------------------


def _yours(action: Action) -> str:
    if action in ("claim", "release"):
        return "Nobody needs to be on it any more."
    if action in ("snooze", "unsnooze"):
        return "Nothing to snooze any more."
    return f"Your {_what(action)} was not sent."


def lost_message(bundle: Bundle, winner: CardOutcome, *, action: Action = "answer") -> str:
    """For the person whose answer lost the race: who won, where, with what; theirs was not
    sent. The words match the card's outcome line ("Answered in Kandev first: …")."""
    who = who_resolved(winner) if winner.via == "slack" else None
    if winner.state is CardState.REJECTED:
        skipped = winner.reason.strip() == SKIPPED_REASON
        verb, what = ("skipped", "Skipped") if skipped else ("rejected", "Rejected")
        done = f"{who} {verb} this question first in Slack" if who else _first(winner, what)
        return f"{done}. {_yours(action)}"
    summary = answers_summary(bundle, winner.answers)
    done = f"{who} answered first in Slack" if who else _first(winner, "Answered")
    won = f"{done}: {summary}." if summary else f"{done}."
    return f"{won} {_yours(action)}"


def _first(winner: CardOutcome, what: str) -> str:
    """``Answered in Kandev first`` / ``Rejected in Slack first`` (nobody named)."""
    where = "in Slack" if winner.via == "slack" else "in Kandev"
    return f"{what} {where} first"


def undecided_message(bundle: Bundle, recorded: CardOutcome, *, action: Action = "answer") -> str:
    """For a person whose answer or rejection may have arrived after someone else's like it:
    what Kandev recorded, and that it may not have been theirs (never "sent")."""
    if recorded.state is CardState.REJECTED:
        what = "Kandev recorded a rejection of this question"
    else:
        summary = answers_summary(bundle, recorded.answers)
        what = f"Kandev recorded the answer {summary}" if summary else "Kandev recorded an answer"
    yours = "your rejection and your reason" if action == "reject" else "your answer"
    return (
        f"{what}, but someone else may have answered first: the bot cannot tell whether "
        f"{yours} reached the agent. Open the question in Kandev to see what it got."
    )


def already_answered_message(bundle: Bundle, outcome: CardOutcome) -> str:
    """For someone who resubmits what they already got recorded."""
    if outcome.state is CardState.REJECTED:
        verb = "skipped" if outcome.reason.strip() == SKIPPED_REASON else "rejected"
        return f"You already {verb} this question; nothing more was sent."
    summary = answers_summary(bundle, outcome.answers)
    done = f"You already answered this: {summary}." if summary else "You already answered this."
    return f"{done} Nothing more was sent."


def ended_message() -> str:
    return (
        "The agent no longer needs this answer: the question ended (cancelled, expired or the "
        "agent moved on). Nothing was sent."
    )


def unavailable_message() -> str:
    return (
        "Kandev no longer shows this question to the bot (it was removed, or the bot's token "
        "cannot see it), so nothing was sent."
    )


NotRecordedCause = Literal["unreachable", "auth", "refused"]


def not_recorded_message(
    *,
    action: Action = "answer",
    cause: NotRecordedCause = "unreachable",
    retry_after: float | None = None,
) -> str:
    """Nothing reached Kandev's record (it could not be reached, or refused the call before
    doing anything): the question is still open and the person may send it again."""
    what, item = _what(action), _item(action)
    if cause == "auth":
        return (
            f"Your {what} was *not* recorded: Kandev refused the bot's access token. The "
            f"{item} is still open — ask whoever runs kandev-slack to check its KANDEV_TOKEN, "
            "then try again."
        )
    if cause == "refused" and retry_after is not None:
        return (
            f"Your {what} was *not* recorded: Kandev is busy and asked the bot to wait. The "
            f"{item} is still open — please try again in {_seconds(retry_after)}."
        )
    if cause == "refused":
        return (
            f"Your {what} was *not* recorded: Kandev turned the request down with an error "
            f"before doing anything with it. The {item} is still open — please try again in a "
            "moment; if it keeps failing, tell whoever runs kandev-slack."
        )
    return (
        f"Your {what} was *not* recorded: Kandev cannot be reached right now. The {item} is "
        "still open — please try again in a moment."
    )


def unconfirmed_message(*, action: Action = "answer") -> str:
    """The call may have reached Kandev, but its reply was lost: the bot keeps checking."""
    what = _what(action)
    return (
        f"Kandev did not confirm your {what}: it may well have been recorded, but the reply "
        "was lost on the way. The bot keeps checking with Kandev and the card will show the "
        "result — no need to send it again."
    )


def still_checking_message(*, action: Action = "answer") -> str:
    """The same submission again while the first is still waiting for Kandev's word."""
    what = _what(action)
    return (
        f"The bot is still waiting for Kandev to confirm this same {what} from you; the card "
        "will show the result."
    )


def gave_up_message(*, action: Action = "answer", recorded: bool | None) -> str:
    """Crash recovery stops re-sending: what Kandev shows (``recorded`` None: unknown)."""
    what, item = _what(action), _item(action)
    if recorded is False:
        return (
            f"Your {what} was *not* recorded: the bot could not get it to Kandev after several "
            f"tries, and Kandev shows the {item} still open. Please send it again."
        )
    return (
        f"The bot could not find out from Kandev whether your {what} was recorded (Kandev did "
        "not answer for several minutes) and has stopped checking. The card will show the "
        f"result once Kandev reports it; if the {item} is still open then, please answer "
        "again."
    )


def _seconds(value: float) -> str:
    whole = max(1, math.ceil(value))
    return f"{whole} second" if whole == 1 else f"{whole:,} seconds"


def invalid_message(kandev_message: str, *, action: Action = "answer") -> str:
    what = _what(action)
    detail = fit_escaped(one_line(kandev_message), MAX_KANDEV_MESSAGE)[0]
    return (
        f"Kandev did not accept your {what}: {detail}"
        if detail
        else (f"Kandev did not accept your {what}.")
    )


#: What the bot found wrong before sending (a kind's local validation,
#: kandev_slack/kinds/<kind>/spec.py), said as Kandev's own refusals are (``invalid_message``).
FOUND_DETAILS: dict[Found, str] = {
    "not_answer_or_reject": "a question is answered or rejected",
    "unanswered": "every question needs an answer",
    "not_an_option": "that option is not part of this question",
    "not_offered": "that option was not offered by the agent",
}


def found_detail(found: Found) -> str:
    return FOUND_DETAILS[found]


def not_a_card_message() -> str:
    return "“Reject agent question” only works on Kandev question cards posted by this app."


def resolved_already_message(
    bundle: Bundle, outcome: CardOutcome, *, action: Action = "answer"
) -> str:
    """For a click on a card the bot already knows is resolved: the same words as if Kandev had
    been asked (the winner and their choice, or that the question ended / is unavailable)."""
    if outcome.state in (CardState.ANSWERED, CardState.REJECTED):
        return lost_message(bundle, outcome, action=action)
    if outcome.state is CardState.UNAVAILABLE:
        return unavailable_message()
    return ended_message()


def too_long_message(length: int) -> str:
    return f"Your text is {length:,} characters; Kandev accepts at most {MAX_TEXT:,}."


def _may(approval: bool) -> str:
    """What a person may do with the item: answer questions, or decide approvals."""
    return "decide this agent's approvals" if approval else "answer this agent's questions"


def forbidden_message(*, approval: bool = False) -> str:
    return (
        f"You are not on the list of people who may {_may(approval)}. "
        "Ask someone on the team that owns this workspace."
    )


def unverifiable_message(*, approval: bool = False) -> str:
    return (
        f"Nothing was sent: the bot could not check with Slack that you may {_may(approval)} "
        "(who is in its channel, and of which organisation). Please try again in a moment."
    )


# ---- whose Kandev account (kandev_slack/usecases/identity.py) ----------------------------

#: Where a person mints the token they link (Kandev's own words for the page).
MINT_WHERE = "Kandev → Settings → Account → API tokens"


def connect_message(*, approval: bool = False) -> str:
    what = "approvals are decided" if approval else "questions are answered"
    return (
        f"Nothing was sent: here {what} with your own Kandev account, and yours is not "
        "connected. Connect it (the button, or `/kandev-questions connect`) and what you "
        "clicked is offered to you again for 10 minutes."
    )


def reconnect_message() -> str:
    return (
        "Nothing was sent: Kandev no longer accepts the token you connected (revoked, "
        "expired, or your Kandev user disabled). Connect your Kandev account again "
        "(`/kandev-questions connect`)."
    )


def viewer_message(*, approval: bool = False) -> str:
    return (
        "Nothing was sent: you are a viewer in this task's Kandev workspace, and viewers "
        f"can't {'approve' if approval else 'answer'} in Kandev. Ask the workspace's owner to "
        "make you a collaborator."
    )


def not_visible_message() -> str:
    return (
        "You can't see this task in Kandev (your Kandev account is not a member of its "
        "workspace), so nothing was sent. The card stays open for others."
    )


def identity_unreachable_message() -> str:
    return (
        "Nothing was sent: the bot could not ask Kandev what your account may do there. "
        "Please try again in a moment."
    )


# ---- connecting a Kandev account (kandev_slack/usecases/answering/linking.py) --------------

#: How long the token a person mints should live (Kandev lets a token never expire; one that
#: does limits what a leaked token can do). Said, never enforced: Kandev's token says.
SUGGESTED_EXPIRY = "90 days"
#: What a Kandev personal access token looks like (the input's placeholder).
TOKEN_PLACEHOLDER = "kandev_pat_…"
#: A Kandev account's name and email on one line, at most this many characters each.
MAX_ACCOUNT_NAME = 100


def _account(display_name: str, email: str) -> str:
    """*Ana* (ana@example.com), escaped (Kandev's names are anyone's words)."""
    name = fit_escaped(one_line(display_name) or "your Kandev user", MAX_ACCOUNT_NAME)[0]
    mail = fit_escaped(one_line(email), MAX_ACCOUNT_NAME)[0]
    return f"*{name}* ({mail})" if mail else f"*{name}*"


def connect_intro() -> str:
    return (
        "Answer and approve here as *yourself* in Kandev: paste a personal access token of "
        f"your Kandev account. Mint one in *{MINT_WHERE}*, with an expiry (say "
        f"{SUGGESTED_EXPIRY}). Revoking it in Kandev disconnects you here."
    )


def connect_replaces_note(display_name: str, email: str, *, broken: bool) -> str:
    """In the connect modal of a person already linked: a new token replaces theirs."""
    was = "were connected" if broken else "are connected"
    return f"You {was} as {_account(display_name, email)}: a new token replaces the old one."


def connect_problem_message(problem: str) -> str:
    """Why a token was not linked (a field error of the connect modal): nothing was stored."""
    match problem:
        case "malformed":
            return (
                "That is not a Kandev personal access token (it starts with `kandev_pat_` and "
                f"is 63 characters long). Mint one in {MINT_WHERE}."
            )
        case "refused":
            return (
                "Kandev does not accept this token: it was revoked or has expired, or your "
                f"Kandev user is disabled. Mint a new one in {MINT_WHERE}. Nothing was saved."
            )
        case "unreachable":
            return (
                "The bot could not reach Kandev to check this token. Nothing was saved: "
                "please try again in a moment."
            )
        case "no_key":
            return (
                "This bot cannot keep Kandev tokens: its operator has not set "
                "KANDEV_SLACK_SECRET_KEY. Nothing was saved: please ask them to set it."
            )
        case "busy":
            return "The bot is busy right now. Nothing was saved: please try again in a moment."
    return (
        "The bot could not check or keep this token just now. Nothing was saved: please try "
        "again in a moment."
    )


def checking_token_message() -> str:
    return "Checking your token with Kandev…"


def connected_message(display_name: str, email: str, *, replaced: bool = False) -> str:
    forgot = " Your earlier token is forgotten." if replaced else ""
    return (
        f"Connected to Kandev as {_account(display_name, email)}. Your answers and approvals "
        f"here now reach Kandev as you.{forgot}"
    )


def account_message(display_name: str, email: str) -> str:
    """App Home and ``/kandev-questions whoami`` for a linked person."""
    return f"Connected to Kandev as {_account(display_name, email)}"


def broken_link_message(display_name: str, email: str) -> str:
    return (
        f"⚠️ Your Kandev link no longer works: Kandev refused the token you connected as "
        f"{_account(display_name, email)} (revoked, expired, or your Kandev user disabled). "
        "Reconnect with a new token."
    )


def not_connected_message() -> str:
    return (
        "Your Slack account is not connected to a Kandev account. Connect it to answer and "
        f"approve here as yourself in Kandev (`{COMMAND} connect`)."
    )


def disconnected_message(*, had: bool) -> str:
    if not had:
        return "You were not connected to Kandev: there is nothing to disconnect."
    return (
        "Disconnected: the bot forgot your Kandev token. Your answers here no longer reach "
        "Kandev as you."
    )


def linking_unused_message() -> str:
    return (
        "Nobody connects a Kandev account here: every route of this bot answers with the "
        "bot's own Kandev account."
    )


def parked_offer_message(what: str, item: str, *, opens_form: bool) -> str:
    """The click a person made before connecting, offered once they connected."""
    label = fit_escaped(one_line(what), 200)[0]
    asked = fit_escaped(one_line(item) or "an agent's question", 300)[0]
    ask = "open the form now?" if opens_form else "send it now?"
    return f"Before you connected, you clicked *{label}* on _{asked}_ — {ask}"


def parked_gone_message() -> str:
    return (
        "Nothing was sent: that click is no longer kept (10 minutes passed, or it was sent "
        "or discarded already)."
    )


def parked_discarded_message() -> str:
    return "Discarded: nothing was sent."


def parked_sent_message() -> str:
    return "Sent. ✅"


def parked_sending_message() -> str:
    return "Sending…"


def parked_form_opened_message() -> str:
    return "The form is open."


def wrong_channel_message(channel: str, *, approval: bool = False) -> str:
    if approval:
        return f"This approval can only be decided from its card in <#{channel}>."
    return f"This question can only be answered from its card in <#{channel}>."


def unknown_bundle_message() -> str:
    return (
        "This message is not an open agent question the bot knows about "
        "(it may have been answered and cleaned up)."
    )


def tampered_message() -> str:
    return "That button or form was not made by this app for this question; nothing was sent."


def recovered_message(outcome_message: str, *, won: bool) -> str:
    """What the person hears about an answer the bot finished sending after a restart."""
    if won:
        return (
            "Your answer was recorded in Kandev (the bot restarted while sending it); "
            "the card shows it."
        )
    return outcome_message


# ---- interactions that cannot go ahead ---------------------------------------------------


def malformed_message() -> str:
    return "Slack sent this app a request it could not understand; nothing was sent to Kandev."


def unknown_action_message() -> str:
    return (
        "This button is not (or no longer) handled by this app, so nothing was sent. "
        "If it is on an old message, use the current card or `/kandev-questions`."
    )


def unknown_form_message() -> str:
    return "This form is not (or no longer) handled by this app; nothing was sent."


def unknown_command_message(command: str) -> str:
    return f"`{_quote(command, 40)}` is not a command this app handles; try `/kandev-questions`."


# ---- the listing ---------------------------------------------------------------------------


def filter_too_long_message(length: int, limit: int) -> str:
    return (
        f"That filter is {length:,} characters long; use at most {limit:,} — a workspace name "
        f"or a few words from the task title or the questions. `{COMMAND} help` explains."
    )


def empty_filter_term_message(kind: str) -> str:
    return (
        f"`{kind}:` needs a value, e.g. `{kind}:{'database' if kind == 'label' else 'critical'}`."
        f" `{COMMAND} help` explains."
    )


def unknown_priority_message(value: str, known: tuple[str, ...]) -> str:
    return (
        f"“{fit_escaped(value, 40)[0]}” is not a Kandev priority; use one of "
        + ", ".join(f"`priority:{p}`" for p in known)
        + "."
    )


def kandev_unreachable_message(kandev_url: str) -> str:
    return (
        f"⚠️ Kandev cannot be reached at {escape_url(kandev_url)} right now, so I cannot list "
        "what is waiting. The question cards in Slack are unchanged; please try again in a "
        "minute."
    )


def kandev_auth_message() -> str:
    return (
        "⚠️ Kandev refused the bot's access token, so I cannot list what is waiting. Ask "
        "whoever runs kandev-slack to check its KANDEV_TOKEN."
    )


def kandev_failed_message(detail: str) -> str:
    shown = fit_escaped(one_line(detail), 300)[0]
    return (
        "⚠️ Kandev answered in a way I did not expect, so I cannot list what is waiting right "
        f"now ({shown}). Please try again in a minute."
    )


def closed_card_message(outcome: CardOutcome, bundle: Bundle) -> str:
    """The Reject shortcut on a resolved card: how it ended; nothing is sent."""
    return f"This question is already closed: {outcome_line(outcome, bundle)}. Nothing to reject."


def tampered_next_message() -> str:
    return f"That button is not one this app made. Run `{COMMAND}` again."


def unusable_message(kind: str, *, form: bool) -> str:
    """For a payload the bot cannot use: a value it never made, a broken request, or a
    button / form / shortcut it does not handle."""
    if kind in ("unknown_action", "unknown_shortcut"):
        return unknown_action_message()
    if kind == "unknown_form":
        return unknown_form_message()
    if kind == "tampered" or form:
        return tampered_message()
    return malformed_message()


def unrecorded_message() -> str:
    return (
        "Your answer was *not* recorded and nothing was sent: the bot cannot write to its "
        "database right now. Please try again later, or answer in Kandev."
    )


def busy_message() -> str:
    return (
        "The bot is busy with other answers right now (Kandev is slow to reply), so nothing was "
        "sent. Please try again in a moment."
    )


# ---- a submitted form, while and after it is sent ------------------------------------------


def sending_title(action: Action) -> str:
    """The title of the view a submitted form turns into while it is on its way to Kandev."""
    return "Rejecting…" if action == "reject" else "Sending…"


def sending_message(action: Action) -> str:
    return (
        f"Sending your {_what(action)} to the agent… Kandev's reply shows here in a moment. "
        "You may close this: the card shows the result, and you are told if it was not sent."
    )


def sent_message(action: Action) -> str:
    """What a form shows once Kandev took the answer or rejection (the card shows it too)."""
    if action == "reject":
        return "⛔ Rejected: the agent is told its question was rejected, with your reason."
    if action == "approve":
        return "✅ Sent: the agent has your choice (the card shows it)."
    return "✅ Sent: the agent has your answer."


def already_sent_message() -> str:
    """The same form delivered again by Slack after it was sent: the card tells the rest."""
    return "This form was already sent; the card shows how it ended."


def result_title(kind: str, action: Action = "answer") -> str:
    """The title of a submitted form showing how it ended (a verdict's kind): what happened —
    "Answered", "Rejected", "Not sent"…"""
    if kind == "won":
        return {"reject": "Rejected", "approve": "Chosen"}.get(action, "Answered")
    titles = {
        "already_answered": "Already sent",
        "duplicate": "Already sent",
        "unconfirmed": "Not confirmed yet",
        "undecided": "Maybe not sent",
    }
    return titles.get(kind, "Not sent")


def form_not_opened_message() -> str:
    return "Slack did not open the form in time; please click again."


def _quote(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"
