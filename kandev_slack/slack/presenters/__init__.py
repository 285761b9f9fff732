"""Presenters: what Slack shows one person for each kind a use-case returns (ephemeral
messages, form errors, modal updates), with the words chosen here."""
