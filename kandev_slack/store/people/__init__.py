"""Repositories of what one person set: Home viewers, subscriptions and snoozes."""
