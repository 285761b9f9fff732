"""Thin Slack listeners, one module per kind, each with ``register(app, services)``."""

from __future__ import annotations

from slack_bolt import App

from bot.slack.listeners import actions, commands, events, shortcuts, views
from bot.slack.services import Services


def register_listeners(app: App, services: Services) -> None:
    for module in (actions, views, commands, shortcuts, events):
        module.register(app, services)
