"""Intake, Kandev → Slack: the loops that read Kandev (push hints, full reads, the approval sweep),
each new item routed and given one card, and the cards of items resolved elsewhere ended with the
winner's answer."""
