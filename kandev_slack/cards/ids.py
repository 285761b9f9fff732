"""Every identifier Slack echoes back to us, defined once: action ids, callback ids, block ids,
and the typed codecs for button values and modal ``private_metadata``."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kandev_slack.cards.limits import MAX_BUTTON_VALUE, MAX_OPTION_VALUE, MAX_PRIVATE_METADATA
from kandev_slack.core.clarification import Question
from kandev_slack.core.snooze import SNOOZE_HOURS

# ---- card buttons (block_actions) ------------------------------------------------------------
ACTION_ANSWER_OPTION = "kq_option"  # one-click option button; rendered as "kq_option:<index>"
ACTION_OTHER = "kq_other"  # "Other answer…" (one-question bundles)
ACTION_ANSWER_MODAL = "kq_answer"  # "Answer…" (multi-question bundles)
ACTION_REJECT = "kq_reject"  # "Reject…"
ACTION_SKIP = "kq_skip"  # "Skip": rejects at once, without asking for a reason
ACTION_OPEN = "kq_open"  # "Open in Kandev" (a URL button; Slack still sends an action)
ACTION_REPLY_SEND = "kq_reply_send"  # a thread reply's "Send" (value: the kept reply's id)
ACTION_REPLY_CANCEL = "kq_reply_cancel"  # a thread reply's "Cancel" (value: the same id)
ACTION_CONVERSATION = "kq_conversation"  # "Conversation" (card, listing, App Home)
ACTION_CLAIM = "kq_claim"  # "I'm on it" / "Take over" (a waiting card's quiet row)
ACTION_RELEASE = "kq_release"  # "Release" (the claim's holder)
ACTION_SNOOZE = "kq_snooze"  # "Snooze…" (a static_select: Home items and DM cards)
ACTION_UNSNOOZE = "kq_unsnooze"  # "Unsnooze" (a snoozed Home item, a snoozed DM card)
ACTION_ANSWER_ALL = "kq_answer_all"  # "Send to all 2" (value: the answered card's bundle)
ACTION_ANSWER_ALL_NO = "kq_answer_all_no"  # "No thanks" on that offer (the same value)
#: The quiet "More" overflow of a waiting card (I'm on it / Take over / Release, Skip…,
#: Reject…, Conversation): its chosen option's value is a :class:`MoreValue`.
ACTION_MORE = "kq_more_menu"
ACTION_SKIP_CONFIRM = "kq_skip_confirm"  # "Skip it" on the confirm of Skip… (a SkipConfirmValue)
ACTION_SKIP_KEEP = "kq_skip_keep"  # "Keep" on that confirm: it goes away, nothing is sent
ACTION_OPTION_PATTERN = re.compile(rf"^{ACTION_ANSWER_OPTION}:\d+$")  # for app.action(...)


def option_action_id(index: int) -> str:
    return f"{ACTION_ANSWER_OPTION}:{index}"


# ---- modal inputs (view_submission state.values[block_id][action_id]) ------------------------
ACTION_CHOICE = "kq_choice"  # radio_buttons / static_select of one question
ACTION_TEXT = "kq_text"  # "or your own answer" plain_text_input of one question
ACTION_REASON = "kq_reason"  # reject reason plain_text_input

# ---- modal callback ids (view_submission; no modal asks for view_closed) ------------------
CALLBACK_ANSWER = "kq_answer_modal"
CALLBACK_OTHER = "kq_other_modal"
CALLBACK_REJECT = "kq_reject_modal"
CALLBACK_RESULT = "kq_result_modal"
CALLBACK_CONVERSATION = "kq_conversation_modal"  # read-only; its "Answer…" pushes the form
SHORTCUT_REJECT = "reject_question"  # message shortcut callback_id (manifest.yml)
COMMAND = "/kandev-questions"  # the slash command (manifest.yml)
ACTION_NEXT = "kq_list_next"  # the listing's "Next page" button
ACTION_PREVIOUS = "kq_list_previous"  # its "Previous page" button (same value, backwards)

# ---- block ids ------------------------------------------------------------------------------
BLOCK_TITLE = "kq_title"
BLOCK_META = "kq_meta"
BLOCK_CLAIM = "kq_claim"  # "👀 @ana is on it (since 10:02)"
BLOCK_PAST = "kq_past"  # the last answer to the same question
#: An item of a digest ("kq_digest:<n>"): its "Answer…" is on a message that is not a card, so
#: it names its item as a listing's does (by the button's value).
BLOCK_DIGEST = "kq_digest:"
BLOCK_GROUP = "kq_group"  # "Also asked by 2 other agents: …"
BLOCK_OUTCOME = "kq_outcome"
BLOCK_CONTEXT = "kq_context"
BLOCK_ACTIONS = "kq_actions"
BLOCK_MORE = "kq_more"  # the secondary row: Reject…, Conversation, Open in Kandev
BLOCK_REASON = "kq_reason"
BLOCK_NOTICE = "kq_notice"
_QUESTION = "kq_q"
_OPTIONS = "kq_opts"
_CHOICE = "kq_choice"
_TEXT = "kq_text"
_MAX_ID_IN_BLOCK = 200
MODAL_INPUT_PREFIXES = (f"{_CHOICE}:", f"{_TEXT}:")  # block ids of per-question modal inputs


def _question_token(question_id: str) -> str:
    """The question id itself when short and plain; otherwise a stable digest of it."""
    if len(question_id) <= _MAX_ID_IN_BLOCK and re.fullmatch(r"[A-Za-z0-9_.\-]*", question_id):
        return question_id
    return "#" + hashlib.sha256(question_id.encode()).hexdigest()[:24]


def _block(prefix: str, index: int, question: Question) -> str:
    block_id = f"{prefix}:{index}:{_question_token(question.question_id)}"
    return block_id


def question_block_id(index: int, question: Question) -> str:
    return _block(_QUESTION, index, question)


def options_block_id(index: int, question: Question) -> str:
    return _block(_OPTIONS, index, question)


def choice_block_id(index: int, question: Question) -> str:
    """Block id of the option input of question ``index`` (encodes its question id)."""
    return _block(_CHOICE, index, question)


def text_block_id(index: int, question: Question) -> str:
    """Block id of the free-text input of question ``index`` (encodes its question id)."""
    return _block(_TEXT, index, question)


def option_value(question: Question, index: int) -> str:
    """The value of option ``index`` in a modal input: its option id, or ``#<index>`` when the
    id cannot serve (too long for Slack's 150 characters, empty, starting with ``#``, or a
    duplicate). Values are unique within the question by construction."""
    option_id = question.options[index].option_id
    earlier = {o.option_id for o in question.options[:index]}
    usable = 0 < len(option_id) <= MAX_OPTION_VALUE and not option_id.startswith("#")
    return option_id if usable and option_id not in earlier else f"#{index}"


#: The answer form's "Other" choice: the person writes their own answer (never an option's
#: value: those are option ids not starting with ``#``, or ``#<index>``).
OTHER_VALUE = "#other"


def option_from_value(question: Question, value: str) -> str | None:
    """The option id a modal input value stands for, or None when it is not of this question."""
    for index, option in enumerate(question.options):
        if option_value(question, index) == value:
            return option.option_id
    return None


# ---- codecs --------------------------------------------------------------------------------


class CodecError(ValueError):
    """A button value or private_metadata that we did not produce (or that is corrupt)."""


class _Codec(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    def _encode(self, limit: int, what: str) -> str:
        encoded = self.model_dump_json(by_alias=True, exclude_defaults=True)
        if len(encoded) > limit:
            raise CodecError(f"{what} would be {len(encoded)} characters; Slack allows {limit}")
        return encoded

    @classmethod
    def _decode(cls, raw: str | None, what: str):
        if not raw:
            raise CodecError(f"empty {what}")
        try:
            return cls.model_validate(json.loads(raw))
        except (json.JSONDecodeError, ValidationError, TypeError) as exc:
            raise CodecError(f"not a kandev-slack {what}: {raw[:80]!r}") from exc


class ButtonValue(_Codec):
    """What a card button carries: the bundle, and for option buttons the question and option."""

    pending_id: str = Field(alias="p", min_length=1)
    question_id: str = Field(default="", alias="q")
    option_id: str = Field(default="", alias="o")
    #: The "Conversation" button (its value differs from the "Answer…" button beside it).
    conversation: bool = Field(default=False, alias="v")

    def encode(self) -> str:
        """Compact JSON, at most 2000 characters (raises CodecError otherwise)."""
        return self._encode(MAX_BUTTON_VALUE, "button value")


def parse_button_value(raw: str | None) -> ButtonValue:
    """Decode a button ``value``; raises CodecError on anything we did not produce."""
    return ButtonValue._decode(raw, "button value")


#: What an option of the "More" overflow does (the same use-cases as the old buttons).
MoreChoice = Literal["claim", "release", "skip", "reject", "conversation"]


class MoreValue(_Codec):
    """What an option of a card's "More" overflow carries: the item and what to do."""

    choice: MoreChoice = Field(alias="a")
    pending_id: str = Field(alias="p", min_length=1)

    def encode(self) -> str:
        """Compact JSON, at most 150 characters (an option's value; raises CodecError)."""
        return self._encode(MAX_OPTION_VALUE, "overflow value")


def parse_more_value(raw: str | None) -> MoreValue:
    """Decode a "More" option's ``value``; raises CodecError on anything we did not produce."""
    return MoreValue._decode(raw, "overflow value")


class SkipConfirmValue(_Codec):
    """What "Skip it" on the confirm of Skip… carries: the item and the card it was asked on
    (the confirm is an ephemeral message, which does not name the card)."""

    pending_id: str = Field(alias="p", min_length=1)
    channel: str = Field(default="", alias="c")
    ts: str = Field(default="", alias="t")

    def encode(self) -> str:
        """Compact JSON, at most 2000 characters (raises CodecError otherwise)."""
        return self._encode(MAX_BUTTON_VALUE, "skip confirm value")


def parse_skip_confirm_value(raw: str | None) -> SkipConfirmValue:
    return SkipConfirmValue._decode(raw, "skip confirm value")


class AnswerAllValue(_Codec):
    """What the buttons of the offer to send a won answer to the others carry: the answered
    card's bundle and exactly the bundles the offer named (Send answers those, no others)."""

    pending_id: str = Field(alias="p", min_length=1)
    members: tuple[str, ...] = Field(alias="m", min_length=1)

    def encode(self) -> str:
        """Compact JSON, at most 2000 characters (raises CodecError otherwise)."""
        return self._encode(MAX_BUTTON_VALUE, "answer-all value")


def parse_answer_all_value(raw: str | None) -> AnswerAllValue:
    """Decode an offer button's ``value``; raises CodecError on anything we did not produce
    (an offer made before the value named its bundles: a plain :class:`ButtonValue`)."""
    return AnswerAllValue._decode(raw, "answer-all value")


class SnoozeValue(_Codec):
    """What a "Snooze…" option carries: the item and the length in hours (1, 4 or 24);
    ``group``: a group row's select (the item is the row's first: every item of its group that
    the person may see is snoozed, found again at click time — never a list from the payload)."""

    pending_id: str = Field(alias="p", min_length=1)
    hours: int = Field(alias="h")
    group: bool = Field(default=False, alias="g")

    def encode(self) -> str:
        """Compact JSON, at most 150 characters (an option's value; raises CodecError)."""
        return self._encode(MAX_OPTION_VALUE, "snooze value")


def parse_snooze_value(raw: str | None) -> SnoozeValue:
    """Decode a "Snooze…" option's ``value``; raises CodecError on anything we did not produce
    (a length that is not one the select offers included)."""
    value = SnoozeValue._decode(raw, "snooze value")
    if value.hours not in SNOOZE_HOURS:
        raise CodecError(f"not a snooze length: {value.hours!r}")
    return value


ModalOrigin = Literal["card", "list", "home", "shortcut"]


class ModalMetadata(_Codec):
    """A modal's ``private_metadata``: which bundle, and which card message to update."""

    pending_id: str = Field(alias="p", min_length=1)
    channel: str = Field(default="", alias="c")
    ts: str = Field(default="", alias="t")
    origin: ModalOrigin = Field(default="card", alias="o")
    response_url: str = Field(default="", alias="r")

    def encode(self) -> str:
        """Compact JSON, at most 3000 characters (raises CodecError otherwise)."""
        return self._encode(MAX_PRIVATE_METADATA, "private_metadata")


def parse_modal_metadata(raw: str | None) -> ModalMetadata:
    """Decode ``private_metadata``; raises CodecError on anything we did not produce."""
    return ModalMetadata._decode(raw, "private_metadata")


# ---- approval cards (tool-permission requests) ------------------------------------------------
ACTION_APPROVE = "kq_approve"  # one button per option the agent offered: "kq_approve:<index>"
ACTION_APPROVE_PATTERN = re.compile(rf"^{ACTION_APPROVE}:\d+$")  # for app.action(...)
BLOCK_TOOL = "kq_tool"  # what the agent wants to do
BLOCK_TARGET = "kq_target"  # the command (or path, destination) itself
BLOCK_WHOLE = "kq_whole"  # "Show whole command" under a shortened one
BLOCK_PART = "kq_part"  # one piece of the whole command in the full view: "kq_part:<n>"
BLOCK_CWD = "kq_cwd"  # one piece of a long working directory in the full view: "kq_cwd:<n>"
BLOCK_CUT = "kq_cut"  # Kandev cut the command: its end is unknown, allowed only in Kandev
ACTION_APPROVAL_VIEW = "kq_approval_view"  # opens an approval's full view (card, listing, Home)
CALLBACK_APPROVAL_VIEW = "kq_approval_modal"  # that view (read-only; its buttons are options)


def approve_action_id(index: int) -> str:
    return f"{ACTION_APPROVE}:{index}"


# ---- a person's own Kandev account (issue 32) --------------------------------------------------
ACTION_CONNECT = "kq_connect"  # "Connect your Kandev account" / "Reconnect": opens the modal
ACTION_DISCONNECT = "kq_disconnect"  # "Disconnect" (Home, the whoami answer): deletes the link
CALLBACK_CONNECT = "kq_connect_modal"  # the modal asking for a personal access token
CALLBACK_CONNECTED = (
    "kq_connected_modal"  # what it turns into (read-only: "Connected", "Checking…")
)
BLOCK_TOKEN = "kq_token"  # the modal's one input (its value is never echoed back)
ACTION_TOKEN = "kq_token"
BLOCK_ACCOUNT = "kq_account"  # Home's section about the person's Kandev account
#: The offer of a click made before connecting: "Send it" (or "Open the form") and "Discard".
ACTION_PARKED_SEND = "kq_parked_send"
ACTION_PARKED_DISCARD = "kq_parked_discard"


class ConnectMetadata(_Codec):
    """The connect modal's ``private_metadata``: where the person asked to connect (the
    channel, the interaction's response_url), to tell them there what comes after."""

    channel: str = Field(default="", alias="c")
    response_url: str = Field(default="", alias="r")

    def encode(self) -> str:
        """Compact JSON, at most 3000 characters (raises CodecError otherwise)."""
        return self._encode(MAX_PRIVATE_METADATA, "private_metadata")


def parse_connect_metadata(raw: str | None) -> ConnectMetadata:
    """Decode the connect modal's ``private_metadata`` ("" and "{}" are no place: the modal was
    opened where there is none, the App Home); raises CodecError on anything we did not make."""
    if not raw:
        return ConnectMetadata()
    return ConnectMetadata._decode(raw, "private_metadata")


class ParkedValue(_Codec):
    """What the buttons of the offer of a parked click carry: the item it was made on (the
    click itself stays with the bot, never in the payload)."""

    pending_id: str = Field(alias="p", min_length=1)

    def encode(self) -> str:
        """Compact JSON, at most 2000 characters (raises CodecError otherwise)."""
        return self._encode(MAX_BUTTON_VALUE, "parked click value")


def parse_parked_value(raw: str | None) -> ParkedValue:
    """Decode an offer button's ``value``; raises CodecError on anything we did not produce."""
    return ParkedValue._decode(raw, "parked click value")
