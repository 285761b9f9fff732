"""The fake Slack's transports: its HTTP server, Socket Mode, signing, fault injection."""
