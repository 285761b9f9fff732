"""The use-cases, by flow: what the bot decides, returned as kinds (never sentences).

- ``intake/``: Kandev → Slack — find new items, route them, end cards resolved elsewhere.
- ``answering/``: Slack → Kandev — one interaction pipeline (admit, record, send, tell)
  and the gestures around it (claims, snooze, thread replies, Send to all).
- ``outbox/``: the durable Slack writes and the publisher that makes them at each channel's pace.
- ``followups/``: what happens while a card waits — reminders, escalation, subscriptions, purges.
- ``views/``: what one person reads on demand — listing, App Home, Conversation, whole views.

``audit.py`` and ``leases.py`` are shared by several flows."""
