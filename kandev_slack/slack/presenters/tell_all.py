"""The presenter of Send to all (kandev_slack/usecases/answering/groups.py): one reply per member
of the group,
each answered through the one pipeline, and one summary replacing the offer once all ended."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from kandev_slack.cards.parts import groups
from kandev_slack.core.groups import AlsoAsked
from kandev_slack.slack_api.notify import Notifier
from kandev_slack.usecases.answering.groups import (
    MemberResult,
    MemberSend,
    Offer,
    Summary,
    ToSendAll,
    member_result,
)
from kandev_slack.usecases.answering.interactions import Result
from kandev_slack.usecases.answering.verdicts import Verdict


@dataclass(eq=False)
class AnswerAll:
    """Send to all: one :class:`~kandev_slack.usecases.answering.interactions.Reply` per member
    (each answered
    through the one pipeline), acknowledged once the first is recorded (or refused), and one
    summary replacing the offer through the click's ``response_url`` once every member ended.
    A Send that changed nothing (every member answered otherwise by this person already)
    says nothing more; copies of one Send (a double click, Slack's copy, on any replica) all
    say the same: each counts the same answer already on a member, or on its way, as sent."""

    ack: Callable[[], None]
    response_url: str
    notifier: Notifier
    plan: ToSendAll
    kandev_url: str
    _results: list[MemberResult] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _submitted: bool = False
    _told: bool = False

    def member(self, send: MemberSend) -> _MemberReply:
        return _MemberReply(self, send)

    def submitted(self) -> None:
        """Every member is on its way (or refused): the summary follows once all ended."""
        with self._lock:
            self._submitted = True
        self.ack()
        self._maybe_done()

    def ended(self, result: MemberResult) -> None:
        with self._lock:
            self._results.append(result)
        self._maybe_done()

    def _maybe_done(self) -> None:
        with self._lock:
            if self._told or not self._submitted or len(self._results) < len(self.plan.sends):
                return
            self._told = True
            results = tuple(self._results)
        unmapped = tuple(
            MemberResult(card, "no_option", label=label) for card, label in self.plan.unmapped
        )
        summary = Summary(self.plan.choice, results + unmapped)
        if self.plan.sends and not summary.anything_new:
            return  # a double click or Slack's copy of the click: nothing new to say
        self._show(summary_text(summary, self.kandev_url))

    def _show(self, text: str) -> None:
        if self.response_url:
            self.notifier.reply(self.response_url, text, groups.offer_blocks_of(text), replace=True)


def summary_text(summary: Summary, kandev_url: str) -> str:
    """How Send to all went, in words (kandev_slack/cards/parts/groups.py)."""
    forbidden = [
        AlsoAsked(pending_id=r.card.pending_id, task_id=r.card.task_id, title=r.card.task.title)
        for r in summary.of("forbidden")
    ]
    return groups.answer_all_summary(
        summary.choice,
        sent=len(summary.of("sent")),
        meanwhile=[r.by_user for r in summary.of("meanwhile")],
        forbidden=forbidden,
        no_option=len(summary.of("no_option")),
        ended=len(summary.of("ended")),
        not_sent=len(summary.of("not_sent")),
        yours=len(summary.of("yours")),
        kandev_url=kandev_url,
    )


@dataclass(eq=False)
class _MemberReply:
    """One member of a Send to all, as the pipeline answers it."""

    all: AnswerAll
    send: MemberSend

    def now(self, result: Result) -> None:
        self.all.ack()
        self.all.ended(self._result(result))

    def recorded(self) -> None:
        self.all.ack()

    def later(self, verdict: Verdict) -> None:
        self.all.ended(self._result(verdict))

    def _result(self, result: Result) -> MemberResult:
        send = self.send
        return member_result(send.card, result, self.all.plan.user_id, send.answers)

    def offer(self, offer: Offer) -> None:
        return None  # an answer sent to all offers nothing more
