"""Kandev's agent tool-permission requests (approvals): the client, the wire models and the
reply → typed outcome table."""
