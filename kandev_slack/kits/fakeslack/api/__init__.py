"""The fake Slack's Web API methods (chat, views, directory) and their argument checks."""
