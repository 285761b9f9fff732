"""The one answer a submitted form gets, always within Slack's 3 seconds.

A form is answered in its ack — field errors keep it open, a refusal replaces it with the
explanation, a recorded submission with "Sending…" — when that answer is ready within the
budget, as it is in milliseconds. When it is not (a user group looked up from a slow Slack, a
busy database), the ack turns the modal into "Sending…" once the budget is spent, and the
answer, when ready, replaces it through ``views.update``: field errors then show in the form
again as the person filled it. The person never sees Slack's "trouble connecting" error, and
never two answers.
"""

from __future__ import annotations

import copy
import logging
import threading
from typing import Any

from slack_bolt import Ack

from kandev_slack.cards.wording import Action
from kandev_slack.kinds.question.cards.modals import (
    build_result_modal,
    build_sending_modal,
    refill_form,
)
from kandev_slack.slack.parsing import raw_payload
from kandev_slack.slack.transport.acks import AckBudget, refusal_errors
from kandev_slack.slack_api.notify import Notifier

log = logging.getLogger(__name__)


class FormReply:
    """Use as a context manager around the handling of one submission; then exactly one of
    :meth:`errors`, :meth:`update`, :meth:`refuse` or :meth:`sending` per submission."""

    def __init__(
        self, ack: Ack, body: dict[str, Any], notifier: Notifier, *, action: Action, budget_s: float
    ) -> None:
        self._ack = ack
        self._body = body
        self._notifier = notifier
        self._action = action
        self._lock = threading.Lock()
        self._acked = False
        self._late = False
        self._budget = AckBudget(ack, budget_s, self._budget_spent)

    def __enter__(self) -> FormReply:
        self._budget.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._budget.cancel()

    @property
    def late(self) -> bool:
        """The budget was spent: the modal shows "Sending…" and answers follow by views.update."""
        return self._late

    # ---- the answers ----------------------------------------------------------------------

    def sending(self) -> None:
        """The submission is recorded: "Sending…" until its result replaces it."""
        if self._first():
            self._ack(response_action="update", view=build_sending_modal(self._action))

    def update(self, view: dict[str, Any]) -> None:
        """Replace the modal with ``view`` (a result, a refusal)."""
        if self._first():
            self._ack(response_action="update", view=view)
        else:
            self._replace(view)

    def errors(self, errors: dict[str, str]) -> None:
        """Keep the form open with a message under each named input."""
        if self._first():
            self._ack(response_action="errors", errors=errors)
            return
        form = raw_payload.submitted_view(self._body)
        if form is None:
            self._replace(build_result_modal("Not sent", next(iter(errors.values()), "")))
            return
        values = raw_payload.state_values(self._body)
        self._replace(refill_form(copy.deepcopy(form), values, errors))

    def refuse(self, message: str) -> None:
        """Nothing was sent: a field error when the form has an input to show it on, else the
        modal turns into the explanation."""
        errors = refusal_errors(self._body, message)
        if errors:
            self.errors(errors)
        else:
            self.update(build_result_modal("Not sent", message))

    # ---- internals ------------------------------------------------------------------------

    def _first(self) -> bool:
        """True for the one answer that goes in the ack."""
        with self._lock:
            if self._acked:
                return False
            self._acked = True
        self._budget.cancel()
        return True

    def _budget_spent(self) -> None:
        with self._lock:
            if self._acked:
                return
            self._acked = self._late = True
        log.warning("a form was not answered within its ack budget: it shows 'Sending…'")
        try:
            self._ack(response_action="update", view=build_sending_modal(self._action))
        except Exception:  # the answer still follows by views.update
            log.exception("could not acknowledge a form")

    def _replace(self, view: dict[str, Any]) -> None:
        view_id = raw_payload.view_id_of(self._body)
        if not view_id or not self._notifier.update_view(view_id, view):
            log.warning("a late answer to a form could not be shown (the modal was closed?)")
