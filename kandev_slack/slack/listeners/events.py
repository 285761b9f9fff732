"""Events API: ``app_home_opened`` publishes the person's App Home tab (Bolt acks events)."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from slack_bolt import App

from kandev_slack.slack.services import Services

log = logging.getLogger(__name__)


class HomeOpened(BaseModel):
    """The ``app_home_opened`` event (``tab`` is ``home`` or ``messages``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    user: str = Field(min_length=1)
    tab: str = "home"


def register(app: App, svc: Services) -> None:
    app.event("app_home_opened")(_home_opened(svc))


def _home_opened(svc: Services):
    def handle(event: dict[str, Any]) -> None:
        try:
            opened = HomeOpened.model_validate(event)
        except ValidationError as exc:
            log.warning("refused a malformed app_home_opened event: %s", exc.errors()[0])
            return
        if opened.tab != "home":
            return
        place = svc.reading.reserve()
        if place is None:
            log.warning(
                "Home of %s not published now: busy (it is published on the next change)",
                opened.user,
            )
            return
        place.run(svc.home.opened, opened.user)

    return handle
