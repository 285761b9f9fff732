"""The presenter of an approval's full view ("Show whole command" on its card, "Review and
decide…" on the listing and the App Home): opened at once from the card as stored, with the
option buttons while it waits (they go through the one click pipeline, as the card's do).

A text beyond what the view holds is also posted in the card's thread
(kandev_slack/usecases/views/whole_text.py), and the view says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kandev_slack.cards import words
from kandev_slack.cards.ids import ModalMetadata
from kandev_slack.core.domain import Card
from kandev_slack.kinds.approval.cards.view import whole_view
from kandev_slack.kinds.question.cards.modals import build_outcome_modal, build_sending_modal
from kandev_slack.kinds.registry import spec_of
from kandev_slack.slack.parsing.requests import Interaction
from kandev_slack.slack.presenters import said
from kandev_slack.slack.presenters.tell import ClickReply, Teller
from kandev_slack.slack_api.notify import Notifier
from kandev_slack.usecases.answering.admission import Where
from kandev_slack.usecases.answering.interactions import Result
from kandev_slack.usecases.answering.verdicts import Verdict
from kandev_slack.usecases.views.whole_text import WholeText


@dataclass(eq=False)
class WholeOpener:
    interaction: Interaction | None  # None: the payload was unusable (only told)
    where: Where
    notifier: Notifier
    teller: Teller
    #: None: no thread to post a long text in (the view points to Kandev).
    whole: WholeText | None
    kandev_url: str

    def now(self, result: Result) -> None:
        self.teller.result(self.where, result)

    def opened(self, card: Card) -> Callable[[], None] | None:
        """Open the full view of ``card`` (nothing to fill in later: the card holds it)."""
        interaction = self.interaction
        assert interaction is not None, "only a readable click opens a view"
        if not spec_of(card).has_whole_view:
            self.teller.tell(interaction.where, words.form_not_opened_message())
            return None
        metadata = ModalMetadata(
            pending_id=card.pending_id,
            channel=card.channel,
            ts=card.ts or "",
            origin=interaction.request.via,
            response_url=interaction.response_url,
        ).encode()
        in_thread = self.whole is not None and self.whole.in_thread(card)
        waiting = not card.state.terminal
        view = whole_view(
            card,
            kandev_url=self.kandev_url,
            metadata=metadata,
            waiting=waiting,
            in_thread=in_thread,
        )
        if self.notifier.open_view(interaction.trigger_id, view, push=interaction.in_modal) is None:
            self.teller.tell(interaction.where, words.form_not_opened_message())
        return None


@dataclass(eq=False)
class ModalClickReply(ClickReply):
    """An option chosen in the full view: told as a card click is, and the view itself turns
    into "Sending…", then how it went (a person deciding from Home sees it there)."""

    notifier: Notifier
    view_id: str

    def recorded(self) -> None:
        super().recorded()
        self.notifier.update_view(self.view_id, build_sending_modal("approve"))

    def later(self, verdict: Verdict) -> None:
        told = said.verdict(verdict)
        shown = build_outcome_modal(verdict.kind, told, verdict.action)
        if not self.notifier.update_view(self.view_id, shown) or told:
            super().later(verdict)
