"""Slack's requests in: HTTP mode's front door and server, Socket Mode links, acknowledgement
within Slack's deadline, and the bounded lanes the work behind an ack runs in."""
