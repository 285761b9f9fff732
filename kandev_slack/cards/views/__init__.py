"""Kind-neutral views (pure): the listing, App Home, Conversation, snooze, claims, groups,
subscriptions, follow-up notices and thread-reply prompts, built from the primitives above."""
