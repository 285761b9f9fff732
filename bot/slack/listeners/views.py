"""Modal submissions: validate (field errors keep the modal open), submit, ack, report."""

from __future__ import annotations

import logging
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from slack_bolt import Ack, App

from bot.answers import Attempt, Verdict
from bot.cards import ids
from bot.cards.ids import CodecError, parse_modal_metadata
from bot.cards.modals import build_result_modal, parse_answer_submission, parse_reject_submission
from bot.domain import Card
from bot.messages import tampered_message, unknown_bundle_message
from bot.slack import refusals
from bot.slack.listeners.fallback import input_block_ids
from bot.slack.payloads import PayloadError, ViewSubmission, parse
from bot.slack.services import SUBMIT_BUDGET_S, Services

log = logging.getLogger(__name__)

#: Verdicts that keep the modal open with the message as a field error (nothing was sent).
_KEEP_OPEN = ("invalid", "not_recorded")


def register(app: App, svc: Services) -> None:
    app.view(ids.CALLBACK_ANSWER)(_submitted(svc, "answer"))
    app.view(ids.CALLBACK_OTHER)(_submitted(svc, "answer"))
    app.view(ids.CALLBACK_REJECT)(_submitted(svc, "reject"))
    app.view(ids.CALLBACK_RESULT)(lambda ack: ack())


def _submitted(svc: Services, action: str):
    def handle(ack: Ack, body: dict[str, Any]) -> None:
        if body.get("type") != "view_submission":
            ack()  # view_closed of one of our modals: nothing was submitted
            return
        try:
            sub = parse(ViewSubmission, body)
            meta = parse_modal_metadata(sub.view.private_metadata)
        except (PayloadError, CodecError) as exc:
            log.warning("refused a malformed view submission: %s", exc)
            _refuse_form(svc, ack, body, None, action, "malformed", tampered_message(), str(exc))
            return
        card = svc.answers.card(meta.pending_id)
        if card is None:
            _refuse_form(
                svc, ack, body, meta.pending_id, action, "unknown_bundle", unknown_bundle_message()
            )
            return
        if meta.origin == "card" and (
            card.channel != meta.channel or (card.ts and meta.ts and card.ts != meta.ts)
        ):
            # The form names another card than the one it was opened from.
            _refuse_form(
                svc,
                ack,
                body,
                meta.pending_id,
                action,
                "tampered",
                tampered_message(),
                f"metadata {meta.channel}/{meta.ts}, card {card.channel}/{card.ts}",
            )
            return
        values = sub.view.values
        if action == "reject":
            parsed = parse_reject_submission(values)
            if isinstance(parsed, dict):
                ack(response_action="errors", errors=parsed)
                return
            attempt = Attempt(
                card.pending_id, sub.user_id, "reject", f"modal:{meta.origin}", reason=parsed
            )
        else:
            try:
                parsed = parse_answer_submission(card.bundle, values)
            except ValueError as exc:  # inputs of another bundle than the metadata names
                _refuse_form(
                    svc,
                    ack,
                    body,
                    card.pending_id,
                    action,
                    "tampered",
                    tampered_message(),
                    str(exc),
                )
                return
            if isinstance(parsed, dict):
                ack(response_action="errors", errors=parsed)
                return
            attempt = Attempt(
                card.pending_id,
                sub.user_id,
                "answer",
                f"modal:{meta.origin}",
                answers=tuple(parsed),
            )

        future: Future[Verdict] = svc.executor.submit(svc.answers.submit, attempt)
        try:
            verdict = future.result(timeout=SUBMIT_BUDGET_S)
        except FutureTimeout:
            # Kandev is slow: close the modal now, report by ephemeral message when done.
            ack()
            future.add_done_callback(
                lambda f: _report(svc, card, sub.user_id, meta.response_url, f)
            )
            return
        if verdict.kind in _KEEP_OPEN:
            ack(response_action="errors", errors={_error_block(body, card): verdict.message})
            return
        ack()
        svc.tell_verdict(
            sub.user_id,
            verdict,
            channel=card.channel if card.ts else None,
            response_url=meta.response_url or None,
        )

    return handle


def _report(svc: Services, card: Card, user: str, response_url: str, future: Future) -> None:
    try:
        verdict = future.result()
    except Exception:
        log.exception("answer submission failed")
        return
    svc.tell_verdict(
        user, verdict, channel=card.channel if card.ts else None, response_url=response_url or None
    )


def _refuse_form(
    svc: Services,
    ack: Ack,
    body: dict[str, Any],
    pending_id: str | None,
    action: str,
    kind: str,
    message: str,
    detail: str = "",
) -> None:
    """Refuse a submission before anything reaches Kandev: a field error when the form has an
    input to show it on (the modal stays open), else the modal turns into the explanation."""
    view = body.get("view") if isinstance(body.get("view"), dict) else {}
    inputs = input_block_ids(view)
    if inputs:
        ack(response_action="errors", errors={inputs[0]: message})
    else:
        ack(response_action="update", view=build_result_modal("Not sent", message))
    user = refusals.user_of(body) or None
    svc.store.audit(pending_id, user, action, "slack:modal", kind, refusals.quote(detail))


def _input_blocks(body: dict[str, Any]) -> list[str]:
    blocks = ((body.get("view") or {}).get("blocks")) or []
    return [b.get("block_id", "") for b in blocks if b.get("type") == "input" and b.get("block_id")]


def _error_block(body: dict[str, Any], card: Card) -> str:
    """Where a Kandev refusal is shown: the last input (free text / reason) of the modal."""
    inputs = _input_blocks(body)
    return inputs[-1] if inputs else ids.BLOCK_REASON
