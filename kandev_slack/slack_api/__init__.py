"""The Slack Web API edge: every call the bot makes to Slack, and telling one person something."""
