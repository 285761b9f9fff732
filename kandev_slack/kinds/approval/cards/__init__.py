"""An approval as Slack shows it (pure): its card, its row, its whole text and view."""
