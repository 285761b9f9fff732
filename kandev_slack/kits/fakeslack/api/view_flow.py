"""What happens to a modal after the user acts on it: Slack applies the app's
view_submission answer (response_action) and closes views on submit / cancel."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kandev_slack.kits.fakeslack.api.views import ViewsApi, stored_definition
from kandev_slack.kits.fakeslack.ids import view_hash
from kandev_slack.kits.fakeslack.params import ApiError

JsonDict = dict[str, Any]


class ViewFlow:
    def __init__(self, views_api: ViewsApi) -> None:
        self.views_api = views_api
        self.ctx = views_api.ctx

    @contextmanager
    def submitting(self, view_id: str) -> Iterator[None]:
        """While a submission of ``view_id`` waits for the app's ack. Slack applies the ack's
        response_action before anything the app sends after acking, so a ``views.update`` of
        the view arriving meanwhile waits for it (see ViewsApi.update)."""
        state = self.ctx.state
        with state.lock:
            state.views[view_id].submitting = True
        try:
            yield
        finally:
            with state.lock:
                state.views[view_id].submitting = False
                state.changed()

    def close(self, view_id: str, *, whole_stack: bool = False) -> None:
        state = self.ctx.state
        with state.lock:
            record = state.views.get(view_id)
            if record is None:
                return
            stack = state.modal_stacks.get(record.user, [])
            if view_id in stack:
                start = 0 if whole_stack else stack.index(view_id)
                closing = stack[start:]
                del stack[start:]
            else:
                closing = [view_id]
            for vid in closing:
                state.views[vid].is_open = False
            state.changed()

    def apply_submission_answer(self, view_id: str, answer: JsonDict | None) -> None:
        """Apply the app's ack body to the submitted view, as Slack's client would."""
        answer = answer or {}
        action = answer.get("response_action")
        state = self.ctx.state
        if action == "errors":
            return
        if action == "clear":
            self.close(view_id, whole_stack=True)
            return
        if action in ("update", "push"):
            view = answer.get("view")
            method = f"response_action={action}"
            try:
                self.ctx.check_view(method, view)
            except ApiError:
                return  # Slack shows the user an error; the view stays as it was
            assert isinstance(view, dict)
            with state.lock:
                record = state.views[view_id]
                if action == "update":
                    record.history.append(record.definition)
                    record.definition = stored_definition(view)
                    record.hash = view_hash()
                else:
                    self._push(record.user, view)
                state.changed()
            return
        self.close(view_id)

    def _push(self, user: str, view: JsonDict) -> None:
        state = self.ctx.state
        stack = state.modal_stacks.setdefault(user, [])
        record = self.views_api.new_record(
            view,
            user=user,
            opened_by="response_action=push",
            trigger=None,
            root=stack[0] if stack else None,
            previous=stack[-1] if stack else None,
        )
        record.opened_at = time.time()
        stack.append(record.id)
        state.modal_order.append(record.id)
