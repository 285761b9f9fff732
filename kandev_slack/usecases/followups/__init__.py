"""Follow-ups, while a card waits: reminders and escalation, personal subscriptions (DM cards),
the periodic worker that finds what is due, and housekeeping (unposted cards, purges)."""
