"""A question bundle as Slack shows it (pure): its card, its question fields and its forms."""
