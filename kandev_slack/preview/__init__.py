"""``kandev-slack preview``: a local, Slack-like page to try the bot before creating a Slack
app. The bot runs in its production configuration against the one fake Slack (``fakeslack``);
the page shows that fake's state and sends every interaction through it, signed as Slack
signs. Kept apart from the production path: ``bot`` never imports it (``kandev_slack.cli`` does,
lazily,
for the ``preview`` command only)."""
