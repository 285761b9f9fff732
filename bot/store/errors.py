"""The one exception the store raises for problems of its own (bad URL, schema too new)."""

from __future__ import annotations


class StoreError(Exception):
    """A configuration or schema problem of the durable store (never carries a password)."""
