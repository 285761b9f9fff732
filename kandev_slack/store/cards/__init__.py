"""Repositories of cards and what hangs off one: the card row, its copies, claims, follow-up
steps, thread replies and the kinds table."""
