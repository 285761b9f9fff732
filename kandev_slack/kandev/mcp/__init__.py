"""Kandev's external MCP server: a client session and its pure wire parsing."""
