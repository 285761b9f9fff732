"""Telling one person something: an ephemeral message where they are.

Used by the Slack listeners (refusals, verdicts) and by crash recovery. An ephemeral goes to
the person in the given channel; when that is not possible (no channel, or Slack refuses it),
through the interaction's ``response_url``.
"""

from __future__ import annotations

import logging
from typing import Any

from kandev_slack.slack_api.gateway import Message, SlackError, SlackGateway

log = logging.getLogger(__name__)


class Notifier:
    def __init__(self, slack: SlackGateway) -> None:
        self.slack = slack

    def tell(
        self,
        user: str,
        text: str,
        *,
        channel: str | None = None,
        response_url: str | None = None,
        blocks: list[dict[str, Any]] | None = None,
        thread_ts: str | None = None,
    ) -> bool:
        """An ephemeral message to one person (``thread_ts``: in that thread); False when it
        could not be delivered (or there is neither a channel nor a response_url to deliver it
        through)."""
        if not text:
            return True
        if channel:
            try:
                self.slack.post_ephemeral(channel, user, text, blocks, thread_ts=thread_ts)
                return True
            except SlackError as exc:
                log.warning("ephemeral to %s in %s failed: %s", user, channel, exc.error)
        if response_url:
            try:
                self.slack.respond(response_url, text, blocks)
                return True
            except SlackError as exc:
                log.warning("response_url for %s failed: %s", user, exc.error)
        return False

    def reply(
        self, response_url: str, text: str, blocks: list[dict[str, Any]], *, replace: bool
    ) -> bool:
        """Answer through an interaction's ``response_url`` (e.g. a listing page)."""
        try:
            self.slack.respond(response_url, text, blocks, replace_original=replace)
            return True
        except SlackError as exc:
            log.warning("reply via response_url failed: %s", exc.error)
            return False

    def delete_original(self, response_url: str) -> bool:
        """Remove the (ephemeral) message an interaction came from."""
        try:
            self.slack.respond(response_url, "", delete_original=True)
            return True
        except SlackError as exc:
            log.warning("delete via response_url failed: %s", exc.error)
            return False

    def user_name(self, user_id: str) -> str | None:
        """A person's name as Slack shows it (None: Slack gave none, or could not be asked)."""
        try:
            return self.slack.user_name(user_id)
        except SlackError as exc:
            log.info("no name for %s: %s", user_id, exc.error)
            return None

    def open_form(self, trigger_id: str, view: dict[str, Any], *, push: bool = False) -> bool:
        """Open a modal for the trigger of an interaction (valid 3 s, once); ``push``: on top
        of the modal the interaction came from."""
        return self.open_view(trigger_id, view, push=push) is not None

    def open_view(self, trigger_id: str, view: dict[str, Any], *, push: bool = False) -> str | None:
        """Like :meth:`open_form`; returns the new view's id (None: not opened)."""
        try:
            if push:
                return self.slack.push_view(trigger_id, view)
            return self.slack.open_view(trigger_id, view)
        except SlackError as exc:
            log.warning("could not open a form: %s", exc.error)
            return None

    def update_view(self, view_id: str, view: dict[str, Any]) -> bool:
        """Replace an open modal; False when Slack refused (e.g. it was closed meanwhile)."""
        try:
            self.slack.update_view(view_id, view)
            return True
        except SlackError as exc:
            log.warning("could not update view %s: %s", view_id, exc.error)
            return False

    def direct(self, user: str, text: str, blocks: list[dict[str, Any]]) -> bool:
        """A direct message from the app to one person (where nothing else can reach them:
        no channel, no response_url); False when Slack refused it."""
        try:
            self.slack.post_notice(self.slack.open_dm(user), Message(text, blocks))
            return True
        except SlackError as exc:
            log.warning("direct message to %s failed: %s", user, exc.error)
            return False
