"""views.open / push / update / publish, with Slack's trigger_id rules (issued, unused, ≤3 s)."""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Callable
from typing import Any

from kandev_slack.kits.fakeslack.api.view_state import kept_entries
from kandev_slack.kits.fakeslack.context import SlackContext
from kandev_slack.kits.fakeslack.ids import slack_id, trigger_id, view_hash
from kandev_slack.kits.fakeslack.layout import assign_default_ids
from kandev_slack.kits.fakeslack.params import ApiError, ApiRequest
from kandev_slack.kits.fakeslack.records import ViewRecord
from kandev_slack.kits.fakeslack.store import Trigger

JsonDict = dict[str, Any]
Handler = Callable[[ApiRequest], JsonDict]
MAX_STACK = 3
#: How long Slack waits for an app to ack an interaction.
ACK_TIMEOUT_S = 3.0


def stored_definition(view: JsonDict) -> JsonDict:
    """The view as Slack keeps it: default block/action ids filled in."""
    definition = copy.deepcopy(view)
    definition["blocks"] = assign_default_ids(view.get("blocks") or [])
    return definition


class ViewsApi:
    def __init__(self, ctx: SlackContext) -> None:
        self.ctx = ctx

    def handlers(self) -> dict[str, Handler]:
        return {
            "views.open": self.open,
            "views.push": self.push,
            "views.update": self.update,
            "views.publish": self.publish,
        }

    # -- triggers -----------------------------------------------------------------------------
    def issue_trigger(self, user: str) -> str:
        tid = trigger_id()
        with self.ctx.state.lock:
            self.ctx.state.triggers[tid] = Trigger(user=user, issued_at=time.monotonic())
        return tid

    def _consume_trigger(self, tid: str) -> str:
        state = self.ctx.state
        with state.lock:
            trigger = state.triggers.get(tid)
            if trigger is None:
                raise ApiError("invalid_trigger_id")
            if trigger.used:
                raise ApiError("exchanged_trigger_id")
            if time.monotonic() - trigger.issued_at > self.ctx.trigger_ttl:
                raise ApiError("expired_trigger_id")
            trigger.used = True
            return trigger.user

    # -- helpers ------------------------------------------------------------------------------
    def _view_arg(self, req: ApiRequest) -> JsonDict:
        view = req.json_arg("view", "invalid_arguments")
        if view is None:
            raise ApiError("invalid_arguments")
        self.ctx.check_view(req.method, view)
        return view

    def new_record(
        self,
        view: JsonDict,
        *,
        user: str,
        opened_by: str,
        trigger: str | None,
        root: str | None = None,
        previous: str | None = None,
    ) -> ViewRecord:
        ws = self.ctx.workspace
        external_id = str(view.get("external_id") or "")
        state = self.ctx.state
        if external_id and any(v.external_id == external_id for v in state.views.values()):
            raise ApiError("duplicate_external_id")
        view_id = slack_id("V", 11)
        record = ViewRecord(
            id=view_id,
            team_id=ws.team_id,
            app_id=ws.app_id,
            bot_id=ws.bot_id,
            user=user,
            definition=stored_definition(view),
            hash=view_hash(),
            opened_by=opened_by,
            opened_at=time.time(),
            root_view_id=root or view_id,
            previous_view_id=previous,
            trigger_id=trigger,
            external_id=external_id,
        )
        state.views[view_id] = record
        return record

    # -- methods ------------------------------------------------------------------------------
    def open(self, req: ApiRequest) -> JsonDict:
        view = self._view_arg(req)
        if view.get("type") != "modal":
            raise ApiError("invalid_arguments")
        tid = req.text("trigger_id") or req.text("interactivity_pointer")
        if not tid:
            raise ApiError("invalid_arguments")
        state = self.ctx.state
        with state.lock:
            user = self._consume_trigger(tid)
            for old in state.view_stack(user):
                old.is_open = False
            record = self.new_record(view, user=user, opened_by=req.method, trigger=tid)
            state.modal_stacks[user] = [record.id]
            state.modal_order.append(record.id)
            state.changed()
            return {"ok": True, "view": record.to_slack()}

    def push(self, req: ApiRequest) -> JsonDict:
        view = self._view_arg(req)
        if view.get("type") != "modal":
            raise ApiError("invalid_arguments")
        tid = req.required("trigger_id")
        state = self.ctx.state
        with state.lock:
            user = self._consume_trigger(tid)
            stack = state.modal_stacks.get(user, [])
            if not stack:
                raise ApiError("not_found")
            if len(stack) >= MAX_STACK:
                raise ApiError("push_limit_reached")
            record = self.new_record(
                view,
                user=user,
                opened_by=req.method,
                trigger=tid,
                root=state.views[stack[0]].id,
                previous=stack[-1],
            )
            stack.append(record.id)
            state.modal_order.append(record.id)
            state.changed()
            return {"ok": True, "view": record.to_slack()}

    def update(self, req: ApiRequest) -> JsonDict:
        view = self._view_arg(req)
        state = self.ctx.state
        with state.lock:
            view_id, external_id = req.text("view_id"), req.text("external_id")
            if view_id:
                record = state.views.get(view_id)
            elif external_id:
                record = next(
                    (v for v in state.views.values() if v.external_id == external_id), None
                )
            else:
                raise ApiError("invalid_arguments")
            if record is not None and record.submitting:
                self._after_the_ack(record)
            if record is None or not record.is_open:
                raise ApiError("not_found")
            if view.get("type") != record.type:
                raise ApiError("invalid_arguments")
            wanted_hash = req.text("hash")
            if wanted_hash and wanted_hash != record.hash:
                raise ApiError("hash_conflict")
            new_external = str(view.get("external_id") or record.external_id)
            record.history.append(record.definition)
            record.definition = stored_definition(view)
            record.entered = kept_entries(record.entered, record.blocks)
            record.external_id = new_external
            record.hash = view_hash()
            state.changed()
            return {"ok": True, "view": record.to_slack()}

    def _after_the_ack(self, record: ViewRecord) -> None:
        """An app updating a view it was just sent a submission of has acked it: Slack has
        applied that ack (response_action) by then. Wait for the fake to apply it too (at most
        Slack's 3 s ack timeout; the lock is released meanwhile)."""
        with contextlib.suppress(TimeoutError):  # never acked: Slack left the view as it was
            self.ctx.state.wait_for(lambda: not record.submitting, ACK_TIMEOUT_S, "the ack")

    def publish(self, req: ApiRequest) -> JsonDict:
        view = self._view_arg(req)
        if view.get("type") != "home":
            raise ApiError("invalid_arguments")
        user = req.required("user_id", "invalid_arguments")
        if self.ctx.user(user) is None:
            raise ApiError("user_not_found")
        state = self.ctx.state
        with state.lock:
            current = state.views.get(state.homes.get(user, ""))
            wanted_hash = req.text("hash")
            if current is not None:
                if wanted_hash and wanted_hash != current.hash:
                    raise ApiError("hash_conflict")
                current.history.append(current.definition)
                current.definition = stored_definition(view)
                current.hash = view_hash()
                record = current
            else:
                record = self.new_record(view, user=user, opened_by=req.method, trigger=None)
                state.homes[user] = record.id
            state.changed()
            return {"ok": True, "view": record.to_slack()}
