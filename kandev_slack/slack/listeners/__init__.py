"""Thin Slack listeners, one module per kind, each with ``register(app, services)``."""

from __future__ import annotations

from slack_bolt import App

from kandev_slack.slack.listeners import (
    accounts,
    actions,
    commands,
    events,
    fallback,
    shortcuts,
    subscriptions,
    thread_replies,
    views,
)
from kandev_slack.slack.services import Services


def register_listeners(app: App, services: Services) -> None:
    for module in (
        actions,
        views,
        commands,
        shortcuts,
        events,
        subscriptions,
        thread_replies,
        accounts,
    ):
        module.register(app, services)
    # Last: its catch-alls answer whatever no listener above claims (Bolt runs the first match).
    fallback.register(app, services)
