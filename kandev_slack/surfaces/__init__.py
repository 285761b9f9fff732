"""Slack's surfaces, kind-neutral (pure): the ``/kandev-questions`` listing, App Home, the
Conversation modal, digests, quiet-hours and calm-DM notices, follow-up words, snooze,
subscriptions and thread-reply prompts — composed from the cards' primitives and each kind's
own renderers (``kinds.py`` finds them from the kinds' registry)."""
